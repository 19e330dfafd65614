import { describe, expect, it } from "vitest";
import type { DlqEntryView } from "../ipc/bindings";
import {
  causeMatrix,
  emptyFilter,
  hourlySeries,
  matchesText,
  queryToView,
  viewToQuery,
} from "./dlq";

const entry = (over: Partial<DlqEntryView> = {}): DlqEntryView => ({
  delivery_id: "dlv_1",
  event_id: "evt_1",
  event_type: "order.paid",
  endpoint: "orders",
  flow: "orders-to-crm",
  target: "crm",
  error_class: "http_5xx",
  last_status_code: 500,
  attempts: 5,
  dead_at: 0,
  replay_session: null,
  ...over,
});

describe("DLQ filters", () => {
  it("round-trip through the URL so a view can be reopened", () => {
    const view = {
      filter: {
        ...emptyFilter(),
        target: "crm",
        error_class: "timeout" as const,
        since: Date.parse("2026-11-29T10:00:00Z"),
      },
      text: "order.paid",
    };
    const q = viewToQuery(view);
    expect(q).toBe(
      "target=crm&error_class=timeout&since=2026-11-29T10%3A00%3A00.000Z&q=order.paid",
    );
    expect(queryToView(q)).toEqual(view);
  });

  it("drop unknown classes and malformed times instead of sending them", () => {
    const v = queryToView("?error_class=boom&since=yesterday&endpoint=orders");
    expect(v.filter).toEqual({ ...emptyFilter(), endpoint: "orders" });
    expect(viewToQuery({ filter: emptyFilter(), text: "  " })).toBe("");
  });

  it("free text matches event type, event id or delivery id, case-insensitively", () => {
    expect(matchesText(entry(), "ORDER")).toBe(true);
    expect(matchesText(entry(), "evt_1")).toBe(true);
    expect(matchesText(entry(), "dlv_1")).toBe(true);
    expect(matchesText(entry(), "refund")).toBe(false);
    expect(matchesText(entry(), "")).toBe(true);
  });
});

describe("grouping by cause", () => {
  it("builds the error class × target matrix with totals, largest first", () => {
    const m = causeMatrix([
      { error_class: "http_5xx", target: "crm", count: 7 },
      { error_class: "timeout", target: "crm", count: 2 },
      { error_class: "timeout", target: "erp", count: 10 },
    ]);
    expect(m.classes).toEqual(["timeout", "http_5xx"]);
    expect(m.targets).toEqual(["erp", "crm"]);
    expect(m.count("timeout", "erp")).toBe(10);
    expect(m.count("http_5xx", "erp")).toBe(0);
    expect(m.classTotal).toEqual({ timeout: 12, http_5xx: 7 });
    expect(m.total).toBe(19);
  });

  it("fills empty hours in the volume chart, oldest first", () => {
    const now = Date.parse("2026-11-29T12:30:00Z");
    const s = hourlySeries([{ key: "2026-11-29T11:00:00Z", count: 4 }], 3, now);
    expect(s.map((p) => p.count)).toEqual([0, 4, 0]);
    expect(new Date(s[2].hour).toISOString()).toBe("2026-11-29T12:00:00.000Z");
  });
});
