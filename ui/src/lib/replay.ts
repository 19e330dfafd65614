// Replay sessions in words, kept pure for tests: the outcome (a replay whose re-deliveries all
// failed is not a success), why items failed, where a pending item stands, and the trial
// batch's plan ("the rest" of a filter replay).
import type { DlqFilterInput, ReplayItemView, ReplaySessionView } from "../ipc/bindings";
import { formatDelay } from "./timeline";

export type Outcome = { label: string; color: "blue" | "green" | "orange" | "red" | "gray" };

/** "running", "completed", "completed: 10 failed", "completed: 3 succeeded, 2 failed"… */
export function replayOutcome(s: ReplaySessionView): Outcome {
  const c = s.counts;
  if (s.status === "running") return { label: "running", color: "blue" };
  if (s.status === "cancelled") return { label: "cancelled", color: "gray" };
  if (c.failed > 0 && c.succeeded === 0)
    return { label: `completed: ${c.failed} failed`, color: "red" };
  if (c.failed > 0)
    return { label: `completed: ${c.succeeded} succeeded, ${c.failed} failed`, color: "orange" };
  if (c.total === 0) return { label: "completed: nothing replayed", color: "gray" };
  return { label: "completed", color: "green" };
}

/** A re-delivery's last answer: "HTTP 500", "timeout", or null when unknown. */
export function answerOf(item: ReplayItemView): string | null {
  const r = item.redelivery;
  if (!r) return null;
  if (r.last_status_code != null) return `HTTP ${r.last_status_code}`;
  return r.error_class;
}

/**
 * Why the failed items failed, by target and answer, e.g. "legacy-erp: HTTP 500 (6);
 * warehouse: timeout (4)". Only items whose re-delivery was read are counted.
 */
export function failureCauses(
  items: ReplayItemView[],
): { target: string; answer: string; count: number }[] {
  const counts = new Map<string, { target: string; answer: string; count: number }>();
  for (const item of items) {
    if (item.status !== "failed" || !item.redelivery) continue;
    const answer = answerOf(item) ?? "error";
    const key = `${item.redelivery.target}\u0000${answer}`;
    const seen = counts.get(key) ?? { target: item.redelivery.target, answer, count: 0 };
    seen.count += 1;
    counts.set(key, seen);
  }
  return [...counts.values()].sort((a, b) => b.count - a.count);
}

/** The targets the failed items went to, as read. */
function failedTargets(s: ReplaySessionView): string[] {
  return [...new Set(failureCauses(s.items).map((x) => x.target))];
}

/** "legacy-erp", "crm, warehouse" or "the target": where a trial's failures went. */
export function stillFailing(s: ReplaySessionView): string {
  const targets = failedTargets(s);
  return targets.length ? targets.join(", ") : "the target";
}

/** The sentence under a replay with failures: what failed and that the targets still fail. */
export function failureSummary(s: ReplaySessionView): string | null {
  const c = s.counts;
  if (c.failed === 0) return null;
  const causes = failureCauses(s.items);
  const how = causes.length
    ? ` (${causes.map((x) => `${x.target}: ${x.answer} ×${x.count}`).join("; ")})`
    : "";
  const targets = failedTargets(s);
  const still =
    targets.length === 0
      ? "the target still fails"
      : targets.length === 1
        ? `${targets[0]} still fails`
        : `${targets.join(", ")} still fail`;
  const all = c.succeeded === 0 && c.pending === 0;
  return `${all ? "All" : c.failed} ${c.failed === 1 && !all ? "re-delivery" : "re-deliveries"} failed${how}: ${still}. They are back in the DLQ, linked to this session.`;
}

/** "pending (attempt 2/5, next in 10 s)", "failed: HTTP 500 after 5 attempts", "succeeded". */
export function itemProgress(item: ReplayItemView, now = Date.now()): string {
  const r = item.redelivery;
  if (item.status === "pending") {
    if (!r) return "pending";
    if (r.attempts_made === 0) return "pending (first attempt due)";
    const next =
      r.next_attempt_at === null
        ? "in flight"
        : `next in ${formatDelay(Math.max(0, r.next_attempt_at - now))}`;
    const last = answerOf(item);
    return `pending (attempt ${r.attempts_made}/${r.max_attempts} ${last ? `got ${last}` : "failed"}, ${next})`;
  }
  if (item.status === "failed") {
    const last = answerOf(item);
    return r
      ? `failed: ${last ?? "error"} after ${r.attempts_made} ${r.attempts_made === 1 ? "attempt" : "attempts"}`
      : "failed";
  }
  return `${item.status}${item.reason ? ` (${item.reason})` : ""}`;
}

/** Finished / total, and the average rate since the session started (survives navigation). */
export function progressOf(s: ReplaySessionView, now = Date.now()) {
  const c = s.counts;
  const done = c.succeeded + c.failed + c.cancelled;
  const seconds = (now - s.created_at) / 1000;
  const rate = s.status === "running" && seconds >= 1 ? done / seconds : null;
  const left = rate && rate > 0 ? Math.ceil(c.pending / rate) : null;
  const pct = (n: number) => (c.total === 0 ? 0 : (100 * n) / c.total);
  return {
    done,
    rate,
    left,
    sections: {
      succeeded: pct(c.succeeded),
      failed: pct(c.failed),
      cancelled: pct(c.cancelled),
    },
  };
}

/** A trial batch's plan: after the trial, "the rest" is the same filter, dead before it began. */
export type TrialPlan = {
  /** The session id for the rest (the trial's is `${restSessionId}-trial`). */
  restSessionId: string;
  filter: DlqFilterInput;
  rate: number | null;
};

/**
 * The rest of a trial: the filter's dead deliveries that died before the trial started. The
 * trial's own originals have left the DLQ, and its re-deliveries that died again died after
 * the start, so neither is replayed twice.
 */
export function restFilter(plan: TrialPlan, trialCreatedAt: number): DlqFilterInput {
  const until =
    plan.filter.until === null ? trialCreatedAt : Math.min(plan.filter.until, trialCreatedAt);
  return { ...plan.filter, until };
}

const TRIALS = "switchyard-replay-trials";

type Stored = Record<string, Record<string, TrialPlan>>;

function readAll(): Stored {
  try {
    return JSON.parse(localStorage.getItem(TRIALS) ?? "{}") as Stored;
  } catch {
    return {};
  }
}

/** Remembers a trial's plan (per profile), so "Replay the rest" survives navigation. */
export function saveTrial(profile: string, trialSessionId: string, plan: TrialPlan): void {
  const all = readAll();
  all[profile] = { ...(all[profile] ?? {}), [trialSessionId]: plan };
  localStorage.setItem(TRIALS, JSON.stringify(all));
}

export function trialPlan(profile: string | undefined, trialSessionId: string): TrialPlan | null {
  if (!profile) return null;
  return readAll()[profile]?.[trialSessionId] ?? null;
}

/**
 * The list's progress column: "12/519" while it runs or once completed; for a cancelled
 * session what ran and what was withdrawn ("12 ran, 507 cancelled of 519"), never "519/519".
 */
export function progressWords(s: ReplaySessionView): string {
  const c = s.counts;
  if (s.status !== "cancelled") return `${c.succeeded + c.failed + c.cancelled}/${c.total}`;
  const ran = c.succeeded + c.failed;
  const still = c.pending > 0 ? `, ${c.pending} still finishing` : "";
  return `${ran} ran, ${c.cancelled} cancelled of ${c.total}${still}`;
}

/** "at most 10/s", or that it had none (as fast as the control plane sends). */
export function rateWords(s: ReplaySessionView): string {
  return s.rate_per_s
    ? `at most ${s.rate_per_s}/s`
    : "no rate limit (as fast as the control plane sends)";
}

/**
 * The selection in words. A trial batch is a list of ids on the server ("2 selected
 * deliveries"); this console remembers it was the first N of a filter and says so.
 */
export function selectionWords(
  s: ReplaySessionView,
  plan: TrialPlan | null,
  filterWords: (f: DlqFilterInput) => string,
): string {
  if (!plan) return s.selection;
  const of = filterWords(plan.filter) || "the whole DLQ";
  return `trial batch: the first ${s.counts.total} of ${of}`;
}
