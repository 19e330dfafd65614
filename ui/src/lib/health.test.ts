import { describe, expect, it } from "vitest";
import type { HealthGroupView } from "../ipc/bindings";
import {
  durationMs,
  failingTargets,
  freshness,
  percent,
  stillFailingOutsideWindow,
} from "./health";

const g = (
  name: string,
  failures: number,
  rate: number | null,
  streak: number | null,
  failingSince: number | null = failures ? 1 : null,
): HealthGroupView => ({
  name,
  figures: {
    attempts: 10,
    successes: 10 - failures,
    failures,
    failures_by_class: [],
    success_rate: rate,
    latency_ms: null,
    buckets: [],
  },
  consecutive_failures: streak,
  failing_since: failingSince,
  last_success_at: null,
  last_failure_at: null,
  last_error_class: null,
  last_error: null,
});

describe("delivery health", () => {
  it("ranks by success rate, then the run of failures; unknowns last; no failure, no row", () => {
    const ranked = failingTargets([
      g("fine", 0, 1, 0),
      g("b", 2, 0.8, 1),
      g("a", 2, 0.8, 1),
      g("long-run", 2, 0.8, 9),
      g("worst", 9, 0.1, null),
      g("unknown-rate", 1, null, 4),
    ]);
    expect(ranked.map((x) => x.name)).toEqual(["worst", "long-run", "a", "b", "unknown-rate"]);
  });

  it("names the targets still failing from before the window", () => {
    expect(
      stillFailingOutsideWindow([g("x", 0, null, 3, 5), g("y", 1, 0.9, 1), g("z", 0, 1, 0)]),
    ).toEqual(["x"]);
  });

  it("never rounds a failure away, and absent reads as —", () => {
    expect(percent(0.9996)).toBe("99.9 %");
    expect(percent(0.973)).toBe("97.3 %");
    expect(percent(1)).toBe("100 %");
    expect(percent(0)).toBe("0 %");
    expect(percent(null)).toBe("—");
    expect(durationMs(null)).toBe("—");
    expect(durationMs(180.4)).toBe("180 ms");
    expect(durationMs(2500)).toBe("2.5 s");
  });

  it("says how fresh the figures are, and why they are old or missing", () => {
    const now = 1_000_000;
    const error = { message: "connection refused" };
    const data = {} as never;
    expect(
      freshness({ data, isError: false, error: null, dataUpdatedAt: now - 12_000 }, "sandbox", now),
    ).toEqual({ state: "fresh", text: "updated 12 s ago" });
    expect(
      freshness({ data, isError: true, error, dataUpdatedAt: now - 180_000 }, "sandbox", now),
    ).toEqual({
      state: "stale",
      text: "Last fetched 3 min ago; sandbox does not answer (connection refused)",
    });
    expect(
      freshness(
        { isError: true, error: { code: "not_found", message: "nf" } as never, dataUpdatedAt: 0 },
        "old",
        now,
      ).text,
    ).toContain("old does not report delivery metrics");
  });
});
