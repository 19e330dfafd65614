import { describe, expect, it } from "vitest";
import type { Finding, Retirement } from "../ipc/bindings";
import {
  attentionCount,
  attentionNames,
  groupBySeverity,
  requestText,
  retirementNext,
  retirementStep,
} from "./recovery";

const finding = (over: Partial<Finding>): Finding => ({
  id: "failing_target:target:crm",
  class: "failing_target",
  severity: "critical",
  subject: { kind: "target", id: "crm" },
  detail: "12 deliveries in a row died",
  evidence: {},
  actions: [],
  ...over,
});

const retirement = (over: Partial<Retirement>): Retirement => ({
  id: "ret_1",
  kind: "target",
  name: "crm",
  state: "draining",
  grace_seconds: 0,
  cascade_flows: false,
  dlq: "keep",
  blockers: [],
  impact: { flows: [], pending_deliveries: 3, dlq_depth: 0, open_replays: [] },
  cascaded_flows: [],
  created_at: "2026-12-02T08:00:00Z",
  updated_at: "2026-12-02T08:00:00Z",
  history: [],
  ...over,
});

describe("recovery rules", () => {
  // The Overview said "2 problems need attention" without naming them.
  it("names the findings that need attention, most severe first, info left out", () => {
    const found = [
      finding({ id: "a", severity: "info", class: "signing_overlap_open" }),
      finding({
        id: "b",
        severity: "warning",
        class: "stalled_replay",
        subject: { kind: "replay", id: "rs_1" },
      }),
      finding({ id: "c", subject: { kind: "target", id: "legacy-erp" } }),
    ];
    expect(attentionNames(found)).toBe("Failing target legacy-erp, Stalled replay rs_1");
    const many = ["a", "b", "c", "d", "e"].map((id) =>
      finding({ id, subject: { kind: "target", id } }),
    );
    expect(attentionNames(many)).toBe(
      "Failing target a, Failing target b, Failing target c and 2 more",
    );
  });

  it("groups by severity, most severe first, and filters on every word", () => {
    const all = [
      finding({ id: "a", severity: "info", detail: "drift of one counter" }),
      finding({ id: "b" }),
      finding({ id: "c", severity: "warning", subject: { kind: "endpoint", id: "orders" } }),
    ];
    expect(groupBySeverity(all).map((g) => g.severity)).toEqual(["critical", "warning", "info"]);
    const orders = groupBySeverity(all, { text: "ENDPOINT orders", severity: "all" });
    expect(orders.flatMap((g) => g.findings.map((f) => f.id))).toEqual(["c"]);
    expect(groupBySeverity(all, { text: "", severity: "info" })[0].findings[0].id).toBe("a");
    // The badge counts what someone should act on, not the info ones.
    expect(attentionCount(all)).toBe(2);
    expect(attentionCount(undefined)).toBe(0);
  });

  it("says the exact request a fix makes", () => {
    expect(
      requestText({
        label: "Recount",
        method: "POST",
        path: "/v1/dlq/recount",
        destructive: false,
      }),
    ).toBe("POST /v1/dlq/recount");
    expect(
      requestText({
        label: "Requeue",
        method: "POST",
        path: "/v1/deliveries/dlv_1/requeue",
        body: { attempt: 2 },
        destructive: false,
      }),
    ).toBe('POST /v1/deliveries/dlv_1/requeue\n{\n  "attempt": 2\n}');
  });

  it("places a retirement on its path and says what comes next", () => {
    expect(retirementStep("draining")).toBe(0);
    expect(retirementStep("scheduled")).toBe(2);
    expect(retirementStep("deleted")).toBe(4);
    const now = Date.parse("2026-12-02T08:00:00Z");
    expect(retirementNext(retirement({ drain_eta: "2026-12-02T08:00:30Z" }), now)).toMatch(
      /Waiting for 3 pending deliveries .* \(in 30 s\)/,
    );
    expect(
      retirementNext(
        retirement({ state: "blocked", blockers: [{ kind: "flow", name: "orders-to-crm" }] }),
        now,
      ),
    ).toBe("Blocked: flow orders-to-crm. Remove or retire them, or cancel.");
    expect(retirementNext(retirement({ state: "deleted", dlq: "purge" }), now)).toMatch(/purged/);
  });
});
