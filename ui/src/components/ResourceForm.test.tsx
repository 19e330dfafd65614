import { fireEvent, screen, waitFor } from "@testing-library/react";
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
        message: "must use http or https",
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
    fireEvent.change(screen.getByTestId("field-name"), { target: { value: "ftp" } });
    fireEvent.change(screen.getByTestId("field-url"), { target: { value: "ftp://x" } });
    fireEvent.click(screen.getByTestId("form-submit"));
    expect(await screen.findByText("must use http or https")).toBeInTheDocument();
    expect(screen.getByTestId("form-op-state")).toHaveTextContent("Needs attention");
  });

  it("shows a local validation error at once, even offline", async () => {
    mockCommands({
      list_resources: none,
      list_outbox: none,
      queue_write: () => {
        throw {
          code: "invalid_input",
          message: "invalid name: must be 1-63 lowercase letters, digits or '-'",
          problem: {
            status: null,
            code: "validation_failed",
            message: "must be 1-63 lowercase letters, digits or '-'",
            transient: false,
            field: "name",
            used_by: [],
            current_version: null,
          },
        };
      },
    });
    renderUi(<ResourceForm kind="endpoint" resource={null} onDone={() => {}} />);
    fireEvent.change(screen.getByTestId("field-name"), { target: { value: "Bad Name" } });
    fireEvent.click(screen.getByTestId("form-submit"));
    expect(
      await screen.findByText("must be 1-63 lowercase letters, digits or '-'"),
    ).toBeInTheDocument();
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
