import { describe, expect, it } from "vitest";
import type { AuditEntry } from "../ipc/bindings";
import { actionLabel, detailText, outcomeColor, resourceLabel } from "./activity";

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
    // Every action the core writes has words (the walkthrough met a raw "secret.rotate").
    expect(actionLabel(entry({ action: "secret.rotate" }))).toBe("Signing secret added");
    expect(actionLabel(entry({ action: "secret.expire" }))).toBe("Signing secret expired");
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

  // "Control plane added" did not say which; retirements showed as `retire.start` and
  // `retirement/ret_…`.
  it("names the control plane added or removed, and a retirement by what it retires", () => {
    expect(actionLabel(entry({ action: "profile.add", profile: "hung-cp" }))).toBe(
      "Control plane hung-cp added",
    );
    expect(actionLabel(entry({ action: "profile.remove", profile: "old-cp" }))).toBe(
      "Control plane old-cp removed",
    );
    const retire = entry({
      action: "retire.start",
      resource: "retirement/ret_01hx",
      detail: "PUT /v1/retirements/ret_01hx: retire target legacy-erp",
    });
    expect(actionLabel(retire)).toBe("Retirement started");
    expect(resourceLabel(retire)).toBe("target legacy-erp, retirement ret_01hx");
    expect(resourceLabel(entry({ resource: "retirement/ret_02", detail: null }))).toBe(
      "retirement ret_02",
    );
    expect(resourceLabel(entry({ resource: "finding/failing_target:target:erp" }))).toBe(
      "finding failing_target on target erp",
    );
    expect(resourceLabel(entry({ resource: "endpoint/orders" }))).toBe("endpoint orders");
  });
});
