// The DLQ entries as a virtualized table: only the rows in view (+ overscan) are in the DOM, and
// the next cursor page is fetched when the view nears the end of what is loaded. It is its own
// component so that scrolling (the virtualizer re-renders on every scroll event) renders only
// the table, and rows are memoized so those that stay in view are not rendered again.
import { Text } from "@mantine/core";
import { useVirtualizer } from "@tanstack/react-virtual";
import { memo, type ReactNode, useCallback, useEffect, useLayoutEffect, useRef } from "react";
import type { DlqEntryView } from "../../ipc/bindings";
import { anchoredScrollTop } from "../../lib/dlqWindow";
import { assignSlots } from "../../lib/rowSlots";

const ROW = 34;
// minmax(0, …): a long name never widens its column past its share, it is cut with an
// ellipsis (the whole name in the cell's tooltip), so every row stays one line of ROW px.
const COLS =
  "32px minmax(0, 170px) minmax(0, 1.3fr) minmax(0, 1fr) minmax(0, 1fr) minmax(0, 1fr) minmax(0, 80px) 52px";
const cell = {
  display: "block",
  overflow: "hidden",
  textOverflow: "ellipsis",
  whiteSpace: "nowrap",
  minWidth: 0,
} as const;
// One formatter for every row (`Date.toLocaleString` builds a new one per call, which showed
// up in the scroll benchmark); same fields as `toLocaleString()`.
const deadAt = new Intl.DateTimeFormat(undefined, {
  year: "numeric",
  month: "numeric",
  day: "numeric",
  hour: "numeric",
  minute: "numeric",
  second: "numeric",
});

const rowStyle = (start: number) =>
  ({
    position: "absolute",
    top: 0,
    left: 0,
    right: 0,
    height: ROW,
    // Fixed height, clipped: whatever a cell holds, a row never reaches into the next one.
    overflow: "hidden",
    whiteSpace: "nowrap",
    transform: `translateY(${start}px)`,
    display: "grid",
    gridTemplateColumns: COLS,
    columnGap: 12,
    alignItems: "center",
    fontSize: 13,
    borderBottom: "1px solid var(--mantine-color-default-border)",
    cursor: "pointer",
  }) as const;

type RowProps = {
  entry: DlqEntryView;
  start: number;
  selected: boolean;
  onToggle: (id: string) => void;
  onOpen: (id: string) => void;
};

/**
 * One DLQ row. Memoized: while scrolling, rows that stay in view are not rendered again, and
 * the elements of rows that leave the view are reused by the rows that enter it (keyed by slot,
 * lib/rowSlots.ts). Plain elements, not Mantine's Checkbox and UnstyledButton: those cost ~4x
 * the webview memory per row rendered and twice the frame time (`make bench-dlq-scroll`).
 */
const DlqRow = memo(function DlqRow({ entry: e, start, selected, onToggle, onOpen }: RowProps) {
  const at = deadAt.format(e.dead_at);
  const status = e.last_status_code === null ? "-" : String(e.last_status_code);
  return (
    <div data-testid="dlq-row" style={rowStyle(start)}>
      <input
        type="checkbox"
        className="dlq-check"
        checked={selected}
        aria-label="select"
        onClick={(ev) => ev.stopPropagation()}
        onChange={() => onToggle(e.delivery_id)}
      />
      <span style={cell} title={at}>
        {at}
      </span>
      <button
        type="button"
        className="dlq-open"
        onClick={() => onOpen(e.delivery_id)}
        data-testid="dlq-open"
        title={e.event_type}
      >
        {e.event_type}
      </button>
      <span style={cell} title={e.endpoint} data-testid="dlq-endpoint">
        {e.endpoint}
      </span>
      <span style={cell} title={e.flow} data-testid="dlq-flow">
        {e.flow}
      </span>
      <span style={cell} title={e.target} data-testid="dlq-target">
        {e.target}
      </span>
      <span style={cell} title={e.error_class}>
        {e.error_class}
      </span>
      <span style={cell} title={status}>
        {status}
      </span>
    </div>
  );
});

const header = ["", "Dead at", "Event type", "Endpoint", "Flow", "Target", "Error", "Status"];

export type DlqTableProps = {
  /** The kept rows (the pages in memory). */
  rows: DlqEntryView[];
  /** Placeholder rows above them: the pages dropped from memory, fetched again on the way up. */
  before?: number;
  hasNextPage: boolean;
  isFetchingNextPage: boolean;
  fetchNextPage: () => unknown;
  hasPreviousPage?: boolean;
  fetchPreviousPage?: () => unknown;
  /** Any page in flight (a second fetch would cancel it). */
  isFetching?: boolean;
  selected: Set<string>;
  onToggle: (id: string) => void;
  onOpen: (id: string) => void;
  /**
   * Shown instead of rows when there are none: why the view is empty (a sentence), or what
   * it waits for (a node) while the first page has not answered.
   */
  empty?: ReactNode;
  /** The filter and text: another view starts as if scrolling down (the next page, if any). */
  viewKey?: string;
};

/** Rows rendered beyond the view, above and below. */
const OVERSCAN = 20;
/** Rows from the end of what is kept at which the next (or previous) page is fetched. */
const AHEAD = 40;

export function DlqTable({
  rows,
  before = 0,
  hasNextPage,
  isFetchingNextPage,
  fetchNextPage,
  hasPreviousPage = false,
  fetchPreviousPage,
  isFetching = isFetchingNextPage,
  selected,
  onToggle,
  onOpen,
  empty,
  viewKey,
}: DlqTableProps) {
  const scrollRef = useRef<HTMLDivElement>(null);
  // The virtualizer sees the kept rows only; the rows dropped above are its padding. (With
  // every dropped row as an item, each page scrolled past rebuilt a measurement per row ever
  // seen: 100,000 objects a page, which kept the webview's heap growing.)
  const virtualizer = useVirtualizer({
    count: rows.length + (hasNextPage ? 1 : 0),
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW,
    overscan: OVERSCAN,
    paddingStart: before * ROW,
  });
  // Which way the person last scrolled (kept after the scroll ends, unlike the virtualizer's):
  // pages are fetched only ahead of that direction, so the window never swings back and forth.
  const up = useRef(false);
  const lastTop = useRef(0);
  const onScroll = useCallback(() => {
    const el = scrollRef.current;
    if (!el) return;
    if (el.scrollTop !== lastTop.current) up.current = el.scrollTop < lastTop.current;
    lastTop.current = el.scrollTop;
  }, []);
  // Rows came or went above the view (a page dropped or fetched again, a longer first page):
  // keep the rows in view where they were.
  const shown = useRef({ before, rows });
  useLayoutEffect(() => {
    const old = shown.current;
    shown.current = { before, rows };
    const el = scrollRef.current;
    if (!el || (old.before === before && old.rows === rows)) return;
    const top = anchoredScrollTop(old, { before, rows }, el.scrollTop, ROW);
    if (top !== null) {
      el.scrollTop = top;
      lastTop.current = el.scrollTop;
    }
  }, [before, rows]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: on another view (viewKey) only
  useEffect(() => {
    up.current = false;
  }, [viewKey]);
  // Rows are one fixed height, so the rows in view follow from the scroll position, counted
  // from the first row dropped above; items below the view (when it is in the padding) wait.
  const offset = virtualizer.scrollOffset ?? 0;
  const height = virtualizer.scrollRect?.height ?? 0;
  const items = virtualizer
    .getVirtualItems()
    .filter((v) => v.start < offset + height + OVERSCAN * ROW);
  // Row elements are recycled (lib/rowSlots.ts): keyed by slot, handed from the rows that
  // scrolled out to the rows that scrolled in.
  const slots = useRef(new Map<string, number>());
  slots.current = assignSlots(
    slots.current,
    items.flatMap((v) => (rows[v.index] ? [rows[v.index].delivery_id] : [])),
  );
  const firstIndex = Math.max(0, Math.floor(offset / ROW) - OVERSCAN);
  const lastIndex = Math.floor((offset + height) / ROW) + OVERSCAN;
  const end = before + rows.length;
  useEffect(() => {
    if (isFetching) return;
    if (hasPreviousPage && fetchPreviousPage && up.current && firstIndex <= before + AHEAD)
      fetchPreviousPage();
    else if (hasNextPage && !up.current && lastIndex >= end - AHEAD) fetchNextPage();
  }, [
    firstIndex,
    lastIndex,
    before,
    end,
    hasNextPage,
    hasPreviousPage,
    isFetching,
    fetchNextPage,
    fetchPreviousPage,
  ]);
  return (
    <>
      <div
        style={{
          display: "grid",
          gridTemplateColumns: COLS,
          columnGap: 12,
          fontWeight: 600,
          fontSize: 13,
          padding: "6px 0",
        }}
      >
        {header.map((h, i) => (
          <span key={h || i} style={cell}>
            {h}
          </span>
        ))}
      </div>
      <div
        ref={scrollRef}
        onScroll={onScroll}
        style={{ flex: 1, minHeight: 200, overflow: "auto" }}
        data-testid="dlq-scroll"
      >
        {end === 0 && !hasNextPage && typeof empty === "string" && (
          <Text size="sm" c="dimmed" p="md" data-testid="dlq-empty">
            {empty}
          </Text>
        )}
        {/* Not a sentence (the wait for the first page, say): shown as it is. */}
        {end === 0 && !hasNextPage && typeof empty !== "string" && empty}
        <div style={{ height: virtualizer.getTotalSize(), position: "relative" }}>
          {before > 0 && (
            // One block for every row dropped above, its line kept in view while it is.
            <div
              data-testid="dlq-earlier"
              style={{ position: "absolute", top: 0, left: 0, right: 0, height: before * ROW }}
            >
              <Text
                size="sm"
                c="dimmed"
                style={{ position: "sticky", top: 0, lineHeight: `${ROW}px` }}
              >
                {isFetching ? "Loading…" : `${before} earlier rows: loaded again as you scroll up`}
              </Text>
            </div>
          )}
          {items.map((v) => {
            const e = rows[v.index];
            return e ? (
              <DlqRow
                key={`slot-${slots.current.get(e.delivery_id)}`}
                entry={e}
                start={v.start}
                selected={selected.has(e.delivery_id)}
                onToggle={onToggle}
                onOpen={onOpen}
              />
            ) : (
              <div key={v.key} data-testid="dlq-loading" style={rowStyle(v.start)}>
                <Text size="sm" c="dimmed" style={{ gridColumn: "1 / -1" }}>
                  Loading more…
                </Text>
              </div>
            );
          })}
        </div>
      </div>
    </>
  );
}
