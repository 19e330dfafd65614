// What the rotation wizard shows for a rotation's stored step, and the credential warnings of
// a target (an open overlap, a client certificate near its expiry) for the target list and
// the overview. Pure: the wizard and the tests share it.
import type { JsonValue, ResourceView, RotationStep, RotationView } from "../ipc/bindings";
import { timeLeft } from "./format";

/** The wizard's steps: 0 choose, 1 stage, 2 verify, 3 promote, 4 done (the Stepper's completed). */
export type WizardStep = 0 | 1 | 2 | 3 | 4;

/** A step whose request is queued or in flight: the wizard resumes it until it is answered. */
export const inFlight = (step: RotationStep) =>
  step === "staging" || step === "verifying" || step === "promoting" || step === "rolling_back";

export const isFinished = (step: RotationStep) =>
  step === "done" || step === "rolled_back" || step === "needs_attention";

/** Where the wizard stands for a rotation. A staged secret rotation stays on the stage step
 * until the person said the new value is stored; a staged certificate (uploaded: nothing to
 * store) goes on to the verify step. */
export function wizardStep(r: RotationView): WizardStep {
  const at = r.step === "needs_attention" ? (r.stopped_step ?? "staging") : r.step;
  switch (at) {
    case "staging":
      return 1;
    case "staged":
      return r.acknowledged || r.credential === "certificate" ? 2 : 1;
    case "verifying":
      return 2;
    case "verified":
    case "promoting":
      return 3;
    default:
      return 4;
  }
}

/** The rotation ended (or is ending) by a roll back: its promote never happened, and its
 * verify only if a test passed before. The wizard's stepper then shows the path taken. */
export function endedByRollback(r: RotationView | null): boolean {
  if (!r) return false;
  const at = r.step === "needs_attention" ? r.stopped_step : r.step;
  return at === "rolling_back" || at === "rolled_back";
}

export const stepWords: Record<RotationStep, { label: string; color: string }> = {
  staging: { label: "Staging", color: "blue" },
  staged: { label: "Staged (overlap open)", color: "yellow" },
  verifying: { label: "Verifying", color: "blue" },
  verified: { label: "Verified", color: "teal" },
  promoting: { label: "Promoting", color: "blue" },
  done: { label: "Done", color: "green" },
  rolling_back: { label: "Rolling back", color: "orange" },
  rolled_back: { label: "Rolled back", color: "gray" },
  needs_attention: { label: "Needs attention", color: "red" },
};

/** Overlap choices of the stage step, in seconds (`null`: the server's default day). */
export const overlaps: { value: string; label: string; seconds: number | null }[] = [
  { value: "1h", label: "1 hour", seconds: 3600 },
  { value: "24h", label: "24 hours", seconds: null },
  { value: "3d", label: "3 days", seconds: 3 * 86400 },
  { value: "7d", label: "7 days", seconds: 7 * 86400 },
];

/** The default id of a new client certificate: `cert-<yyyy-mm-dd>` (local date). */
export function defaultCertificateId(now: Date): string {
  const two = (n: number) => String(n).padStart(2, "0");
  return `cert-${now.getFullYear()}-${two(now.getMonth() + 1)}-${two(now.getDate())}`;
}

/** The fields of the certificate upload a refusal can name, mapped to the form's inputs. */
export type CertificateField = "certificate_id" | "certificate_pem" | "private_key_pem";

export function certificateField(field: string | null | undefined): CertificateField | null {
  switch (field) {
    case "id":
    case "certificate_id":
      return "certificate_id";
    case "certificate_pem":
    case "private_key_pem":
      return field;
    default:
      return null;
  }
}

/** Why a certificate test on an http target proves nothing. */
export const NEVER_OVER_HTTP =
  "A client certificate is never presented over http: only a TLS handshake (an https URL) presents one.";

/** The target's URL does not use TLS: no client certificate is presented to it. */
export function withoutTls(target: ResourceView | undefined): boolean {
  const url = field(target?.spec ?? null, "url");
  return typeof url === "string" && !/^https:\/\//i.test(url.trim());
}

/** The verify result in one sentence. */
export function verifyWords(
  v: RotationView["verify_result"],
  credential: RotationView["credential"] = "secret",
): string {
  if (!v) return "";
  const answer = v.status !== null ? `HTTP ${v.status}` : "no answer";
  const latency = v.latency_ms !== null ? ` in ${v.latency_ms} ms` : "";
  // The error often restates the status ("receiver answered HTTP 401"): say it once.
  const restates = v.error !== null && v.status !== null && v.error.includes(String(v.status));
  const why = v.error && !restates ? ` (${v.error})` : "";
  if (credential === "certificate") {
    // The server says whether a TLS handshake presented it: over http none is, whatever the
    // receiver answers.
    if (v.certificate_presented === false && v.status !== null)
      return `Not verified: the receiver answered ${answer}${latency}, but no client certificate was presented. ${NEVER_OVER_HTTP}`;
    return v.ok
      ? `The receiver accepted the handshake with the new certificate: ${answer}${latency}.`
      : `The handshake with the new certificate failed: ${answer}${latency}${why}.`;
  }
  return v.ok
    ? `The receiver accepted the new secret alone: ${answer}${latency}.`
    : `The receiver did not accept it: ${answer}${latency}${why}.`;
}

export type CredentialWarning = {
  /** What the badge says. */
  label: string;
  /** A sentence for the tooltip and the overview. */
  detail: string;
  color: "yellow" | "orange" | "red";
  /** When the warning's deadline is (ms). */
  at: number;
};

const DAY = 86_400_000;

function field(value: JsonValue, key: string): JsonValue | undefined {
  return value && typeof value === "object" && !Array.isArray(value) ? value[key] : undefined;
}

/** The warnings of a target from its status as the control plane reported it: an open
 * signing-secret overlap (older secrets still sign until `ends_at`), and an active client
 * certificate expiring within 30 days (orange within 7, red within 1 or expired). */
export function credentialWarnings(r: ResourceView, now: number): CredentialWarning[] {
  if (r.kind !== "target") return [];
  const out: CredentialWarning[] = [];
  const rotation = field(r.status, "rotation");
  const endsAt = field(rotation ?? null, "ends_at");
  if (field(rotation ?? null, "open") === true && typeof endsAt === "string") {
    const at = Date.parse(endsAt);
    out.push({
      label: "Overlap open",
      detail: `Two signing secrets sign until ${new Date(at).toLocaleString()}: verify the receiver accepts the new one, then promote it or roll back.`,
      color: "yellow",
      at,
    });
  }
  const notAfter = field(field(r.status, "client_certificate") ?? null, "not_after");
  if (typeof notAfter === "string") {
    const at = Date.parse(notAfter);
    const left = at - now;
    if (left < 30 * DAY) {
      out.push({
        label: left <= 0 ? "Certificate expired" : `Certificate: ${timeLeft(at, now)}`,
        detail:
          left <= 0
            ? `The client certificate expired ${new Date(at).toLocaleString()}: deliveries fail the TLS handshake. Upload and activate a new one.`
            : `The client certificate expires ${new Date(at).toLocaleString()}: upload a new one and activate it before then.`,
        color: left <= DAY ? "red" : left <= 7 * DAY ? "orange" : "yellow",
        at,
      });
    }
  }
  return out;
}
