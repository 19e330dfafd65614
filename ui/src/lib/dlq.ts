// DLQ explorer logic kept pure for tests: the filter <-> URL round trip, free-text matching,
// grouping by cause, and the chart series.
import type { DlqCauseView, DlqEntryView, DlqFilterInput, FailureClass } from "../ipc/bindings";

export const failureClasses: FailureClass[] = [
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

/** Serializes a view as a query string (kept in the URL hash so a view can be reopened). */
export function viewToQuery(view: DlqView): string {
  const params = new URLSearchParams();
  const f = view.filter;
  for (const key of ["endpoint", "target", "flow", "error_class"] as const) {
    const value = f[key];
    if (value) params.set(key, value);
  }
  if (f.since !== null) params.set("since", new Date(f.since).toISOString());
  if (f.until !== null) params.set("until", new Date(f.until).toISOString());
  if (view.text.trim()) params.set("q", view.text.trim());
  return params.toString();
}

/** Parses a query string back into a view; unknown or malformed values are dropped. */
export function queryToView(query: string): DlqView {
  const params = new URLSearchParams(query.startsWith("?") ? query.slice(1) : query);
  const filter = emptyFilter();
  for (const key of ["endpoint", "target", "flow"] as const) {
    const value = params.get(key);
    if (value) filter[key] = value;
  }
  const cls = params.get("error_class");
  if (cls && (failureClasses as string[]).includes(cls)) filter.error_class = cls as FailureClass;
  for (const key of ["since", "until"] as const) {
    const value = params.get(key);
    const ms = value ? Date.parse(value) : Number.NaN;
    if (!Number.isNaN(ms)) filter[key] = ms;
  }
  return { filter, text: params.get("q") ?? "" };
}

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
