// The Recovery page's rules, kept out of the components so they are tested alone: how
// findings are grouped and filtered, what a fix request looks like in words, and where a
// retirement stands on its way to deletion.
import type {
  DlqFilterInput,
  Finding,
  FindingClass,
  FixAction,
  ReplaySelectionInput,
  ResourceKind,
  Retirement,
  RetirementItemView,
  RetirementState,
  Severity,
} from "../ipc/bindings";

export const severityOrder: Severity[] = ["critical", "warning", "info"];

export const severityWords: Record<Severity, { label: string; color: string }> = {
  critical: { label: "Critical", color: "red" },
  warning: { label: "Warning", color: "orange" },
  info: { label: "Info", color: "blue" },
};

export const classLabels: Record<FindingClass, string> = {
  stuck_delivery: "Stuck delivery",
  edge_unreachable: "Edge unreachable",
  failing_target: "Failing target",
  disabled_endpoint_backlog: "Disabled endpoint with a backlog",
  stalled_replay: "Stalled replay",
  dlq_counter_drift: "DLQ counters drifted",
  signing_overlap_open: "Signing-secret overlap open",
  certificate_expiring: "Client certificate expiring",
  needs_attention: "Write needs attention",
  unknown_outcome: "Outcome unknown",
  stale_lease: "Stale lease",
  orphan_reference: "Orphan reference",
  drift: "Changed on the server",
  unknown: "Other",
};

/** Console-side classes: found in this machine's outbox and cache, not on the server. */
export const consoleClasses: ReadonlySet<FindingClass> = new Set<FindingClass>([
  "needs_attention",
  "unknown_outcome",
  "stale_lease",
  "orphan_reference",
  "drift",
]);

export type FindingFilter = { text: string; severity: Severity | "all" };

export const emptyFindingFilter: FindingFilter = { text: "", severity: "all" };

/** A finding matches when every word of the text is in its class, subject or detail. */
export function matches(f: Finding, filter: FindingFilter): boolean {
  if (filter.severity !== "all" && f.severity !== filter.severity) return false;
  const hay = [f.class, classLabels[f.class], f.subject.kind, f.subject.id, f.detail]
    .join(" ")
    .toLowerCase();
  return filter.text
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .every((w) => hay.includes(w));
}

/** The findings that pass the filter, by severity, most severe first; empty groups left out. */
export function groupBySeverity(
  findings: Finding[],
  filter: FindingFilter = emptyFindingFilter,
): { severity: Severity; findings: Finding[] }[] {
  return severityOrder
    .map((severity) => ({
      severity,
      findings: findings.filter((f) => f.severity === severity && matches(f, filter)),
    }))
    .filter((g) => g.findings.length > 0);
}

/** What the navigation's badge counts: findings someone should act on (not the info ones). */
export function attentionCount(findings: Finding[] | undefined): number {
  return (findings ?? []).filter((f) => f.severity !== "info").length;
}

/** The findings someone should act on, named as the Recovery page's cards title them
 * ("Failing target legacy-erp"), most severe first; past `max`, "and N more". */
export function attentionNames(findings: Finding[] | undefined, max = 3): string {
  const shown = severityOrder
    .filter((s) => s !== "info")
    .flatMap((s) => (findings ?? []).filter((f) => f.severity === s))
    .map((f) => `${classLabels[f.class]} ${f.subject.id}`);
  const more = shown.length - max;
  return more > 0 ? `${shown.slice(0, max).join(", ")} and ${more} more` : shown.join(", ");
}

/** The exact request a fix makes, as a person reads it: `POST /v1/… {json}`. */
export function requestText(a: FixAction): string {
  const body =
    a.body === undefined || a.body === null ? "" : `\n${JSON.stringify(a.body, null, 2)}`;
  return `${a.method} ${a.path}${body}`;
}

/** The states a retirement walks, in order (`blocked` only when something blocks it). */
export const retirementPath: RetirementState[] = ["draining", "disabled", "scheduled", "deleted"];

export const retirementWords: Record<RetirementState, { label: string; color: string }> = {
  blocked: { label: "Blocked", color: "red" },
  draining: { label: "Draining", color: "blue" },
  disabled: { label: "Disabled", color: "blue" },
  scheduled: { label: "Scheduled", color: "yellow" },
  deleted: { label: "Deleted", color: "gray" },
  cancelled: { label: "Cancelled", color: "gray" },
};

/** The stepper's active step: how far along `retirementPath` the retirement is. */
export function retirementStep(state: RetirementState): number {
  if (state === "blocked" || state === "cancelled") return 0;
  return retirementPath.indexOf(state) + (state === "deleted" ? 1 : 0);
}

export function isFinal(state: RetirementState): boolean {
  return state === "deleted" || state === "cancelled";
}

/** What happens next, in a sentence, with the time it is expected. */
export function retirementNext(r: Retirement, now: number): string {
  const at = (iso: string | null | undefined) =>
    iso ? new Date(iso).toLocaleTimeString() : "an unknown time";
  const left = (iso: string | null | undefined) => {
    if (!iso) return "";
    const s = Math.max(0, Math.round((Date.parse(iso) - now) / 1000));
    return s < 90 ? ` (in ${s} s)` : ` (in ${Math.round(s / 60)} min)`;
  };
  switch (r.state) {
    case "blocked":
      return `Blocked: ${r.blockers
        .map((b) => (b.name ? `${b.kind} ${b.name}` : `${b.count ?? ""} ${b.kind}`.trim()))
        .join(", ")}. Remove or retire them, or cancel.`;
    case "draining":
      return r.impact.pending_deliveries > 0
        ? `Waiting for ${r.impact.pending_deliveries} pending deliveries to finish or die; expected by ${at(r.drain_eta)}${left(r.drain_eta)}.`
        : "Drained; disabling next.";
    case "disabled":
      return "Takes no work; the grace period starts next.";
    case "scheduled":
      return `Deleted at ${at(r.delete_at)}${left(r.delete_at)} unless cancelled.`;
    case "deleted":
      return `Deleted. The record stays for the audit trail; dead deliveries were ${r.dlq === "purge" ? "purged" : "kept"}.`;
    case "cancelled":
      return "Cancelled: what the retirement disabled is enabled again; nothing was deleted.";
  }
}

/** What a fix is, for the card: a test webhook (shown as the drawer shows it, with the
 * receiver's answer), a replay (opened in the DLQ's replay dialog: dry-run count, rate, trial
 * batch), or any other keyed call. */
export type FixKind =
  | { kind: "test"; target: string }
  | { kind: "replay"; selection: ReplaySelectionInput; rate: number | null }
  | { kind: "call" };

const obj = (v: unknown): Record<string, unknown> | null =>
  v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null;

const ms = (v: unknown): number | null =>
  typeof v === "string" && !Number.isNaN(Date.parse(v)) ? Date.parse(v) : null;

const text = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);

export function fixKind(a: FixAction): FixKind {
  const test = /^\/v1\/targets\/([^/]+)\/test$/.exec(a.path);
  if (a.method === "POST" && test) return { kind: "test", target: decodeURIComponent(test[1]) };
  const body = obj(a.body);
  const selection = obj(body?.selection);
  if (a.method !== "PUT" || !a.path.startsWith("/v1/replays/") || !selection)
    return { kind: "call" };
  const rate = typeof body?.rate_per_s === "number" ? body.rate_per_s : null;
  const ids = selection.delivery_ids;
  if (Array.isArray(ids))
    return {
      kind: "replay",
      selection: { by: "ids", delivery_ids: ids.filter((i) => typeof i === "string") },
      rate,
    };
  const f = obj(selection.filter);
  if (!f) return { kind: "call" };
  const filter: DlqFilterInput = {
    endpoint: text(f.endpoint),
    target: text(f.target),
    flow: text(f.flow),
    error_class: (text(f.error_class) as DlqFilterInput["error_class"]) ?? null,
    since: ms(f.since),
    until: ms(f.until),
  };
  return { kind: "replay", selection: { by: "filter", filter }, rate };
}

/** "583 are being replayed (session diag-…)": a replay holds the finding's deliveries. */
export function replayingWords(f: Finding): string | null {
  const n = f.evidence.replaying;
  if (n == null || n <= 0) return null;
  const sessions = f.evidence.replay_sessions ?? [];
  const which = sessions.length ? ` (session ${sessions.join(", ")})` : "";
  return `${n} ${n === 1 ? "is" : "are"} being replayed${which}`;
}

/** The state of each retirement still under way, by the name of the `kind` it retires (the
 * list's badge: "Scheduled for deletion"). */
export function openRetirements(
  items: RetirementItemView[] | undefined,
  kind: ResourceKind,
): Record<string, RetirementState> {
  const out: Record<string, RetirementState> = {};
  for (const { server } of items ?? []) {
    if (server && server.kind === kind && !isFinal(server.state)) out[server.name] = server.state;
  }
  return out;
}
