import { InfiniteQueryObserver, QueryClient } from "@tanstack/react-query";
import { describe, expect, it } from "vitest";
import type { DlqEntryView, DlqPageView } from "../ipc/bindings";
import {
  anchoredScrollTop,
  fetchBackfill,
  MAX_PAGES,
  nextParam,
  previousParam,
  type WindowPage,
  type WindowParam,
  windowOptions,
  windowRows,
} from "./dlqWindow";

const LIMIT = 10;

const row = (id: string, deadAt: number): DlqEntryView => ({
  delivery_id: id,
  event_id: `evt_${id}`,
  event_type: "order.paid",
  endpoint: "orders",
  flow: "orders-to-crm",
  target: "crm",
  error_class: "http_5xx",
  last_status_code: 500,
  attempts: 5,
  dead_at: deadAt,
  replay_session: null,
});

/**
 * A DLQ like the control plane's: newest first (dead_at DESC, id DESC), pages after a keyset
 * cursor (the last row's position), `next_cursor` only when more rows follow.
 */
class FakeDlq {
  rows: DlqEntryView[] = [];
  requests = 0;
  constructor(n: number) {
    // r000 is the newest; one row per second.
    for (let i = 0; i < n; i++) this.rows.push(row(`r${String(i).padStart(3, "0")}`, 1e6 - i));
  }
  add(id: string, deadAt: number) {
    this.rows.push(row(id, deadAt));
    this.sort();
  }
  remove(...ids: string[]) {
    this.rows = this.rows.filter((r) => !ids.includes(r.delivery_id));
  }
  sort() {
    this.rows.sort((a, b) =>
      b.dead_at !== a.dead_at ? b.dead_at - a.dead_at : b.delivery_id < a.delivery_id ? -1 : 1,
    );
  }
  fetch = async (cursor: string | null): Promise<DlqPageView> => {
    this.requests++;
    const after = cursor ? (JSON.parse(cursor) as [number, string]) : null;
    const rest = after
      ? this.rows.filter(
          (r) => r.dead_at < after[0] || (r.dead_at === after[0] && r.delivery_id < after[1]),
        )
      : this.rows;
    const items = rest.slice(0, LIMIT);
    const last = items.at(-1);
    return {
      items,
      next_cursor:
        rest.length > LIMIT && last ? JSON.stringify([last.dead_at, last.delivery_id]) : null,
    };
  };
}

/** The same infinite query the hook runs, on a real QueryClient (no React). */
function windowQuery(dlq: FakeDlq) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const observer = new InfiniteQueryObserver(client, {
    queryKey: ["dlq"],
    ...windowOptions(dlq.fetch),
  });
  const unsubscribe = observer.subscribe(() => {});
  const data = () => client.getQueryData<{ pages: WindowPage[] }>(["dlq"])?.pages ?? [];
  const settle = async () => {
    for (let i = 0; i < 50 && observer.getCurrentResult().isFetching; i++)
      await new Promise((r) => setTimeout(r, 0));
  };
  return { client, observer, unsubscribe, data, settle };
}

const ids = (rows: DlqEntryView[]) => rows.map((r) => r.delivery_id);
const range = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => `r${String(from + i).padStart(3, "0")}`);

describe("the DLQ page window: params", () => {
  it("each page carries the cursor and count of every page before it", () => {
    const page0: WindowPage = {
      index: 0,
      cursor: null,
      trail: [],
      items: [row("a", 3), row("b", 2)],
      next_cursor: "c1",
      complete: true,
    };
    const p1 = nextParam(page0) as WindowParam;
    expect(p1).toEqual({ index: 1, cursor: "c1", trail: [{ cursor: null, count: 2 }] });
    const page1: WindowPage = { ...page0, ...p1, items: [row("c", 1)], next_cursor: null };
    expect(nextParam(page1)).toBeUndefined(); // the end
    expect(previousParam(page0)).toBeUndefined(); // the top
    // Going back up from page 1: page 0 from its own cursor, as a backfill.
    expect(previousParam(page1)).toEqual({ index: 0, cursor: null, trail: [], backfill: true });
    expect(windowRows([page1])).toEqual({ before: 2, rows: [row("c", 1)], firstIndex: 1 });
  });

  it("never shows a delivery twice, even if two kept pages both hold it", () => {
    const p = (index: number, items: DlqEntryView[]): WindowPage => ({
      index,
      cursor: null,
      trail: [],
      items,
      next_cursor: null,
      complete: true,
    });
    const w = windowRows([p(0, [row("a", 3), row("b", 2)]), p(1, [row("b", 2), row("c", 1)])]);
    expect(ids(w.rows)).toEqual(["a", "b", "c"]);
  });
});

describe("the DLQ page window: scrolling down and back up", () => {
  it("keeps at most MAX_PAGES pages; scrolling back up fetches every row again, in order", async () => {
    const dlq = new FakeDlq(100);
    const q = windowQuery(dlq);
    await q.settle();
    for (let i = 0; i < 8; i++) await q.observer.fetchNextPage();
    // Pages 4..8 kept; the 40 rows of pages 0..3 are placeholders of the same height.
    expect(q.data().map((p) => p.index)).toEqual([4, 5, 6, 7, 8]);
    expect(q.data()).toHaveLength(MAX_PAGES);
    let w = windowRows(q.data());
    expect(w.before).toBe(40);
    expect(ids(w.rows)).toEqual(range(40, 89));
    expect(q.observer.getCurrentResult().hasPreviousPage).toBe(true);
    // Back up to the top: each page comes back from its cursor, the bottom ones are dropped.
    // Nothing changed, so each page is one request (it ends where the kept page starts).
    const requests = dlq.requests;
    while (q.observer.getCurrentResult().hasPreviousPage) await q.observer.fetchPreviousPage();
    expect(dlq.requests - requests).toBe(4);
    expect(q.data().map((p) => p.index)).toEqual([0, 1, 2, 3, 4]);
    w = windowRows(q.data());
    expect(w.before).toBe(0);
    expect(ids(w.rows)).toEqual(range(0, 49));
    // And down again to the end: the same rows, each once.
    const seen: string[] = [];
    for (const p of q.data()) seen.push(...ids(p.items));
    while (q.observer.getCurrentResult().hasNextPage) {
      await q.observer.fetchNextPage();
      seen.push(...ids(q.data().at(-1)?.items ?? []));
    }
    expect(seen).toEqual(range(0, 99));
    expect(q.data().map((p) => p.index)).toEqual([5, 6, 7, 8, 9]);
    q.unsubscribe();
  });

  it("rows replayed away and new dead deliveries meanwhile: none lost, none twice", async () => {
    const dlq = new FakeDlq(100);
    const q = windowQuery(dlq);
    await q.settle();
    for (let i = 0; i < 8; i++) await q.observer.fetchNextPage();
    // While the view is on pages 4..8: two rows of page 3 and the first kept row are replayed
    // away, and three deliveries die (newest of all).
    dlq.remove("r035", "r036", "r040");
    dlq.add("n1", 2e6 + 3);
    dlq.add("n2", 2e6 + 2);
    dlq.add("n3", 2e6 + 1);
    while (q.observer.getCurrentResult().hasPreviousPage) await q.observer.fetchPreviousPage();
    const w = windowRows(q.data());
    expect(w.before).toBe(0);
    // Page 3 came back shorter (8 rows) and page 0 longer (13): it joins page 4 exactly. r040
    // is still shown from page 4 as it was fetched (the list is a snapshot until Refresh).
    expect(ids(w.rows)).toEqual(["n1", "n2", "n3", ...range(0, 34), ...range(37, 49)]);
    expect(q.data()[0].items).toHaveLength(13);
    expect(q.data()[3].items).toHaveLength(8);
    expect(q.data().every((p) => p.complete)).toBe(true);
    // Down again from there: forward pages from the kept cursors, each row once.
    const seen = ids(w.rows);
    while (q.observer.getCurrentResult().hasNextPage) {
      await q.observer.fetchNextPage();
      seen.push(...ids(q.data().at(-1)?.items ?? []));
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(["n1", "n2", "n3", ...range(0, 34), ...range(37, 99)]);
    q.unsubscribe();
  });

  it("a refetch of a window below the top keeps its place and joins up", async () => {
    const dlq = new FakeDlq(100);
    const q = windowQuery(dlq);
    await q.settle();
    for (let i = 0; i < 8; i++) await q.observer.fetchNextPage();
    await q.observer.fetchPreviousPage();
    await q.observer.fetchPreviousPage();
    expect(q.data().map((p) => p.index)).toEqual([2, 3, 4, 5, 6]);
    dlq.remove("r025", "r041");
    await q.observer.refetch();
    expect(q.data().map((p) => p.index)).toEqual([2, 3, 4, 5, 6]);
    const w = windowRows(q.data());
    expect(w.before).toBe(20);
    const want = range(20, 70).filter((id) => id !== "r025" && id !== "r041");
    // Page 2 (backfilled) is read up to page 3's first row; pages 3..6 forward from there.
    expect(ids(w.rows)).toEqual(want);
    q.unsubscribe();
  });

  it("more new rows above than a backfill may read: marked incomplete (the list restarts)", async () => {
    const dlq = new FakeDlq(100);
    const q = windowQuery(dlq);
    await q.settle();
    for (let i = 0; i < 8; i++) await q.observer.fetchNextPage();
    for (let i = 0; i < 60; i++) dlq.add(`n${String(i).padStart(2, "0")}`, 2e6 - i);
    while (q.observer.getCurrentResult().hasPreviousPage) await q.observer.fetchPreviousPage();
    // Page 0 needs 60 + 10 rows, more than 5 requests of 10: it does not claim to join.
    expect(q.data()[0].index).toBe(0);
    expect(q.data()[0].complete).toBe(false);
    expect(
      q
        .data()
        .slice(1)
        .every((p) => p.complete),
    ).toBe(true);
    q.unsubscribe();
  });

  it("a backfill with no kept page after it is a plain page", async () => {
    const dlq = new FakeDlq(30);
    const page = await fetchBackfill(dlq.fetch, { index: 1, cursor: null, trail: [] }, []);
    expect(ids(page.items)).toEqual(range(0, 9));
    expect(page.next_cursor).not.toBeNull();
    expect(dlq.requests).toBe(1);
  });
});

describe("scroll anchoring", () => {
  const rows = (from: number, to: number) => range(from, to).map((id, i) => row(id, -i));

  it("a page dropped above with the same count moves nothing", () => {
    const old = { before: 0, rows: rows(0, 49) };
    const next = { before: 10, rows: rows(10, 59) };
    expect(anchoredScrollTop(old, next, 20 * 34, 34)).toBeNull();
  });

  it("a page above that came back shorter or longer keeps the view on the same row", () => {
    // The view's first row is r030 (index 30 at 34 px).
    const old = { before: 20, rows: rows(20, 69) };
    // Page 1 came back with 8 rows instead of 10: everything below moves up 2 rows.
    const shorter = { before: 0, rows: [...rows(0, 9), ...rows(12, 69)] };
    expect(anchoredScrollTop(old, shorter, 30 * 34 + 5, 34)).toBe(28 * 34 + 5);
    // The first page came back 3 rows longer.
    const longer = { before: 0, rows: [...rows(900, 902), ...rows(0, 69)] };
    expect(anchoredScrollTop(old, longer, 30 * 34, 34)).toBe(33 * 34);
  });

  it("at the very top it leaves the view there, so new rows show", () => {
    const old = { before: 0, rows: rows(0, 9) };
    const next = { before: 0, rows: [...rows(900, 902), ...rows(0, 9)] };
    expect(anchoredScrollTop(old, next, 0, 34)).toBeNull();
  });

  it("skips rows that are gone to the next one still there", () => {
    const old = { before: 0, rows: rows(0, 19) };
    const next = { before: 0, rows: [...rows(0, 4), ...rows(8, 19)] };
    // r005..r007 gone: the view on r005 goes to r008's new place (index 5).
    expect(anchoredScrollTop(old, next, 5 * 34, 34)).toBe(2 * 34);
  });
});
