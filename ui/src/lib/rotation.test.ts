import { describe, expect, it } from "vitest";
import { resource } from "../test/render";
import { rotation } from "../test/rotation";
import { timeLeft } from "./format";
import {
  certificateField,
  credentialWarnings,
  defaultCertificateId,
  verifyWords,
  withoutTls,
  wizardStep,
} from "./rotation";

describe("wizardStep", () => {
  it("keeps a staged rotation on the stage step until the value is stored", () => {
    expect(wizardStep(rotation({ step: "staging" }))).toBe(1);
    expect(wizardStep(rotation({ step: "staged" }))).toBe(1);
    expect(wizardStep(rotation({ step: "staged", acknowledged: true }))).toBe(2);
    expect(wizardStep(rotation({ step: "verifying", acknowledged: true }))).toBe(2);
    expect(wizardStep(rotation({ step: "verified", acknowledged: true }))).toBe(3);
    expect(wizardStep(rotation({ step: "promoting" }))).toBe(3);
    expect(wizardStep(rotation({ step: "done" }))).toBe(4);
    expect(wizardStep(rotation({ step: "rolled_back" }))).toBe(4);
  });

  it("shows a rotation that needs attention at the step it stopped at", () => {
    expect(wizardStep(rotation({ step: "needs_attention", stopped_step: "staging" }))).toBe(1);
    expect(wizardStep(rotation({ step: "needs_attention", stopped_step: "promoting" }))).toBe(3);
  });
});

describe("verifyWords", () => {
  it("never calls a certificate verified when no TLS handshake presented it", () => {
    const v = {
      webhook_id: "msg_1",
      tested_at: null,
      attempt: 1,
      ok: false,
      status: 200,
      latency_ms: 4,
      error: "no client certificate was presented",
      certificate_presented: false,
    };
    const words = verifyWords(v, "certificate");
    expect(words).toMatch(/^Not verified: the receiver answered HTTP 200 in 4 ms/);
    expect(words).toContain("A client certificate is never presented over http");
    expect(words).not.toContain("accepted the handshake");
    const target = (url: string) =>
      ({ kind: "target", spec: { url } }) as unknown as Parameters<typeof withoutTls>[0];
    expect(withoutTls(target("http://x/hook"))).toBe(true);
    expect(withoutTls(target("HTTPS://x/hook"))).toBe(false);
    expect(withoutTls(undefined)).toBe(false);
  });

  it("says what the receiver answered, with the error when it refused", () => {
    const base = { webhook_id: "msg_1", tested_at: null, attempt: 1, certificate_presented: null };
    expect(verifyWords({ ...base, ok: true, status: 204, latency_ms: 7, error: null })).toBe(
      "The receiver accepted the new secret alone: HTTP 204 in 7 ms.",
    );
    expect(verifyWords({ ...base, ok: false, status: 401, latency_ms: 3, error: "http_4xx" })).toBe(
      "The receiver did not accept it: HTTP 401 in 3 ms (http_4xx).",
    );
    expect(
      verifyWords({ ...base, ok: false, status: null, latency_ms: null, error: "connect" }),
    ).toBe("The receiver did not accept it: no answer (connect).");
    expect(
      verifyWords({
        ...base,
        ok: false,
        status: 401,
        latency_ms: 3,
        error: "receiver answered HTTP 401",
      }),
    ).toBe("The receiver did not accept it: HTTP 401 in 3 ms.");
  });
});

describe("credentialWarnings", () => {
  const now = Date.parse("2026-12-01T12:00:00Z");
  const day = 86_400_000;
  const target = (status: Record<string, unknown>) =>
    resource({ kind: "target", name: "billing", status: status as never });

  it("flags an open overlap with its end", () => {
    const w = credentialWarnings(
      target({ rotation: { open: true, ends_at: "2026-12-02T12:00:00Z" } }),
      now,
    );
    expect(w.map((x) => [x.label, x.color])).toEqual([["Overlap open", "yellow"]]);
    expect(w[0].at).toBe(now + day);
  });

  it("warns 30, 7 and 1 days before a certificate expires, and after", () => {
    const cert = (ms: number) =>
      credentialWarnings(
        target({ client_certificate: { not_after: new Date(ms).toISOString() } }),
        now,
      );
    expect(cert(now + 40 * day)).toEqual([]);
    expect(cert(now + 20 * day).map((x) => [x.label, x.color])).toEqual([
      ["Certificate: 20 d left", "yellow"],
    ]);
    // One format everywhere: 479 h read "20 D LEFT" here, "in 19 d" on the Overview and
    // "in 479 h" in the finding.
    expect(cert(now + 479 * 3_600_000)[0].label).toBe("Certificate: 19 d left");
    expect(timeLeft(now + 479 * 3_600_000, now)).toBe("19 d left");
    expect(timeLeft(now + 5 * 3_600_000 + 10, now)).toBe("5 h left");
    expect(timeLeft(now - 2 * day, now)).toBe("expired 2 d ago");
    expect(cert(now + 5 * day)[0].color).toBe("orange");
    expect(cert(now + day / 2)[0].color).toBe("red");
    expect(cert(now - 1000)[0].label).toBe("Certificate expired");
  });

  it("says nothing for other kinds or a target without either", () => {
    expect(credentialWarnings(resource(), now)).toEqual([]);
    expect(credentialWarnings(target({ signing_secrets: [] }), now)).toEqual([]);
    expect(credentialWarnings(target({ rotation: { open: false } }), now)).toEqual([]);
  });
});

describe("defaultCertificateId", () => {
  it("is cert-<yyyy-mm-dd> of the local date", () => {
    expect(defaultCertificateId(new Date(2026, 11, 4, 23, 30))).toBe("cert-2026-12-04");
    expect(defaultCertificateId(new Date(2027, 0, 9))).toBe("cert-2027-01-09");
  });
});

describe("certificateField", () => {
  it("maps the upload's fields to the form's inputs", () => {
    expect(certificateField("id")).toBe("certificate_id");
    expect(certificateField("private_key_pem")).toBe("private_key_pem");
    expect(certificateField("overlap")).toBeNull();
  });
});
