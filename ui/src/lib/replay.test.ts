import { describe, expect, it } from "vitest";
import type { ReplayItemView, ReplaySessionView } from "../ipc/bindings";
import { failureSummary, itemProgress, progressOf, replayOutcome, restFilter } from "./replay";

const failedItem = (n: number, target: string, status: number | null): ReplayItemView => ({
  original_delivery_id: `dlv_o${n}`,
  delivery_id: `dlv_r${n}`,
  status: "failed",
  reason: null,
  redelivery: {
    target,
    attempts_made: 5,
    max_attempts: 5,
    next_attempt_at: null,
    error_class: status ? "http_5xx" : "timeout",
    last_status_code: status,
  },
});

const session = (over: Partial<ReplaySessionView>): ReplaySessionView => ({
  id: "rpl_1",
  status: "completed",
  selection: "10 selected deliveries",
  rate_per_s: 1,
  created_at: 0,
  cancelled_at: null,
  counts: { total: 10, succeeded: 0, failed: 10, pending: 0, cancelled: 0, skipped: 0 },
  items: [],
  ...over,
});

describe("replay outcomes", () => {
  // A replay whose re-deliveries all failed used to show a green COMPLETED and a full blue bar.
  it("a replay whose re-deliveries all failed is red, and says the target still fails", () => {
    const s = session({
      items: [
        ...[1, 2, 3, 4, 5, 6].map((n) => failedItem(n, "legacy-erp", 500)),
        ...[7, 8, 9, 10].map((n) => failedItem(n, "warehouse", null)),
      ],
    });
    expect(replayOutcome(s)).toEqual({ label: "completed: 10 failed", color: "red" });
    expect(failureSummary(s)).toBe(
      "All re-deliveries failed (legacy-erp: HTTP 500 ×6; warehouse: timeout ×4): legacy-erp, warehouse still fail. They are back in the DLQ, linked to this session.",
    );
    const p = progressOf(s, 10_000);
    expect(p.sections).toEqual({ succeeded: 0, failed: 100, cancelled: 0 });
    expect(p.rate).toBeNull();
  });

  it("mixed and clean outcomes", () => {
    const mixed = session({
      counts: { total: 4, succeeded: 3, failed: 1, pending: 0, cancelled: 0, skipped: 0 },
    });
    expect(replayOutcome(mixed)).toEqual({
      label: "completed: 3 succeeded, 1 failed",
      color: "orange",
    });
    expect(failureSummary(mixed)).toMatch(/^1 re-delivery failed: the target still fails/);
    const clean = session({
      counts: { total: 4, succeeded: 4, failed: 0, pending: 0, cancelled: 0, skipped: 0 },
    });
    expect(replayOutcome(clean).color).toBe("green");
    expect(failureSummary(clean)).toBeNull();
  });

  it("a pending item says which attempt it is on and when the next one runs", () => {
    const pending: ReplayItemView = {
      ...failedItem(1, "legacy-erp", 500),
      status: "pending",
      redelivery: {
        target: "legacy-erp",
        attempts_made: 2,
        max_attempts: 5,
        next_attempt_at: 110_000,
        error_class: "http_5xx",
        last_status_code: 500,
      },
    };
    expect(itemProgress(pending, 100_000)).toBe("pending (attempt 2/5 got HTTP 500, next in 10 s)");
    expect(itemProgress(failedItem(2, "warehouse", null))).toBe("failed: timeout after 5 attempts");
  });

  it("the rest of a trial stops where the trial began", () => {
    const filter = {
      endpoint: null,
      target: "crm",
      flow: null,
      error_class: null,
      since: null,
      until: null,
    };
    expect(restFilter({ restSessionId: "rpl_x", filter, rate: null }, 5_000).until).toBe(5_000);
    expect(
      restFilter({ restSessionId: "rpl_x", filter: { ...filter, until: 3_000 }, rate: null }, 5_000)
        .until,
    ).toBe(3_000);
  });
});
