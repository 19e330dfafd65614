// The attempt timeline of a delivery drawn against the planned schedule.
import type { AttemptView, DeliveryView } from "../ipc/bindings";

export type TimelineRow = {
  number: number;
  /** The planned delay before this attempt (the schedule's base; the real one is jittered in [0, base]). */
  planned_delay_ms: number;
  /** The latest planned start: the previous attempt's end + the base delay (or creation for #1). */
  planned_by: number;
  attempt: AttemptView | null;
  /** Started later than planned (beyond the jitter window), e.g. the worker was down. */
  late: boolean;
};

export type TimelineSummary = {
  rows: TimelineRow[];
  /** What happens next, or why the delivery is in the DLQ, in words. */
  verdict: string;
};

/** Builds the timeline. `schedule` is the server's base delays in ms (from /v1/info). */
export function buildTimeline(
  d: DeliveryView,
  schedule: number[],
  now = Date.now(),
): TimelineSummary {
  const rows: TimelineRow[] = [];
  const budget = Math.max(d.max_attempts, schedule.length, d.attempts.length);
  let previousEnd = d.created_at;
  for (let i = 0; i < budget; i++) {
    const attempt = d.attempts.find((a) => a.number === i + 1) ?? null;
    const delay = schedule[i] ?? schedule[schedule.length - 1] ?? 0;
    const plannedBy = previousEnd + delay;
    const late = attempt !== null && attempt.started_at > plannedBy + 1_000;
    rows.push({ number: i + 1, planned_delay_ms: delay, planned_by: plannedBy, attempt, late });
    if (attempt) previousEnd = attempt.started_at + (attempt.duration_ms ?? 0);
    else if (i >= d.attempts.length) previousEnd = plannedBy;
  }
  return { rows, verdict: verdict(d, now) };
}

function verdict(d: DeliveryView, now: number): string {
  const last = [...d.attempts].sort((a, b) => b.number - a.number)[0];
  const lastWords = last
    ? last.status_code
      ? `the last attempt got HTTP ${last.status_code}`
      : `the last attempt failed (${last.error_class ?? "error"}${last.error ? `: ${last.error}` : ""})`
    : "no attempt was made";
  switch (d.state) {
    case "dead":
      return `In the DLQ: all ${d.attempts_made} of ${d.max_attempts} attempts failed; ${lastWords}.`;
    case "succeeded":
      return `Delivered on attempt ${last?.number ?? "?"}.`;
    case "replayed":
      return `Replayed${d.replayed_by ? ` by ${d.replayed_by}` : ""}: it left the DLQ.`;
    case "cancelled":
      return "Cancelled.";
    case "in_flight":
      return `Attempt ${d.attempts_made} is in flight.`;
    default: {
      if (d.next_attempt_at === null) return "Waiting for its next attempt.";
      const s = Math.max(0, Math.round((d.next_attempt_at - now) / 1000));
      return `Next attempt (#${d.attempts_made + 1}) in ${s} s; ${lastWords}.`;
    }
  }
}

export function formatDelay(ms: number): string {
  if (ms === 0) return "immediately";
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round(ms / 3_600_000)} h`;
}

/** The schedule's delay is a jitter ceiling (0…N), not an exact time: say "up to". */
export function plannedWords(number: number, delayMs: number): string {
  if (number === 1)
    return delayMs === 0 ? "on arrival" : `up to ${formatDelay(delayMs)} after arrival`;
  return delayMs === 0
    ? "right after the previous"
    : `up to ${formatDelay(delayMs)} after the previous`;
}
