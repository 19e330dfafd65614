// The local audit log in words: what each action means and how its outcome should look.
import type { AuditEntry } from "../ipc/bindings";

const actions: Record<string, string> = {
  "write.enqueue": "Change queued",
  "op.done": "Confirmed by the control plane",
  "op.needs_attention": "Refused by the control plane",
  "op.retry": "Retry requested",
  "op.retry_as_new": "Retried as a new change",
  "op.discard": "Change discarded",
  "sync.run": "Sync run",
  "cache.refresh": "Local copy refreshed",
  "profile.add": "Control plane added",
  "profile.edit": "Control plane edited",
  "profile.remove": "Control plane removed",
  "replay.start": "Replay started",
  "replay.cancel": "Replay cancelled",
};

/** A person's words for an audit action; unknown actions are shown as they are. */
export function actionLabel(entry: AuditEntry): string {
  const label = actions[entry.action] ?? entry.action;
  // The enqueue's detail is the operation (create, update, …).
  return entry.action === "write.enqueue" && entry.detail ? `${label}: ${entry.detail}` : label;
}

const good = new Set(["ok", "done", "drained", "confirmed", "sent"]);
const bad = new Set(["needs_attention", "failed", "error", "unauthorized", "refused"]);

/** Green for a success, red for a failure, grey for anything in between. */
export function outcomeColor(outcome: string): "green" | "red" | "gray" {
  if (good.has(outcome)) return "green";
  if (bad.has(outcome)) return "red";
  return "gray";
}

export function outcomeLabel(outcome: string): string {
  return outcome.replaceAll("_", " ");
}

/** The detail, with the grammar of counts fixed for rows written before it was. */
export function detailText(entry: AuditEntry): string | null {
  if (!entry.detail || entry.action === "write.enqueue") return null;
  return entry.detail.replace(/\b1 (attempt|change|resource)s\b/g, "1 $1");
}
