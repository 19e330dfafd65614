// The form's checks, mirroring the control plane's (crates/protocol: name.rs, resource.rs) so
// every invalid field is flagged at once, before anything is queued. The control plane stays
// the judge: what it refuses still lands under the field it names.
import type { JsonValue, ResourceKind } from "../ipc/bindings";
import { list, obj, str } from "./kinds";

export type FormValues = {
  name: string;
  description: string;
  event_types: string[];
  url: string;
  timeout_ms: number;
  headers: string;
  endpoint: string;
  target: string;
  mode: string;
  edge: string;
};

/** The form's values for a spec (what the form opens with, and what Apply JSON checks). */
export function formValues(name: string, spec: JsonValue): FormValues {
  const s = obj(spec);
  const headers = obj(s.headers ?? {});
  return {
    name,
    description: str(s.description),
    event_types: list(s.event_types),
    url: str(s.url),
    timeout_ms: typeof s.timeout_ms === "number" ? s.timeout_ms : 15000,
    headers: Object.entries(headers)
      .map(([k, v]) => `${k}: ${str(v)}`)
      .join("\n"),
    endpoint: str(s.endpoint),
    target: str(s.target),
    mode: str(s.mode) || "async_inline",
    edge: str(s.edge),
  };
}

export type FieldErrors = Partial<Record<keyof FormValues, string>>;

export function nameError(name: string): string | null {
  if (!name) return "must not be empty";
  if (name.length > 63) return "must be at most 63 characters";
  if (!/^[a-z0-9-]+$/.test(name)) return "may contain only lowercase letters, digits and '-'";
  if (name.startsWith("-") || name.endsWith("-"))
    return "must start and end with a letter or digit";
  return null;
}

const RESERVED = ["content-type", "content-length", "host", "transfer-encoding", "connection"];
const TOKEN = /^[A-Za-z0-9!#$%&'*+\-.^_`|~]+$/;

/**
 * Parses the Headers field: one `Name: value` per line. A line without a colon is an error
 * (it used to be dropped silently, so a mistyped `Authorization Bearer …` vanished).
 */
export function parseHeaders(text: string): {
  headers: Record<string, string>;
  error: string | null;
} {
  const headers: Record<string, string> = {};
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (!line.trim()) continue;
    const at = line.indexOf(":");
    const n = i + 1;
    if (at <= 0) return { headers, error: `line ${n}: expected "Name: value"` };
    const name = line.slice(0, at).trim();
    const lower = name.toLowerCase();
    if (!TOKEN.test(name))
      return { headers, error: `line ${n}: "${name}" is not a valid header name` };
    if (RESERVED.includes(lower) || lower.startsWith("webhook-") || lower.startsWith("switchyard-"))
      return { headers, error: `line ${n}: ${name} is set by Switchyard and cannot be overridden` };
    headers[name] = line.slice(at + 1).trim();
  }
  return { headers, error: null };
}

/** The most event types an endpoint or flow lists (crates/protocol/src/resource.rs). */
const MAX_EVENT_TYPES = 64;
const EVENT_TYPE = /^[A-Za-z0-9._:*-]{1,128}$/;

/** The control plane's rule for an endpoint's or flow's event types, naming the first bad one. */
export function eventTypesError(types: string[]): string | null {
  if (types.length > MAX_EVENT_TYPES) return `at most ${MAX_EVENT_TYPES} event types`;
  const bad = types.find((t) => !EVENT_TYPE.test(t));
  return bad === undefined
    ? null
    : `"${bad}" must be 1-128 characters of letters, digits and . _ : - *`;
}

function urlError(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "is not a valid URL";
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return "must use http or https";
  if (!parsed.hostname) return "must name a host";
  return null;
}

/** Every invalid field of the form, at once. */
export function validate(kind: ResourceKind, v: FormValues, creating: boolean): FieldErrors {
  const errors: FieldErrors = {};
  if (creating) {
    const e = nameError(v.name);
    if (e) errors.name = e;
  }
  if (kind === "endpoint" || kind === "flow") {
    const t = eventTypesError(v.event_types);
    if (t) errors.event_types = t;
  }
  if (kind === "target") {
    const u = urlError(v.url);
    if (u) errors.url = u;
    if (!Number.isInteger(v.timeout_ms) || v.timeout_ms < 1 || v.timeout_ms > 120_000)
      errors.timeout_ms = "must be between 1 and 120000";
    const h = parseHeaders(v.headers).error;
    if (h) errors.headers = h;
  }
  if (kind === "flow") {
    if (!v.endpoint) errors.endpoint = "must not be empty";
    if (!v.target) errors.target = "must not be empty";
    if (v.mode === "async_relay" && !v.edge) errors.edge = "must not be empty";
  }
  return errors;
}

/** Every field of a spec the local rules refuse, as "spec.url is not a valid URL" (Apply JSON:
 * the control plane names only its first problem, so each is named before anything is sent). */
export function specProblems(kind: ResourceKind, spec: JsonValue): string[] {
  const errors = validate(kind, formValues("", spec), false);
  return Object.entries(errors).map(([field, message]) => `spec.${field} ${message}`);
}
