import type { OpKind, OpState, ResourceKind } from "../ipc/bindings";

export const kindLabels: Record<ResourceKind, { one: string; many: string }> = {
  endpoint: { one: "Endpoint", many: "Endpoints" },
  target: { one: "Target", many: "Targets" },
  flow: { one: "Flow", many: "Flows" },
};

export const stateLabels: Record<OpState, string> = {
  pending: "Saved locally",
  sending: "Sending",
  done: "Confirmed",
  needs_attention: "Needs attention",
  discarded: "Discarded",
  superseded: "Replaced",
};

export const stateColors: Record<OpState, string> = {
  pending: "yellow",
  sending: "blue",
  done: "green",
  needs_attention: "red",
  discarded: "gray",
  superseded: "gray",
};

export const operationLabels: Record<OpKind, string> = {
  create: "create",
  update: "edit",
  apply: "apply",
  delete: "delete",
  enable: "enable",
  disable: "disable",
};

/** A span of `abs` seconds in its largest whole unit: "40 s", "3 min", "5 h", "19 d". */
function span(abs: number): string {
  return abs < 60
    ? `${abs} s`
    : abs < 3600
      ? `${Math.floor(abs / 60)} min`
      : abs < 86400
        ? `${Math.floor(abs / 3600)} h`
        : `${Math.floor(abs / 86400)} d`;
}

/** How long until `ms`: "19 d left", "5 h left", or "expired 2 d ago". The one format of a
 * certificate's (or an overlap's) remaining time, in the badge, the drawer and the overview;
 * the control plane's finding says the same (crates/control-plane/src/diagnostics/credentials.rs). */
export function timeLeft(ms: number, now: number = Date.now()): string {
  const diff = Math.floor((ms - now) / 1000);
  return diff > 0 ? `${span(diff)} left` : `expired ${span(-diff)} ago`;
}

/** "12 s ago", "3 min ago", "in 40 s". */
export function relativeTime(ms: number | null | undefined, now: number = Date.now()): string {
  if (ms === null || ms === undefined) return "never";
  const diff = Math.round((ms - now) / 1000);
  const abs = Math.abs(diff);
  const text = span(abs);
  // A few seconds "in the future" is clock jitter between the core and the webview.
  if (abs < 2 || (diff > 0 && diff < 10)) return "just now";
  return diff < 0 ? `${text} ago` : `in ${text}`;
}

export function shortTime(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "—";
  return new Date(ms).toLocaleString(undefined, {
    month: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  });
}
