// DLQ explorer logic kept pure for tests: the filter <-> search params round trip, free-text
// matching, grouping by cause, and the chart series.
import type { DlqCauseView, DlqEntryView, DlqFilterInput, ErrorClass } from "../ipc/bindings";

export const failureClasses: ErrorClass[] = [
  "http_4xx",
  "http_5xx",
  "timeout",
  "connect",
  "tls",
  "forbidden_address",
];

/** The explorer's view: the server-side filter plus free text on event type / key / id. */
export type DlqView = { filter: DlqFilterInput; text: string };

export const emptyFilter = (): DlqFilterInput => ({
  endpoint: null,
  target: null,
  flow: null,
  error_class: null,
  since: null,
  until: null,
});

/**
 * The DLQ route's search params (`#/dlq?target=crm&error_class=timeout`): the filter and the
 * free text, every value a string as it stands in the URL. The names are the URL's: a link
 * made by an older build, or by the end-to-end tests (tests/e2e/health.rs reads
 * `target=<name>` in the hash), keeps working.
 */
export type DlqSearch = {
  endpoint?: string;
  target?: string;
  flow?: string;
  error_class?: ErrorClass;
  /** ISO 8601 (UTC), as `toISOString` writes it. */
  since?: string;
  until?: string;
  q?: string;
};

const isoOf = (value: unknown): string | undefined => {
  const ms = typeof value === "string" && value ? Date.parse(value) : Number.NaN;
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
};
const textOf = (value: unknown): string | undefined =>
  typeof value === "string" && value.trim() ? value.trim() : undefined;

/**
 * The route's `validateSearch`: keeps the known params in a fixed order (the URL's order),
 * drops unknown error classes, malformed times and anything else, never throws. Every known
 * key is set, `undefined` when dropped: the router lays the result over the raw params, where
 * a dropped value would otherwise stay.
 */
export function validateDlqSearch(raw: Record<string, unknown>): DlqSearch {
  const cls = raw.error_class;
  return {
    endpoint: textOf(raw.endpoint),
    target: textOf(raw.target),
    flow: textOf(raw.flow),
    error_class:
      typeof cls === "string" && (failureClasses as string[]).includes(cls)
        ? (cls as ErrorClass)
        : undefined,
    since: isoOf(raw.since),
    until: isoOf(raw.until),
    q: textOf(raw.q),
  };
}

/** The search params of a view (what the URL keeps of it). */
export function viewToSearch(view: DlqView): DlqSearch {
  const f = view.filter;
  return validateDlqSearch({
    endpoint: f.endpoint,
    target: f.target,
    flow: f.flow,
    error_class: f.error_class,
    since: f.since === null ? undefined : new Date(f.since).toISOString(),
    until: f.until === null ? undefined : new Date(f.until).toISOString(),
    q: view.text,
  });
}

/** The view of (validated) search params. */
export function searchToView(search: DlqSearch): DlqView {
  const ms = (iso: string | undefined) => (iso ? Date.parse(iso) : null);
  return {
    filter: {
      endpoint: search.endpoint ?? null,
      target: search.target ?? null,
      flow: search.flow ?? null,
      error_class: search.error_class ?? null,
      since: ms(search.since),
      until: ms(search.until),
    },
    text: search.q ?? "",
  };
}

/** A query string of search params, encoded as the router writes them (`ui/src/router.tsx`). */
export function searchToQuery(search: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(search))
    if (value !== undefined && value !== null) params.set(key, String(value));
  return params.toString();
}

/** Serializes a view as a query string (a key for the view, and what localStorage keeps). */
export const viewToQuery = (view: DlqView): string => searchToQuery(viewToSearch(view));

/** Parses a query string back into a view; unknown or malformed values are dropped. */
export const queryToView = (query: string): DlqView =>
  searchToView(
    validateDlqSearch(
      Object.fromEntries(new URLSearchParams(query.startsWith("?") ? query.slice(1) : query)),
    ),
  );

/** Whether an entry matches the free text (event type, event id, delivery id; case-insensitive). */
export function matchesText(entry: DlqEntryView, text: string): boolean {
  const needle = text.trim().toLowerCase();
  if (!needle) return true;
  return [entry.event_type, entry.event_id, entry.delivery_id].some((v) =>
    v.toLowerCase().includes(needle),
  );
}

export const isFilterEmpty = (f: DlqFilterInput) =>
  !f.endpoint && !f.target && !f.flow && !f.error_class && f.since === null && f.until === null;

/** The "by cause" matrix: rows = error class, columns = target, with totals. */
export type CauseMatrix = {
  classes: string[];
  targets: string[];
  count: (cls: string, target: string) => number;
  classTotal: Record<string, number>;
  targetTotal: Record<string, number>;
  total: number;
};

export function causeMatrix(causes: DlqCauseView[]): CauseMatrix {
  const cells = new Map<string, number>();
  const classTotal: Record<string, number> = {};
  const targetTotal: Record<string, number> = {};
  let total = 0;
  for (const c of causes) {
    cells.set(`${c.error_class}\u0000${c.target}`, c.count);
    classTotal[c.error_class] = (classTotal[c.error_class] ?? 0) + c.count;
    targetTotal[c.target] = (targetTotal[c.target] ?? 0) + c.count;
    total += c.count;
  }
  const byCount = (totals: Record<string, number>) =>
    Object.keys(totals).sort((a, b) => totals[b] - totals[a] || a.localeCompare(b));
  return {
    classes: byCount(classTotal),
    targets: byCount(targetTotal),
    count: (cls, target) => cells.get(`${cls}\u0000${target}`) ?? 0,
    classTotal,
    targetTotal,
    total,
  };
}

/** Hourly counts (server: newest first) as an oldest-first series with empty hours filled. */
export function hourlySeries(
  groups: { key: string; count: number }[],
  hours = 24,
  now = Date.now(),
): { hour: number; count: number }[] {
  const hourMs = 3_600_000;
  const end = Math.floor(now / hourMs) * hourMs;
  const counts = new Map(groups.map((g) => [Date.parse(g.key), g.count]));
  const out = [];
  for (let i = hours - 1; i >= 0; i--) {
    const hour = end - i * hourMs;
    out.push({ hour, count: counts.get(hour) ?? 0 });
  }
  return out;
}

/** Where the DLQ's last view is kept, so the page reopens on it. */
export const DLQ_VIEW_KEY = "dlq-view";

/** The search params of the DLQ's last view (none kept: no filter). */
export const storedDlqSearch = (): DlqSearch =>
  viewToSearch(queryToView(localStorage.getItem(DLQ_VIEW_KEY) ?? ""));
