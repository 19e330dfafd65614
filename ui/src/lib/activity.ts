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
  "profile.agents": "Agent access changed",
  "replay.start": "Replay started",
  "replay.cancel": "Replay cancelled",
  "retire.start": "Retirement started",
  "retire.cancel": "Retirement cancelled",
  "recovery.fix": "Fix queued",
  "rotation.start": "Credential rotation started",
  "rotation.stage": "New credential staged",
  "rotation.verify": "New credential tested",
  "rotation.promote": "New credential promoted",
  "rotation.rollback": "Rotation rolled back",
  "rotation.settle": "Rotation settled",
  "cert.upload": "Client certificate uploaded",
  "cert.activate": "Client certificate activated",
  "target.test": "Test webhook sent",
  "gitops.apply": "GitOps apply",
  "gitops.source_remove": "GitOps source removed",
  "op.adopt": "Change taken over",
  "op.release_lease": "Change released",
  "secret.rotate": "Signing secret added",
  "secret.expire": "Signing secret expired",
  "secret.lost": "First signing secret no longer retrievable",
  "mcp.call": "Agent call (MCP)",
};

/** What happened to a control plane, with its name (the row's profile). */
const planeActions: Record<string, string> = {
  "profile.add": "added",
  "profile.edit": "edited",
  "profile.remove": "removed",
};

/** A person's words for an audit action; unknown actions are shown as they are. */
export function actionLabel(entry: AuditEntry): string {
  const plane = planeActions[entry.action];
  if (plane && entry.profile) return `Control plane ${entry.profile} ${plane}`;
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

/** The row's subject in words: a retirement by what it retires ("target legacy-erp,
 * retirement ret_…", from the request's label in the detail), a finding by its class and
 * subject ("finding failing_target on target erp"); a resource (`kind/name`) as `kind name`. */
export function resourceLabel(entry: AuditEntry): string {
  const r = entry.resource ?? "";
  const slash = r.indexOf("/");
  if (slash < 0) return r;
  const [kind, id] = [r.slice(0, slash), r.slice(slash + 1)];
  if (kind === "retirement") {
    const what = /: retire (\S+) (\S+)$/.exec(entry.detail ?? "");
    return what ? `${what[1]} ${what[2]}, retirement ${id}` : `retirement ${id}`;
  }
  if (kind === "finding") {
    const [cls, subjectKind, ...subject] = id.split(":");
    return subject.length
      ? `finding ${cls} on ${subjectKind} ${subject.join(":")}`
      : `finding ${id}`;
  }
  return `${kind} ${id}`;
}
