import { describe, expect, it } from "vitest";
import type { AuditEntry } from "../ipc/bindings";
import { actionLabel, detailText, outcomeColor } from "./activity";

const entry = (over: Partial<AuditEntry>): AuditEntry => ({
  id: 1,
  actor: "desktop",
  at: 0,
  profile: "sandbox",
  action: "op.done",
  op_id: 1,
  resource: "endpoint/orders",
  outcome: "ok",
  detail: null,
  ...over,
});

describe("activity wording", () => {
  it("names actions in words and colours successes green, refusals red", () => {
    expect(actionLabel(entry({ action: "write.enqueue", detail: "create" }))).toBe(
      "Change queued: create",
    );
    expect(actionLabel(entry({ action: "op.done" }))).toBe("Confirmed by the control plane");
    expect(actionLabel(entry({ action: "something.new" }))).toBe("something.new");
    for (const ok of ["ok", "done", "drained"]) expect(outcomeColor(ok)).toBe("green");
    expect(outcomeColor("needs_attention")).toBe("red");
    expect(outcomeColor("incomplete")).toBe("gray");
  });

  it("says 1 attempt, not 1 attempts", () => {
    const run = entry({ action: "sync.run", detail: "1 done, 0 needs attention, 1 attempts" });
    expect(detailText(run)).toBe("1 done, 0 needs attention, 1 attempt");
    expect(
      detailText(entry({ action: "sync.run", detail: "2 done, 0 needs attention, 11 attempts" })),
    ).toBe("2 done, 0 needs attention, 11 attempts");
  });
});
