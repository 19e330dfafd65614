import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { mockCommands, outboxEntry, renderUi, resource } from "../test/render";
import { ApplyEditor } from "./ApplyEditor";
import { ThreeWay } from "./ConflictView";

describe("ApplyEditor", () => {
  it("refuses text that is not a JSON object", () => {
    mockCommands({});
    renderUi(<ApplyEditor kind="endpoint" resource={resource()} onDone={() => {}} />);
    fireEvent.change(screen.getByTestId("apply-editor"), { target: { value: "{ nope" } });
    expect(screen.getByText(/Not valid JSON/)).toBeInTheDocument();
    expect(screen.getByTestId("apply-review")).toBeDisabled();
  });

  it("diffs against the live version before queueing the apply", async () => {
    const onDone = vi.fn();
    const live = resource({ version: 5, spec: { description: "Live", event_types: [] } });
    const calls = mockCommands({
      fetch_live: () => live,
      queue_write: () => outboxEntry({ operation: "apply" }),
    });
    renderUi(<ApplyEditor kind="endpoint" resource={resource({ version: 4 })} onDone={onDone} />);
    fireEvent.change(screen.getByTestId("apply-editor"), {
      target: { value: '{"description": "Mine", "event_types": []}' },
    });
    fireEvent.click(screen.getByTestId("apply-review"));
    expect(await screen.findByText(/live version 5/)).toBeInTheDocument();
    const removed = screen.getByText(/"description": "Live"/);
    expect(removed.closest("[data-op]")).toHaveAttribute("data-op", "del");
    expect(screen.getByText(/"description": "Mine"/).closest("[data-op]")).toHaveAttribute(
      "data-op",
      "add",
    );
    fireEvent.click(screen.getByTestId("apply-queue"));
    await waitFor(() => expect(onDone).toHaveBeenCalled());
    expect(calls.find(([cmd]) => cmd === "queue_write")?.[1]).toEqual({
      profile: "sandbox",
      request: {
        kind: "endpoint",
        name: "orders",
        operation: "apply",
        spec: { description: "Mine", event_types: [] },
        base_version: 5,
      },
    });
  });
});

describe("ApplyEditor problems", () => {
  const target = resource({
    kind: "target",
    name: "erp",
    spec: { url: "https://erp.test/hook", timeout_ms: 15000, headers: {} },
  });

  // The control plane names only its first problem (spec.url); timeout 0 went unnamed.
  it("names every field the local rules refuse before anything is sent", () => {
    mockCommands({});
    renderUi(<ApplyEditor kind="target" resource={target} onDone={() => {}} />);
    fireEvent.change(screen.getByTestId("apply-editor"), {
      target: { value: '{"url": "erp", "timeout_ms": 0, "headers": {}}' },
    });
    const problems = screen.getByTestId("apply-problems");
    expect(problems).toHaveTextContent("2 fields need a fix");
    expect(problems).toHaveTextContent("spec.url is not a valid URL");
    expect(problems).toHaveTextContent("spec.timeout_ms must be between 1 and 120000");
    expect(screen.getByTestId("apply-review")).toBeDisabled();
  });

  // A refusal stayed on screen under the next, valid, diff.
  it("drops a refusal once the text changes and the diff is reviewed again", async () => {
    let refuse = true;
    mockCommands({
      fetch_live: () => target,
      queue_write: () => {
        if (refuse) {
          refuse = false;
          throw { code: "invalid_input", message: "invalid spec.url", problem: null };
        }
        return outboxEntry({ operation: "apply" });
      },
    });
    renderUi(<ApplyEditor kind="target" resource={target} onDone={() => {}} />);
    const editor = screen.getByTestId("apply-editor");
    fireEvent.change(editor, {
      target: { value: '{"url": "https://erp.test/a", "timeout_ms": 15000, "headers": {}}' },
    });
    fireEvent.click(screen.getByTestId("apply-review"));
    await screen.findByText(/live version/);
    fireEvent.click(screen.getByTestId("apply-queue"));
    expect(await screen.findByTestId("error-alert")).toHaveTextContent("invalid spec.url");
    fireEvent.click(screen.getByText("Back to editor"));
    fireEvent.change(screen.getByTestId("apply-editor"), {
      target: { value: '{"url": "https://erp.test/b", "timeout_ms": 15000, "headers": {}}' },
    });
    fireEvent.click(screen.getByTestId("apply-review"));
    await screen.findByText(/live version/);
    expect(screen.queryByTestId("error-alert")).toBeNull();
  });
});

describe("three-way conflict view", () => {
  const conflict = {
    op_id: 42,
    kind: "endpoint" as const,
    name: "orders",
    base_version: 2,
    base: { description: "Base", event_types: [] },
    mine: { description: "Mine", event_types: [] },
    theirs_version: 3,
    theirs: { description: "Theirs", event_types: [] },
    theirs_from_cache: false,
    conflicting_fields: ["description"],
  };

  it("shows base, mine and theirs, and keeping mine re-sends as a new operation", async () => {
    const onDone = vi.fn();
    const calls = mockCommands({ resolve: () => null });
    renderUi(<ThreeWay conflict={conflict} onDone={onDone} />);
    expect(screen.getByTestId("side-base")).toHaveTextContent('"description": "Base"');
    const mine = within(screen.getByTestId("side-mine"));
    expect(mine.getByText(/"description": "Mine"/).closest("[data-op]")).toHaveAttribute(
      "data-op",
      "add",
    );
    const theirs = within(screen.getByTestId("side-theirs"));
    expect(theirs.getByText(/"description": "Theirs"/).closest("[data-op]")).toHaveAttribute(
      "data-op",
      "add",
    );
    expect(screen.getByText("description")).toBeInTheDocument();
    fireEvent.click(screen.getByTestId("keep-mine"));
    await waitFor(() => expect(onDone).toHaveBeenCalled());
    expect(calls).toEqual([["resolve", { id: 42, resolution: "retry_as_new" }]]);
  });

  it("keeping theirs discards mine", async () => {
    const calls = mockCommands({ resolve: () => null });
    renderUi(<ThreeWay conflict={conflict} onDone={() => {}} />);
    fireEvent.click(screen.getByTestId("take-theirs"));
    await waitFor(() => expect(calls).toEqual([["resolve", { id: 42, resolution: "discard" }]]));
  });
});
