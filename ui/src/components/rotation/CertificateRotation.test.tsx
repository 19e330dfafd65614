import { fireEvent, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import type { CertificateView, RotationView } from "../../ipc/bindings";
import { mockCommands, renderUi } from "../../test/render";
import { rotation } from "../../test/rotation";
import { RotationWizard } from "./RotationWizard";

const CHAIN = "-----BEGIN CERTIFICATE-----\nMIIBnew\n-----END CERTIFICATE-----\n";
const KEY = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAsecretkeybody\n-----END PRIVATE KEY-----\n";

const actions = (over: Partial<RotationView["actions"]> = {}): RotationView["actions"] => ({
  resume: false,
  verify: false,
  promote: false,
  promote_skipping_verify: false,
  roll_back: false,
  ...over,
});

const cert = (over: Partial<CertificateView> = {}): CertificateView => ({
  id: "cert-new",
  fingerprint_sha256: "ab12cd34".repeat(8),
  subject: "CN=billing-client-2027",
  not_after: "2027-12-01T00:00:00Z",
  state: "staged",
  ...over,
});

const staged = (over: Partial<RotationView> = {}) =>
  rotation({
    credential: "certificate",
    step: "staged",
    pending_keys: [],
    new_certificate_id: "cert-new",
    new_certificate: cert(),
    old_certificate_id: "cert-old",
    old_certificate: cert({
      id: "cert-old",
      subject: "CN=billing-client",
      not_after: "2027-01-01T00:00:00Z",
      state: "active",
    }),
    actions: actions({ verify: true, promote_skipping_verify: true, roll_back: true }),
    ...over,
  });

const verify = (ok: boolean, attempt: number): RotationView["verify_result"] => ({
  ok,
  certificate_presented: ok,
  status: ok ? 200 : null,
  latency_ms: ok ? 12 : null,
  error: ok ? null : "TLS handshake failed: received fatal alert: UnknownCA",
  webhook_id: ok ? "msg_1" : null,
  tested_at: null,
  attempt,
});

/** Opens the wizard on the certificate path and fills the upload form. */
/** The upload refused by the control plane on `field` (a `validation_failed` problem). */
const refusal = (field: string, message: string, ipcMessage: string) => () => {
  throw {
    code: "remote",
    message: ipcMessage,
    problem: {
      status: 400,
      code: "validation_failed",
      message,
      transient: false,
      field,
      used_by: [],
      current_version: null,
    },
  };
};

async function fillForm() {
  await userEvent.click(await screen.findByTestId("rotation-choose-certificate"));
  await userEvent.click(screen.getByTestId("rotation-next"));
  fireEvent.change(screen.getByTestId("rotation-cert-pem"), { target: { value: CHAIN } });
  fireEvent.change(screen.getByTestId("rotation-cert-key"), { target: { value: KEY } });
}

describe("RotationWizard, client certificate", () => {
  it("uploads, shows the staged certificate, fails the handshake, then activates and rolls back", async () => {
    let current = staged();
    const calls = mockCommands({
      list_rotations: () => [],
      start_certificate_rotation: () => ({ rotation: current, value: null }),
      verify_rotation: () => {
        const ok = current.verify_attempts === 1;
        current = {
          ...current,
          step: ok ? "verified" : "staged",
          verify_attempts: current.verify_attempts + 1,
          verify_result: verify(ok, current.verify_attempts + 1),
          actions: ok
            ? actions({ promote: true, roll_back: true })
            : actions({ verify: true, promote_skipping_verify: true, roll_back: true }),
        };
        return current;
      },
      promote_rotation: ({ skipVerify }) => {
        expect(skipVerify).toBe(false);
        current = { ...current, step: "done", actions: actions({ roll_back: true }) };
        return current;
      },
      rollback_rotation: () => {
        current = { ...current, step: "rolled_back", actions: actions() };
        return current;
      },
    });
    renderUi(<RotationWizard target="billing" onClose={() => {}} />);
    await fillForm();
    expect((screen.getByTestId("rotation-cert-id") as HTMLInputElement).value).toMatch(
      /^cert-\d{4}-\d{2}-\d{2}$/,
    );
    fireEvent.change(screen.getByTestId("rotation-cert-id"), { target: { value: "cert-new" } });
    await userEvent.click(screen.getByTestId("rotation-stage"));

    // Staged: what the control plane listed, on the handshake step.
    expect(await screen.findByTestId("rotation-cert-fingerprint")).toHaveTextContent("ab12cd34");
    expect(screen.getByTestId("rotation-cert-subject")).toHaveTextContent("CN=billing-client-2027");
    expect(screen.getByTestId("rotation-cert-not-after")).toHaveTextContent("2027");
    expect(screen.queryByTestId("rotation-cert-key")).toBeNull();
    const start = calls.find(([c]) => c === "start_certificate_rotation");
    expect(start?.[1]).toEqual({
      profile: "sandbox",
      input: {
        target: "billing",
        certificate_id: "cert-new",
        certificate_pem: CHAIN,
        private_key_pem: KEY,
      },
    });

    // The receiver does not trust the new issuer: the alert is shown, no Activate.
    const test = screen.getByTestId("rotation-verify");
    expect(test).toHaveTextContent("Test the handshake with the new certificate");
    await userEvent.click(test);
    expect(await screen.findByTestId("rotation-verify-result")).toHaveTextContent(
      "The handshake with the new certificate failed: no answer (TLS handshake failed: received fatal alert: UnknownCA)",
    );
    expect(screen.queryByTestId("rotation-promote")).toBeNull();

    // Fixed receiver: the test passes with status and latency; Activate.
    await userEvent.click(screen.getByTestId("rotation-verify"));
    expect(await screen.findByTestId("rotation-verify-result")).toHaveTextContent(
      "accepted the handshake with the new certificate: HTTP 200 in 12 ms",
    );
    const activate = screen.getByTestId("rotation-promote");
    expect(activate).toHaveTextContent("Activate");
    await userEvent.click(activate);
    expect(await screen.findByTestId("rotation-final-step")).toHaveTextContent("Done");
    expect(screen.getByTestId("rotation-done")).toHaveTextContent("activates cert-old again");

    // Roll back after activation: asked first, then the old certificate is active again.
    await userEvent.click(screen.getByTestId("rotation-rollback"));
    expect(screen.getByText(/cert-old is activated again/)).toBeInTheDocument();
    await userEvent.click(screen.getByTestId("rotation-rollback-confirm"));
    expect(await screen.findByTestId("rotation-final-step")).toHaveTextContent("Rolled back");
    expect(calls.filter(([c]) => c === "rollback_rotation")).toEqual([
      ["rollback_rotation", { id: "rot_1" }],
    ]);
  });

  it("shows a refused upload on its field and drops the key from the form", async () => {
    mockCommands({
      list_rotations: () => [],
      start_certificate_rotation: refusal(
        "private_key_pem",
        "the private key does not match the leaf certificate",
        "the control plane answered HTTP 400: validation_failed: private_key_pem: does not match the leaf",
      ),
    });
    renderUi(<RotationWizard target="billing" onClose={() => {}} />);
    await fillForm();
    await userEvent.click(screen.getByTestId("rotation-stage"));
    expect(await screen.findByTestId("rotation-form-refused")).toHaveTextContent(
      "refused the field marked above",
    );
    expect(
      screen.getByText("the private key does not match the leaf certificate"),
    ).toBeInTheDocument();
    // The key is gone from the form once the call returned; the chain stays to fix and retry.
    await waitFor(() => expect(screen.getByTestId("rotation-cert-key")).toHaveValue(""));
    expect(screen.getByTestId("rotation-cert-pem")).toHaveValue(CHAIN);
    expect(document.body.innerHTML).not.toContain("secretkeybody");
    expect(screen.getByTestId("rotation-stage")).toBeDisabled();
  });

  // The field's error stayed after a valid PEM was pasted, and the alert below repeated
  // "certificate_pem: certificate_pem:".
  it("drops a refusal of the chain once the chain is changed, and names the field once", async () => {
    mockCommands({
      list_rotations: () => [],
      start_certificate_rotation: refusal(
        "certificate_pem",
        "certificate_pem: PEM block 1 is malformed",
        "Request validation failed (validation_failed, HTTP 400): certificate_pem: PEM block 1 is malformed",
      ),
    });
    renderUi(<RotationWizard target="billing" onClose={() => {}} />);
    await fillForm();
    await userEvent.click(screen.getByTestId("rotation-stage"));
    expect(await screen.findByText("PEM block 1 is malformed")).toBeInTheDocument();
    expect(document.body.textContent).not.toContain("certificate_pem: ");
    expect(screen.queryByTestId("error-alert")).toBeNull();
    fireEvent.change(screen.getByTestId("rotation-cert-key"), { target: { value: KEY } });
    expect(screen.getByText("PEM block 1 is malformed")).toBeInTheDocument();
    fireEvent.change(screen.getByTestId("rotation-cert-pem"), {
      target: { value: CHAIN.replace("MIIBnew", "MIIBfixed") },
    });
    await waitFor(() => expect(screen.queryByText("PEM block 1 is malformed")).toBeNull());
    expect(screen.queryByTestId("rotation-form-refused")).toBeNull();
  });

  it("reads the chain and the key from files in the webview", async () => {
    mockCommands({ list_rotations: () => [] });
    renderUi(<RotationWizard target="billing" onClose={() => {}} />);
    await userEvent.click(await screen.findByTestId("rotation-choose-certificate"));
    await userEvent.click(screen.getByTestId("rotation-next"));
    expect(screen.getByTestId("rotation-stage")).toBeDisabled();
    await userEvent.upload(
      screen.getByTestId("rotation-cert-pem-file"),
      new File([CHAIN], "chain.pem", { type: "application/x-pem-file" }),
    );
    await userEvent.upload(
      screen.getByTestId("rotation-cert-key-file"),
      new File([KEY], "client.key", { type: "application/x-pem-file" }),
    );
    await waitFor(() => expect(screen.getByTestId("rotation-cert-pem")).toHaveValue(CHAIN));
    await waitFor(() => expect(screen.getByTestId("rotation-cert-key")).toHaveValue(KEY));
    expect(screen.getByTestId("rotation-stage")).toBeEnabled();
  });

  it("resumes an open certificate rotation at its step", async () => {
    const open = staged({
      step: "verified",
      verify_attempts: 1,
      verify_result: verify(true, 1),
      actions: actions({ promote: true, roll_back: true }),
    });
    const calls = mockCommands({
      list_rotations: () => [open],
      resume_rotation: () => ({ rotation: open, value: null }),
    });
    renderUi(<RotationWizard target="billing" onClose={() => {}} />);
    expect(await screen.findByTestId("rotation-promote")).toHaveTextContent("Activate");
    expect(screen.getByText("Test handshake")).toBeInTheDocument();
    expect(calls.some(([c]) => c === "start_certificate_rotation")).toBe(false);
  });

  // An http target: no TLS handshake, so the receiver's 200 verified nothing.
  it("warns on an http target and does not call a 200 over http verified", async () => {
    let current = staged();
    mockCommands({
      list_rotations: () => [],
      get_resource: () => ({
        kind: "target",
        name: "billing",
        version: 2,
        updated_at: Date.now(),
        spec: { url: "http://billing.internal/hooks", timeout_ms: 15000, headers: {} },
        status: {},
        pending: null,
      }),
      start_certificate_rotation: () => ({ rotation: current, value: null }),
      verify_rotation: () => {
        current = {
          ...current,
          step: "staged",
          verify_attempts: 1,
          verify_result: {
            ...(verify(true, 1) as NonNullable<RotationView["verify_result"]>),
            ok: false,
            error: "no client certificate was presented: the target's URL is not https",
            certificate_presented: false,
          },
          actions: actions({ verify: true, promote_skipping_verify: true, roll_back: true }),
        };
        return current;
      },
    });
    renderUi(<RotationWizard target="billing" onClose={() => {}} />);
    await fillForm();
    await userEvent.click(screen.getByTestId("rotation-stage"));
    expect(await screen.findByTestId("rotation-plain-http")).toHaveTextContent(
      "A client certificate is never presented over http",
    );
    await userEvent.click(screen.getByTestId("rotation-verify"));
    const result = await screen.findByTestId("rotation-verify-result");
    expect(result).toHaveTextContent(
      "Not verified: the receiver answered HTTP 200 in 12 ms, but no client certificate was presented.",
    );
    expect(result).toHaveTextContent("no certificate presented");
    expect(result).not.toHaveTextContent("accepted the handshake");
    expect(screen.queryByTestId("rotation-promote")).toBeNull();
  });
});
