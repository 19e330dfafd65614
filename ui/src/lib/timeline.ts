// The attempt timeline of a delivery drawn against the planned schedule, one group per hop
// (each hop of a delivery's path has its own attempt budget and schedule).
import type { AttemptView, DeliveryView, Hop } from "../ipc/bindings";

/** Deliveries are jittered ±20 % around each slot of the schedule. */
const JITTER = 0.2;

export type TimelineRow = {
  /** The attempt's number within its hop. */
  number: number;
  /** The planned delay before this attempt (the schedule's base; the real one is within ±20 %). */
  planned_delay_ms: number;
  /** The latest planned start: the hop's previous attempt's end + the base delay + 20 % (or creation for #1). */
  planned_by: number;
  attempt: AttemptView | null;
  /** Started later than planned (beyond the jitter window), e.g. the worker or edge plane was down. */
  late: boolean;
};

export type TimelineGroup = { hop: Hop; label: string; rows: TimelineRow[] };

export type TimelineSummary = {
  groups: TimelineGroup[];
  /** What happens next, or why the delivery is in the DLQ, in words. */
  verdict: string;
};

export const HOP_LABELS: Record<Hop, string> = {
  control_plane_webhook: "Control plane → webhook",
  control_plane_edge: "Control plane → edge plane",
  edge_webhook: "Edge plane → webhook",
};

/** The attempt's number within its hop (servers before per-hop budgets send 0: use the overall one). */
const hopNumber = (a: AttemptView) => a.hop_attempt || a.number;

/** The rows of one hop: its whole budget when `planned`, else only the attempts it made. */
function hopRows(
  d: DeliveryView,
  attempts: AttemptView[],
  schedule: number[],
  planned: boolean,
): TimelineRow[] {
  const rows: TimelineRow[] = [];
  const budget = planned
    ? Math.max(d.max_attempts, schedule.length, attempts.length)
    : attempts.length;
  let previousEnd = d.created_at;
  for (let i = 0; i < budget; i++) {
    const attempt = attempts.find((a) => hopNumber(a) === i + 1) ?? null;
    const delay = schedule[i] ?? schedule[schedule.length - 1] ?? 0;
    const plannedBy = previousEnd + Math.round(delay * (1 + JITTER));
    const late = attempt !== null && attempt.started_at > plannedBy + 1_000;
    rows.push({ number: i + 1, planned_delay_ms: delay, planned_by: plannedBy, attempt, late });
    if (attempt) previousEnd = attempt.started_at + (attempt.duration_ms ?? 0);
    else if (i >= attempts.length) previousEnd = plannedBy;
  }
  return rows;
}

/** Builds the timeline. `schedule` is the server's base delays in ms (from /v1/info). */
export function buildTimeline(
  d: DeliveryView,
  schedule: number[],
  now = Date.now(),
): TimelineSummary {
  const relayed = d.mode === "async_relay";
  const hops: Hop[] = relayed ? ["control_plane_edge", "edge_webhook"] : ["control_plane_webhook"];
  const ordered = [...d.attempts].sort((a, b) => a.number - b.number);
  const groups: TimelineGroup[] = [];
  for (const hop of hops) {
    const attempts = ordered.filter((a) => a.hop === hop);
    // Hand-offs to the edge plane are drawn only when one failed; the webhook hop shows its
    // whole budget.
    const planned = hop !== "control_plane_edge";
    if (!planned && attempts.length === 0) continue;
    groups.push({ hop, label: HOP_LABELS[hop], rows: hopRows(d, attempts, schedule, planned) });
  }
  return { groups, verdict: verdict(d, now) };
}

function verdict(d: DeliveryView, now: number): string {
  const last = [...d.attempts].sort((a, b) => b.number - a.number)[0];
  const lastWords = last
    ? last.status_code
      ? `the last attempt got HTTP ${last.status_code}`
      : `the last attempt failed (${last.error_class ?? "error"}${last.error ? `: ${last.error}` : ""})`
    : "no attempt was made";
  switch (d.state) {
    case "dead": {
      const hop = d.exhausted_hop;
      if (hop && d.mode === "async_relay") {
        const made = d.attempts.filter((a) => a.hop === hop).length;
        return `In the DLQ: all ${made} of ${d.max_attempts} attempts of ${HOP_LABELS[hop].toLowerCase()} failed; ${lastWords}.`;
      }
      return `In the DLQ: all ${d.attempts_made} of ${d.max_attempts} attempts failed; ${lastWords}.`;
    }
    case "succeeded":
      return `Delivered on attempt ${last ? hopNumber(last) : "?"}.`;
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

/** The schedule's delay is a slot with ±20 % jitter around it, not an exact time: say "about". */
export function plannedWords(number: number, delayMs: number): string {
  if (number === 1)
    return delayMs === 0 ? "on arrival" : `about ${formatDelay(delayMs)} after arrival (±20 %)`;
  return delayMs === 0
    ? "right after the previous"
    : `about ${formatDelay(delayMs)} after the previous (±20 %)`;
}
