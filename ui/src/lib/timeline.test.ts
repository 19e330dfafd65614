import { describe, expect, it } from "vitest";
import type { AttemptView, DeliveryView } from "../ipc/bindings";
import { buildTimeline, formatDelay, plannedWords } from "./timeline";

const schedule = [0, 10_000, 60_000, 600_000, 3_600_000];
const t0 = Date.parse("2026-11-29T10:00:00Z");

const attempt = (
  number: number,
  started_at: number,
  over: Partial<AttemptView> = {},
): AttemptView => ({
  id: `att_${number}`,
  number,
  hop: "control_plane_webhook",
  hop_attempt: number,
  started_at,
  duration_ms: 120,
  outcome: "failed",
  status_code: 503,
  error_class: "http_5xx",
  error: null,
  performed_by: "control-plane",
  ...over,
});

const delivery = (over: Partial<DeliveryView>): DeliveryView => ({
  id: "dlv_1",
  event_id: "evt_1",
  event_type: "order.paid",
  endpoint: "orders",
  flow: "f",
  target: "crm",
  mode: "async_inline",
  state: "pending",
  attempts_made: 0,
  max_attempts: 5,
  next_attempt_at: null,
  created_at: t0,
  dead_at: null,
  exhausted_hop: null,
  error_class: null,
  last_status_code: null,
  replay_session: null,
  replay_of: null,
  replayed_by: null,
  attempts: [],
  ...over,
});

describe("attempt timeline", () => {
  it("draws every planned attempt, what ran and when the next one is", () => {
    const d = delivery({
      attempts_made: 2,
      attempts: [attempt(1, t0), attempt(2, t0 + 6_000)],
      next_attempt_at: t0 + 40_000,
    });
    const { groups, verdict } = buildTimeline(d, schedule, t0 + 10_000);
    expect(groups.map((g) => g.hop)).toEqual(["control_plane_webhook"]);
    const rows = groups[0].rows;
    expect(rows).toHaveLength(5);
    expect(rows.map((r) => r.planned_delay_ms)).toEqual(schedule);
    expect(rows[1].attempt?.number).toBe(2);
    expect(rows[1].late).toBe(false);
    expect(rows[2].attempt).toBeNull();
    expect(verdict).toBe("Next attempt (#3) in 30 s; the last attempt got HTTP 503.");
  });

  it("flags an attempt that ran later than its schedule allows", () => {
    const d = delivery({ attempts_made: 2, attempts: [attempt(1, t0), attempt(2, t0 + 120_000)] });
    expect(buildTimeline(d, schedule).groups[0].rows[1].late).toBe(true);
  });

  it("allows each attempt its ±20 % jitter before calling it late", () => {
    const inWindow = delivery({
      attempts_made: 2,
      attempts: [attempt(1, t0), attempt(2, t0 + 11_900)],
    });
    expect(buildTimeline(inWindow, schedule).groups[0].rows[1].late).toBe(false);
    const beyond = delivery({
      attempts_made: 2,
      attempts: [attempt(1, t0), attempt(2, t0 + 13_500)],
    });
    expect(buildTimeline(beyond, schedule).groups[0].rows[1].late).toBe(true);
  });

  it("groups a relayed delivery by hop, each hop numbered on its own", () => {
    const handoff = (n: number, at: number) =>
      attempt(n, at, {
        hop: "control_plane_edge",
        hop_attempt: n,
        status_code: null,
        error_class: "connect",
        error: "no edge plane took the attempt",
      });
    const send = (number: number, hop_attempt: number, at: number) =>
      attempt(number, at, { hop: "edge_webhook", hop_attempt, performed_by: "edge:e1" });
    const attempts = [
      handoff(1, t0 + 30_000),
      handoff(2, t0 + 70_000),
      ...[1, 2, 3, 4, 5].map((n) => send(n + 2, n, t0 + 80_000 + n * 1_000)),
    ];
    const d = delivery({
      mode: "async_relay",
      state: "dead",
      attempts_made: 7,
      exhausted_hop: "edge_webhook",
      attempts,
    });
    const { groups, verdict } = buildTimeline(d, schedule);
    expect(groups.map((g) => [g.label, g.rows.length])).toEqual([
      ["Control plane → edge plane", 2],
      ["Edge plane → webhook", 5],
    ]);
    expect(groups[1].rows.map((r) => r.attempt?.number)).toEqual([3, 4, 5, 6, 7]);
    expect(groups[1].rows[0].late).toBe(true);
    expect(verdict).toBe(
      "In the DLQ: all 5 of 5 attempts of edge plane → webhook failed; the last attempt got HTTP 503.",
    );
  });

  it("leaves out the hand-off hop when every hand-off went through", () => {
    const d = delivery({
      mode: "async_relay",
      attempts_made: 1,
      attempts: [attempt(1, t0, { hop: "edge_webhook", hop_attempt: 1 })],
    });
    expect(buildTimeline(d, schedule).groups.map((g) => g.hop)).toEqual(["edge_webhook"]);
  });

  it("says why a delivery is in the DLQ", () => {
    const attempts = [0, 1, 2, 3, 4].map((i) =>
      attempt(i + 1, t0 + i * 1000, {
        status_code: null,
        error_class: "timeout",
        error: "no answer in 5000 ms",
      }),
    );
    const d = delivery({ state: "dead", attempts_made: 5, attempts });
    expect(buildTimeline(d, schedule).verdict).toBe(
      "In the DLQ: all 5 of 5 attempts failed; the last attempt failed (timeout: no answer in 5000 ms).",
    );
  });

  it("words delays like the schedule", () => {
    expect(schedule.map(formatDelay)).toEqual(["immediately", "10 s", "1 min", "10 min", "1 h"]);
  });
});

describe("plannedWords", () => {
  // A planned delay read as an exact time made on-time attempts look wrong: each attempt
  // runs within ±20 % of its slot, so it reads "about".
  it("reads the schedule's delays as slots with their jitter window", () => {
    expect(plannedWords(1, 0)).toBe("on arrival");
    expect(plannedWords(3, 10_000)).toBe("about 10 s after the previous (±20 %)");
    expect(plannedWords(2, 0)).toBe("right after the previous");
  });
});
