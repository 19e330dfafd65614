import { fireEvent, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import type { OutboxEntry, WriteRequest } from "../ipc/bindings";
import { mockCommands, outboxEntry, renderUi, resource } from "../test/render";
import { fieldOf, ResourceForm } from "./ResourceForm";

const none = () => [];

describe("ResourceForm", () => {
  it("queues a create with the spec the form describes, and shows it saved locally", async () => {
    let queued: OutboxEntry | null = null;
    const calls = mockCommands({
      list_resources: none,
      queue_write: ({ request }) => {
        queued = outboxEntry({ id: 7, kind: "target", name: request.name, state: "pending" });
        return queued;
      },
      list_outbox: () => (queued ? [queued] : []),
    });
    renderUi(<ResourceForm kind="target" resource={null} onDone={() => {}} />);
    fireEvent.change(screen.getByTestId("field-name"), { target: { value: "billing-v2" } });
    fireEvent.change(screen.getByTestId("field-url"), {
      target: { value: "https://billing.example/hook" },
    });
    fireEvent.click(screen.getByTestId("form-submit"));
    await waitFor(() =>
      expect(screen.getByTestId("form-op-state")).toHaveTextContent("Saved locally"),
    );
    const [, args] = calls.find(([cmd]) => cmd === "queue_write") ?? [];
    expect((args as { request: WriteRequest }).request).toEqual({
      kind: "target",
      name: "billing-v2",
      operation: "create",
      spec: { url: "https://billing.example/hook", timeout_ms: 15000, headers: {} },
      base_version: null,
    });
  });

  it("puts the control plane's refusal under the field its problem names", async () => {
    const refused = outboxEntry({
      id: 8,
      kind: "target",
      state: "needs_attention",
      error: {
        status: 400,
        code: "validation_failed",
        message: "is not allowed by this control plane",
        transient: false,
        field: "spec.url",
        used_by: [],
        current_version: null,
      },
    });
    mockCommands({
      list_resources: none,
      queue_write: () => ({ ...refused, state: "pending", error: null }),
      list_outbox: () => [refused],
    });
    renderUi(<ResourceForm kind="target" resource={null} onDone={() => {}} />);
    fireEvent.change(screen.getByTestId("field-name"), { target: { value: "internal" } });
    fireEvent.change(screen.getByTestId("field-url"), { target: { value: "http://10.0.0.1/x" } });
    fireEvent.click(screen.getByTestId("form-submit"));
    expect(await screen.findByText("is not allowed by this control plane")).toBeInTheDocument();
    expect(screen.getByTestId("form-op-state")).toHaveTextContent("Needs attention");
    // Fixing the field clears its error at once (it used to stay until the next answer).
    fireEvent.change(screen.getByTestId("field-url"), { target: { value: "https://example.com" } });
    await waitFor(() =>
      expect(screen.queryByText("is not allowed by this control plane")).toBeNull(),
    );
  });

  // The form used to show one error per submit, keep errors after the fix, and drop a header
  // line without a colon silently.
  it("flags every invalid field at once, before queueing, and clears each when it is edited", async () => {
    const calls = mockCommands({ list_resources: none, list_outbox: none });
    renderUi(<ResourceForm kind="target" resource={null} onDone={() => {}} />);
    fireEvent.change(screen.getByTestId("field-name"), { target: { value: "Bad Name" } });
    fireEvent.change(screen.getByTestId("field-url"), { target: { value: "ftp://x" } });
    fireEvent.change(screen.getByTestId("field-timeout"), { target: { value: "0" } });
    fireEvent.change(screen.getByTestId("field-headers"), { target: { value: "NoColonHeader" } });
    fireEvent.click(screen.getByTestId("form-submit"));
    expect(
      await screen.findByText("may contain only lowercase letters, digits and '-'"),
    ).toBeInTheDocument();
    expect(screen.getByText("must use http or https")).toBeInTheDocument();
    expect(screen.getByText("must be between 1 and 120000")).toBeInTheDocument();
    expect(screen.getByText('line 1: expected "Name: value"')).toBeInTheDocument();
    expect(screen.getByTestId("form-error-count")).toHaveTextContent("4 fields need a fix");
    expect(calls.some(([c]) => c === "queue_write")).toBe(false);
    fireEvent.change(screen.getByTestId("field-url"), { target: { value: "https://example.com" } });
    await waitFor(() => expect(screen.queryByText("must use http or https")).toBeNull());
    expect(screen.getByText('line 1: expected "Name: value"')).toBeInTheDocument();
  });

  // Event types had no local rule: a bad name and a bad event type were never flagged
  // together, and the control plane's event-type error vanished on a second submit.
  it("flags a bad event type with a bad name, and keeps it on a second submit", async () => {
    const calls = mockCommands({ list_resources: none, list_outbox: none });
    renderUi(<ResourceForm kind="endpoint" resource={null} onDone={() => {}} />);
    fireEvent.change(screen.getByTestId("field-name"), { target: { value: "Bad Name" } });
    const types = screen.getByTestId("field-event-types");
    fireEvent.change(types, { target: { value: "order created" } });
    fireEvent.keyDown(types, { key: "Enter" });
    const typeError = '"order created" must be 1-128 characters of letters, digits and . _ : - *';
    for (let submit = 0; submit < 2; submit++) {
      fireEvent.click(screen.getByTestId("form-submit"));
      expect(await screen.findByText(typeError)).toBeInTheDocument();
      expect(
        screen.getByText("may contain only lowercase letters, digits and '-'"),
      ).toBeInTheDocument();
    }
    expect(calls.some(([c]) => c === "queue_write")).toBe(false);
  });

  it("says Queued, not a spinner, once the write is saved locally", async () => {
    mockCommands({
      list_resources: none,
      queue_write: () => outboxEntry({ id: 12, state: "pending" }),
      list_outbox: () => [outboxEntry({ id: 12, state: "pending" })],
    });
    renderUi(<ResourceForm kind="endpoint" resource={null} onDone={() => {}} />);
    fireEvent.change(screen.getByTestId("field-name"), { target: { value: "offline-ep" } });
    fireEvent.click(screen.getByTestId("form-submit"));
    const submit = screen.getByTestId("form-submit");
    await waitFor(() => expect(submit).toHaveTextContent("Queued"));
    expect(submit).toBeDisabled();
    expect(submit).not.toHaveAttribute("data-loading");
  });

  it("sends an edit as a merge patch based on the version shown, and closes when confirmed", async () => {
    const onDone = vi.fn();
    let state: OutboxEntry["state"] = "pending";
    const calls = mockCommands({
      list_resources: none,
      queue_write: () => outboxEntry({ id: 11, operation: "update", state }),
      list_outbox: () => [outboxEntry({ id: 11, operation: "update", state })],
    });
    const existing = resource({ version: 4, spec: { description: "Orders", event_types: ["a"] } });
    renderUi(<ResourceForm kind="endpoint" resource={existing} onDone={onDone} />);
    fireEvent.change(screen.getByTestId("field-description"), { target: { value: "All orders" } });
    state = "done";
    fireEvent.click(screen.getByTestId("form-submit"));
    await waitFor(() => expect(onDone).toHaveBeenCalled());
    const [, args] = calls.find(([cmd]) => cmd === "queue_write") ?? [];
    expect((args as { request: WriteRequest }).request).toMatchObject({
      operation: "update",
      spec: { description: "All orders" },
      base_version: 4,
    });
  });

  it("warns that an edit of a Git-managed resource drifts from Git, and only then", async () => {
    mockCommands({
      list_resources: none,
      list_outbox: none,
      gitops_managed: () => [
        {
          kind: "endpoint",
          name: "orders",
          source: "ops-repo",
          commit: "0123456789abcdef0123",
          path: "endpoints/orders.yaml",
          created: true,
          state: "in_sync",
          changes: [],
          changed_by: null,
          changed_at: null,
        },
      ],
    });
    // Both forms read the same managed list: once it has arrived for one, it has for the other.
    renderUi(
      <>
        <ResourceForm kind="endpoint" resource={resource({ name: "orders" })} onDone={() => {}} />
        <ResourceForm kind="endpoint" resource={resource({ name: "payments" })} onDone={() => {}} />
      </>,
    );
    const warning = await screen.findByRole("alert", { name: "Managed by Git" });
    expect(warning).toHaveTextContent(
      "orders comes from endpoints/orders.yaml in ops-repo. An edit made here drifts from Git",
    );
    expect(screen.getAllByRole("alert", { name: "Managed by Git" })).toHaveLength(1);
  });
});

describe("ResourceForm selects", () => {
  it("Enter picks the only match of a searchable select", async () => {
    mockCommands({
      list_resources: ({ kind }) =>
        kind === "endpoint"
          ? [resource({ name: "audit-ep" }), resource({ name: "orders" })]
          : [resource({ kind: "target", name: "audit-tgt" })],
      list_outbox: none,
    });
    renderUi(<ResourceForm kind="flow" resource={null} onDone={() => {}} />);
    const endpoint = screen.getByTestId("field-endpoint");
    await waitFor(() => expect(endpoint).not.toBeDisabled());
    await userEvent.type(endpoint, "audit");
    await screen.findByRole("option", { name: "audit-ep" });
    await userEvent.keyboard("{Enter}");
    await waitFor(() => expect(endpoint).toHaveValue("audit-ep"));
  });
});

describe("fieldOf", () => {
  it("maps JSON paths from problem bodies to form fields", () => {
    expect(fieldOf("spec.url")).toBe("url");
    expect(fieldOf("spec.event_types[1]")).toBe("event_types");
    expect(fieldOf("spec.headers.X-Thing")).toBe("headers");
    expect(fieldOf("name")).toBe("name");
    expect(fieldOf("spec")).toBeNull();
  });
});
