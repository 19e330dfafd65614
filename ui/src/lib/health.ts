// The delivery health dashboard's logic, kept pure for tests: windows and their words, the
// failing targets' ranking, the freshness line, and how absent (null) figures read.
import type {
  DeliveryHealthView,
  ErrorClass,
  HealthGroupView,
  IpcError,
  MetricsWindow,
} from "../ipc/bindings";
import { relativeTime } from "./format";

export const windows: { value: MetricsWindow; label: string; words: string }[] = [
  { value: "15m", label: "15 m", words: "the last 15 minutes" },
  { value: "1h", label: "1 h", words: "the last hour" },
  { value: "24h", label: "24 h", words: "the last 24 hours" },
  { value: "7d", label: "7 d", words: "the last 7 days" },
];

export const isWindow = (v: unknown): v is MetricsWindow => windows.some((w) => w.value === v);

/** "the last hour". */
export const windowWords = (w: MetricsWindow) =>
  windows.find((x) => x.value === w)?.words ?? `the last ${w}`;

/** What the dashboard shows for a figure the server could not compute. */
export const ABSENT = "—";

/** A rate from 0 to 1 as "97.3 %" (at most one decimal; "100 %" only when it is exact). */
export function percent(rate: number | null | undefined): string {
  if (rate === null || rate === undefined) return ABSENT;
  const p = rate * 100;
  // Never round a failure away: 99.96 % reads as 99.9 %, not 100 %.
  const shown = p < 100 ? Math.min(99.9, Math.floor(p * 10 + 1e-6) / 10) : 100;
  return `${Number.isInteger(shown) ? shown : shown.toFixed(1)} %`;
}

export function rateColor(rate: number | null | undefined): string | undefined {
  if (rate === null || rate === undefined) return undefined;
  if (rate >= 0.99) return "green";
  if (rate >= 0.9) return "yellow";
  return "red";
}

/** "120 ms", "2.5 s"; absent when unknown. */
export function durationMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return ABSENT;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}

export const classLabels: Record<ErrorClass, string> = {
  http_4xx: "HTTP 4xx",
  http_5xx: "HTTP 5xx",
  timeout: "timeout",
  connect: "connect",
  tls: "TLS",
  forbidden_address: "forbidden address",
};

/**
 * The targets that failed in the window, worst first: lowest success rate (an unknown rate
 * after the known ones), then most consecutive failures, then by name. Targets without a
 * failure in the window are left out.
 */
export function failingTargets(groups: HealthGroupView[]): HealthGroupView[] {
  const rate = (g: HealthGroupView) => g.figures.success_rate ?? Number.POSITIVE_INFINITY;
  return groups
    .filter((g) => g.figures.failures > 0)
    .sort(
      (a, b) =>
        rate(a) - rate(b) ||
        (b.consecutive_failures ?? 0) - (a.consecutive_failures ?? 0) ||
        a.name.localeCompare(b.name),
    );
}

/** Targets whose run of failures is still open but did not fail in the window itself. */
export const stillFailingOutsideWindow = (groups: HealthGroupView[]): string[] =>
  groups
    .filter((g) => g.figures.failures === 0 && g.failing_since !== null)
    .map((g) => g.name)
    .sort();

/** The fields of the metrics query this reads. */
export type MetricsQuery = {
  data?: DeliveryHealthView;
  isError: boolean;
  error: Pick<IpcError, "message"> | null;
  dataUpdatedAt: number;
};

export type Freshness = {
  /** `fresh`: the latest refresh answered; `stale`: older figures shown, the refresh failed. */
  state: "fresh" | "stale" | "missing" | "loading";
  text: string;
};

/** The "updated 12 s ago" line, or why the figures are old or absent. */
export function freshness(q: MetricsQuery, profile: string | undefined, now: number): Freshness {
  const who = profile ?? "the control plane";
  const reason = q.error?.message ?? "no answer";
  if (q.data && !q.isError)
    return { state: "fresh", text: `updated ${relativeTime(q.dataUpdatedAt, now)}` };
  if (q.data)
    return {
      state: "stale",
      text: `Last fetched ${relativeTime(q.dataUpdatedAt, now)}; ${who} does not answer (${reason})`,
    };
  if (q.isError)
    return {
      state: "missing",
      text:
        (q.error as Partial<IpcError> | null)?.code === "not_found"
          ? `${who} does not report delivery metrics (a control plane without GET /v1/metrics/deliveries)`
          : `Not loaded: ${who} does not answer (${reason})`,
    };
  return { state: "loading", text: `asking ${who}…` };
}

/** One group's row of a resource table: "12 attempts, 3 failed in the last hour". */
export function attemptsWords(g: HealthGroupView, window: MetricsWindow): string {
  const n = g.figures.attempts;
  return `${n} ${n === 1 ? "attempt" : "attempts"}, ${g.figures.failures} failed in ${windowWords(window)}`;
}

/** The groups of a report by name (a resource table looks its rows up in it). */
export const groupsByName = (data: DeliveryHealthView | undefined): Map<string, HealthGroupView> =>
  new Map((data?.groups ?? []).map((g) => [g.name, g]));
