// The DLQ list keeps a window of pages in memory, not every page scrolled past.
//
// The server pages forward only: `GET /v1/dlq?cursor=` answers the rows after a position
// (dead_at, id) in the order newest first, and `next_cursor` is the position of a page's last
// row. So every page remembers the trail of the pages before it — each one's cursor (where it
// starts) and how many rows it had — which costs a few bytes a page. With TanStack Query's
// `maxPages`, pages dropped off the top are placeholders of the same height (the trail's
// counts), so the scroll position does not move; scrolling back up fetches the page before
// the first one kept again from its cursor ("backfill").
//
// A backfilled page must join the page after it exactly, although the DLQ may have changed
// since: rows replayed away (a range is shorter now) or new dead deliveries (the first page,
// newest first, is longer). So a backfill reads from the page's cursor until it reaches a row
// that is already kept (or one older than the first kept row), not a fixed number of rows, and
// the window never shows a delivery twice (`windowRows` drops a repeated id).
import type { InfiniteData, QueryClient, QueryKey } from "@tanstack/react-query";
import type { DlqEntryView, DlqPageView } from "../ipc/bindings";

/** Where a page starts (`null` = the top) and how many rows it had when it was fetched. */
export type TrailEntry = { cursor: string | null; count: number };

/** The page param: which page (0 = the newest rows), its cursor, and the trail before it. */
export type WindowParam = {
  index: number;
  cursor: string | null;
  trail: TrailEntry[];
  /** Fetched going back up: read until the next kept page, not one page's worth. */
  backfill?: boolean;
};

export type WindowPage = {
  index: number;
  cursor: string | null;
  /** The cursor and row count of every page before this one (`trail.length === index`). */
  trail: TrailEntry[];
  items: DlqEntryView[];
  next_cursor: string | null;
  /**
   * False when a backfill gave up before meeting the kept rows (more than `maxRequests`
   * pages appeared in between): the window cannot be joined up, so it starts again at the top.
   */
  complete: boolean;
};

/** How many pages are kept (TanStack's `maxPages`): 5 × 200 = 1,000 rows. */
export const MAX_PAGES = 5;
/** At most this many requests for one backfill (the page plus new rows above it). */
export const MAX_BACKFILL_REQUESTS = 5;

export const firstParam: WindowParam = { index: 0, cursor: null, trail: [] };

export function nextParam(last: WindowPage): WindowParam | undefined {
  if (last.next_cursor === null) return undefined;
  return {
    index: last.index + 1,
    cursor: last.next_cursor,
    trail: [...last.trail, { cursor: last.cursor, count: last.items.length }],
  };
}

export function previousParam(first: WindowPage): WindowParam | undefined {
  if (first.index === 0) return undefined;
  const i = first.index - 1;
  return {
    index: i,
    cursor: first.trail[i].cursor,
    trail: first.trail.slice(0, i),
    backfill: true,
  };
}

type Fetch = (cursor: string | null) => Promise<DlqPageView>;

/**
 * The infinite query's options over `fetch` (one server page from a cursor): forward pages
 * as they come, backfilled ones joined to the kept pages in the cache.
 */
export function windowOptions(fetch: Fetch) {
  return {
    queryFn: ({
      pageParam,
      client,
      queryKey,
    }: {
      pageParam: WindowParam;
      client: QueryClient;
      queryKey: QueryKey;
    }): Promise<WindowPage> => {
      if (!pageParam.backfill) return fetchForward(fetch, pageParam);
      const kept = client.getQueryData<InfiniteData<WindowPage, WindowParam>>(queryKey)?.pages;
      return fetchBackfill(fetch, pageParam, kept ?? []);
    },
    initialPageParam: firstParam,
    getNextPageParam: nextParam,
    getPreviousPageParam: previousParam,
    maxPages: MAX_PAGES,
  };
}

/** One page from its cursor: the rows the server answers, as they come. */
export async function fetchForward(fetch: Fetch, param: WindowParam): Promise<WindowPage> {
  const page = await fetch(param.cursor);
  return {
    index: param.index,
    cursor: param.cursor,
    trail: param.trail,
    items: page.items,
    next_cursor: page.next_cursor,
    complete: true,
  };
}

/**
 * The page `param` names, fetched to join the kept pages after it (`kept`, the cached pages):
 * from its cursor until the first row those pages hold (or one that died before their first
 * row, for when that row has left the DLQ), at most `maxRequests` requests. Without kept
 * pages after it, a plain forward fetch.
 */
export async function fetchBackfill(
  fetch: Fetch,
  param: WindowParam,
  kept: WindowPage[],
  maxRequests = MAX_BACKFILL_REQUESTS,
): Promise<WindowPage> {
  const after = kept.filter((p) => p.index > param.index).sort((a, b) => a.index - b.index);
  if (after.length === 0) return fetchForward(fetch, param);
  const known = new Set<string>();
  for (const p of after) for (const e of p.items) known.add(e.delivery_id);
  const firstKept = after.find((p) => p.items.length > 0)?.items[0];
  const items: DlqEntryView[] = [];
  let cursor = param.cursor;
  for (let request = 0; request < maxRequests; request++) {
    const page = await fetch(cursor);
    for (const e of page.items) {
      if (known.has(e.delivery_id) || (firstKept && e.dead_at < firstKept.dead_at)) {
        return joined(param, items, after[0], true);
      }
      items.push(e);
    }
    // The end, or exactly where the kept page starts (a cursor is its last row's position):
    // joined without another request.
    if (page.next_cursor === null || page.next_cursor === after[0].cursor)
      return joined(param, items, after[0], true);
    cursor = page.next_cursor;
  }
  return joined(param, items, after[0], false);
}

function joined(
  param: WindowParam,
  items: DlqEntryView[],
  next: WindowPage,
  complete: boolean,
): WindowPage {
  // The next page is the kept one, from its own cursor.
  return {
    index: param.index,
    cursor: param.cursor,
    trail: param.trail,
    items,
    next_cursor: next.cursor,
    complete,
  };
}

/**
 * What the table shows for the kept pages: `before` placeholder rows for the pages dropped
 * above (their counts from the trail, so positions do not move when a page is dropped), then
 * the kept rows, each delivery once.
 */
export function windowRows(pages: WindowPage[] | undefined): {
  before: number;
  rows: DlqEntryView[];
  firstIndex: number;
} {
  if (!pages || pages.length === 0) return { before: 0, rows: [], firstIndex: 0 };
  const first = pages[0];
  const before = first.trail.reduce((n, t) => n + t.count, 0);
  const seen = new Set<string>();
  const rows: DlqEntryView[] = [];
  for (const p of pages)
    for (const e of p.items) {
      if (seen.has(e.delivery_id)) continue;
      seen.add(e.delivery_id);
      rows.push(e);
    }
  return { before, rows, firstIndex: first.index };
}

/**
 * Scroll anchoring for the virtualised table (fixed row height): after the rows change, the
 * scrollTop that keeps the first row in view (or the first kept row after it) where it was.
 * `null` = leave it (at the very top, so new rows there show, or no row of before is left).
 */
export function anchoredScrollTop(
  old: { before: number; rows: DlqEntryView[] },
  next: { before: number; rows: DlqEntryView[] },
  scrollTop: number,
  rowHeight: number,
): number | null {
  if (scrollTop <= 0 || old.rows.length === 0) return null;
  const firstVisible = Math.floor(scrollTop / rowHeight);
  const from = Math.max(0, firstVisible - old.before);
  let index: Map<string, number> | null = null;
  for (let i = from; i < Math.min(old.rows.length, from + 50); i++) {
    if (index === null) {
      index = new Map();
      for (let j = 0; j < next.rows.length; j++) index.set(next.rows[j].delivery_id, j);
    }
    const j = index.get(old.rows[i].delivery_id);
    if (j === undefined) continue;
    const shift = (next.before + j - (old.before + i)) * rowHeight;
    return shift === 0 ? null : Math.max(0, scrollTop + shift);
  }
  return null;
}
