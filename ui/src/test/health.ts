// Delivery health fixtures: figures, a group and a report as `delivery_metrics` answers them.
import type {
  AttemptFiguresView,
  DeliveryHealthView,
  HealthGroupView,
  MetricsGroupBy,
  MetricsWindow,
} from "../ipc/bindings";

export const NOW = Date.now();
export const MIN = 60_000;

export function figures(
  attempts: number,
  failures: number,
  over: Partial<AttemptFiguresView> = {},
): AttemptFiguresView {
  return {
    attempts,
    successes: attempts - failures,
    failures,
    failures_by_class: failures ? [{ error_class: "http_5xx", count: failures }] : [],
    success_rate: attempts ? (attempts - failures) / attempts : null,
    latency_ms: attempts ? { p50: 20, p95: 180, p99: 900 } : null,
    buckets: [0, 1, 2].map((i) => ({
      start: NOW - (3 - i) * 2 * MIN,
      attempts: Math.round(attempts / 3),
      failures: Math.round(failures / 3),
      p95_ms: attempts ? 180 : null,
    })),
    ...over,
  };
}

export function group(
  name: string,
  attempts: number,
  failures: number,
  over: Partial<HealthGroupView> = {},
): HealthGroupView {
  const failing = failures > 0;
  return {
    name,
    figures: figures(attempts, failures),
    consecutive_failures: failing ? failures : 0,
    failing_since: failing ? NOW - 7 * MIN : null,
    last_success_at: NOW - 8 * MIN,
    last_failure_at: failing ? NOW - MIN : null,
    last_error_class: failing ? "http_5xx" : null,
    last_error: failing ? "503 Service Unavailable from https://crm.example/hooks" : null,
    ...over,
  };
}

export function report(
  window: MetricsWindow,
  groupBy: MetricsGroupBy,
  groups: HealthGroupView[],
): DeliveryHealthView {
  return {
    window,
    group_by: groupBy,
    since: NOW - 60 * MIN,
    until: NOW,
    bucket_seconds: 120,
    totals: {
      events_accepted: 25,
      figures: figures(40, 10),
      deliveries_pending: 3,
      deliveries_in_flight: 1,
      oldest_pending_at: NOW - 4 * MIN,
      dead: 40,
      replays_running: 1,
    },
    groups,
  };
}
