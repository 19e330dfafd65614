// "Rotate credentials…" of a target: choose → stage (the new secret shown once) → verify (a
// test signed with the new secret only) → promote, with roll back while the old secret is
// valid. The procedure is a row of console.db (crates/core/src/rotation/): opening the wizard
// on a target with an unfinished rotation resumes it where it was, and a step whose answer has
// not arrived is sent again under the same derived key, so no second secret is ever made. The
// new value lives in this component's state only, never in the query cache or on disk.
// The certificate path (CertificateSteps.tsx): upload (id, chain, key) → test the handshake
// with the new certificate → activate, with roll back to the old one; the key is in this
// component's state only until the upload call returns.
import { Alert, Button, Code, Group, Modal, Stack, Stepper, Text } from "@mantine/core";
import { useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useRef, useState } from "react";
import type { Credential, IpcError, RotationProgressView, RotationView } from "../../ipc/bindings";
import { call } from "../../ipc/client";
import { commandInvalidates, invalidate } from "../../ipc/invalidation";
import { useActiveProfile } from "../../ipc/queries";
import { useRotations } from "../../ipc/rotationQueries";
import {
  type CertificateField,
  certificateField,
  defaultCertificateId,
  endedByRollback,
  inFlight,
  isFinished,
  overlaps,
  wizardStep,
} from "../../lib/rotation";
import { ErrorAlert } from "../ErrorAlert";
import {
  CertificateDoneBody,
  type CertificateForm,
  CertificatePromoteBody,
  CertificateStageForm,
  CertificateVerifyBody,
  certificateRollbackWords,
} from "./CertificateSteps";
import {
  ChooseBody,
  DoneBody,
  PromoteBody,
  StagedBody,
  StageOptions,
  VerifyBody,
} from "./RotationSteps";

/** A step in flight is sent again this long after its last answer. */
const RESUME_MS = 1_500;
/** A rotation waiting for its overlap to end is looked at this often. */
const WAITING_MS = 15_000;

export function RotationWizard({ target, onClose }: { target: string; onClose: () => void }) {
  const profile = useActiveProfile();
  const client = useQueryClient();
  const existing = useRotations();
  const [chosen, setChosen] = useState(false);
  const [credential, setCredential] = useState<Credential>("secret");
  const [form, setForm] = useState<CertificateForm>(() => ({
    id: defaultCertificateId(new Date()),
    certificatePem: "",
    privateKeyPem: "",
  }));
  const [overlap, setOverlap] = useState("24h");
  const [force, setForce] = useState(false);
  const [rotation, setRotation] = useState<RotationView | null>(null);
  const [value, setValue] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<IpcError | null>(null);
  const [confirm, setConfirm] = useState<"rollback" | "skip" | null>(null);
  const picked = useRef(false);

  const run = useCallback(
    async (what: string, step: () => Promise<RotationView | RotationProgressView>) => {
      setBusy(what);
      setError(null);
      // A background look leaves a confirmation the person is reading alone.
      if (what !== "refresh") setConfirm(null);
      try {
        const out = await step();
        if ("rotation" in out) {
          setRotation(out.rotation);
          if (out.value) setValue(out.value);
        } else {
          setRotation(out);
        }
      } catch (e) {
        setError(e as IpcError);
      } finally {
        setBusy(null);
        if (profile !== undefined) invalidate(client, commandInvalidates.rotation_step(profile));
      }
    },
    [client, profile],
  );

  // Opening the wizard on a target with an unfinished rotation resumes that one.
  useEffect(() => {
    if (picked.current || !existing.data) return;
    picked.current = true;
    const open = existing.data.find((r) => r.target === target && !isFinished(r.step));
    if (open) {
      setChosen(true);
      setCredential(open.credential);
      setRotation(open);
      run("resume", () => call("resume_rotation", { id: open.id }));
    }
  }, [existing.data, target, run]);

  // A step in flight is resent (same key) until answered; a rotation waiting for its overlap
  // to end is looked at now and then (the end makes it done).
  const id = rotation?.id;
  const step = rotation?.step;
  useEffect(() => {
    if (!id || !step || busy || error) return;
    if (inFlight(step)) {
      const t = setTimeout(() => run("resume", () => call("resume_rotation", { id })), RESUME_MS);
      return () => clearTimeout(t);
    }
    if (step === "staged" || step === "verified") {
      const t = setInterval(() => run("refresh", () => call("get_rotation", { id })), WAITING_MS);
      return () => clearInterval(t);
    }
  }, [id, step, busy, error, run]);

  // Once the person said it is stored, the value is dropped from memory too.
  const acknowledged = rotation?.acknowledged ?? false;
  useEffect(() => {
    if (acknowledged) setValue(null);
  }, [acknowledged]);
  const shown = acknowledged ? null : value;

  const active = !chosen ? 0 : rotation ? wizardStep(rotation) : 1;
  const actions = rotation?.actions;
  const stage = () => {
    if (profile === undefined) return;
    const seconds = force ? null : (overlaps.find((o) => o.value === overlap)?.seconds ?? null);
    run("stage", () =>
      call("start_rotation", {
        profile,
        input: { target, overlap_seconds: seconds, force },
      }),
    );
  };
  const stageCertificate = () => {
    if (profile === undefined) return;
    const input = {
      target,
      certificate_id: form.id.trim(),
      certificate_pem: form.certificatePem,
      private_key_pem: form.privateKeyPem,
    };
    run("stage", async () => {
      try {
        return await call("start_certificate_rotation", { profile, input });
      } finally {
        // The key leaves the webview's state as soon as the upload call returns.
        setForm((f) => ({ ...f, privateKeyPem: "" }));
      }
    });
  };
  const cert = (rotation?.credential ?? credential) === "certificate";
  // A refusal naming an input of the upload form is shown under that input, and goes once
  // that input is changed (the other inputs' edits leave it).
  const formError = !rotation && cert && certificateField(error?.problem?.field);
  const editForm = (next: CertificateForm) => {
    const changed: Record<CertificateField, boolean> = {
      certificate_id: next.id !== form.id,
      certificate_pem: next.certificatePem !== form.certificatePem,
      private_key_pem: next.privateKeyPem !== form.privateKeyPem,
    };
    if (formError && changed[formError]) setError(null);
    setForm(next);
  };
  const rid = rotation?.id ?? "";
  // After a roll back the stepper shows the path taken (choose, stage, the verify only if a
  // test passed, roll back), never a promote that did not happen as done.
  const rollback = endedByRollback(rotation);
  const verified = rotation?.verify_result?.ok === true;
  const rollbackAt = verified ? 3 : 2;
  const shownStep = !rollback
    ? active
    : rotation?.step === "rolled_back"
      ? rollbackAt + 1
      : rollbackAt;
  const ending =
    rotation &&
    (cert ? <CertificateDoneBody rotation={rotation} /> : <DoneBody rotation={rotation} />);
  const keepWords = cert ? "Keep the new certificate" : "Keep the new secret";

  return (
    <Modal
      opened
      onClose={onClose}
      title={`Rotate credentials of ${target}`}
      size="lg"
      closeOnClickOutside={false}
      data-testid="rotation-wizard"
    >
      <Stepper active={shownStep} size="sm" data-testid="rotation-stepper">
        <Stepper.Step label="Choose">
          <ChooseBody credential={credential} onCredential={setCredential} />
        </Stepper.Step>
        <Stepper.Step label={cert ? "Upload" : "Stage"}>
          {cert ? (
            !rotation && <CertificateStageForm form={form} onForm={editForm} error={error} />
          ) : rotation ? (
            <StagedBody rotation={rotation} value={shown} target={target} />
          ) : (
            <StageOptions
              overlap={overlap}
              onOverlap={setOverlap}
              force={force}
              onForce={setForce}
            />
          )}
        </Stepper.Step>
        {(!rollback || verified) && (
          <Stepper.Step label={cert ? "Test handshake" : "Verify"}>
            {rotation &&
              (cert ? (
                <CertificateVerifyBody rotation={rotation} />
              ) : (
                <VerifyBody rotation={rotation} />
              ))}
          </Stepper.Step>
        )}
        {rollback ? (
          <Stepper.Step label="Roll back" color="orange">
            {ending}
          </Stepper.Step>
        ) : (
          <Stepper.Step label={cert ? "Activate" : "Promote"}>
            {rotation &&
              (cert ? (
                <CertificatePromoteBody rotation={rotation} />
              ) : (
                <PromoteBody rotation={rotation} />
              ))}
          </Stepper.Step>
        )}
        <Stepper.Completed>{ending}</Stepper.Completed>
      </Stepper>
      <Stack gap="xs" mt="md">
        {rotation?.step === "needs_attention" &&
          (rotation.problem ? (
            <ErrorAlert
              error={rotation.problem}
              title={`Stopped at ${rotation.stopped_step ?? "a step"}`}
            />
          ) : (
            <Alert color="red" title="Stopped">
              The rotation stopped at {rotation.stopped_step ?? "a step"}.
            </Alert>
          ))}
        {formError ? (
          <Text size="sm" c="red" data-testid="rotation-form-refused">
            Not uploaded: the control plane refused the field marked above. Fix it and upload again.
          </Text>
        ) : (
          <ErrorAlert error={error} title="Not done" />
        )}
        {error && rotation && (
          <Text size="sm" c="dimmed">
            Nothing was lost: the step is stored and is sent again with its key when you retry.
          </Text>
        )}
        {rotation && !isFinished(rotation.step) && (
          <Text size="xs" c="dimmed" data-testid="rotation-id">
            Rotation <Code>{rotation.id}</Code> · resume from the terminal with{" "}
            <Code>switchyard rotation resume {rotation.id}</Code>
          </Text>
        )}
        {confirm === "rollback" && actions?.roll_back && (
          <Alert color="orange" title="Roll back?" data-testid="rotation-rollback-ask">
            <Stack gap="xs">
              <Text size="sm">
                {cert && rotation
                  ? certificateRollbackWords(rotation)
                  : "The new secret is expired now and the old one keeps signing without an expiry. A receiver that already dropped the old secret fails."}
              </Text>
              <Group justify="flex-end" gap="xs">
                <Button
                  size="xs"
                  variant="default"
                  onClick={() => setConfirm(null)}
                  data-testid="rotation-rollback-keep"
                >
                  {keepWords}
                </Button>
                <Button
                  size="xs"
                  color="orange"
                  loading={busy === "rollback"}
                  onClick={() => run("rollback", () => call("rollback_rotation", { id: rid }))}
                  data-testid="rotation-rollback-confirm"
                >
                  Roll back now
                </Button>
              </Group>
            </Stack>
          </Alert>
        )}
        {active === 2 && actions?.promote_skipping_verify && confirm !== "skip" && (
          <Group justify="flex-end">
            <Button
              size="xs"
              variant="subtle"
              onClick={() => setConfirm("skip")}
              data-testid="rotation-skip"
            >
              {cert ? "Activate without a successful test…" : "Promote without verifying…"}
            </Button>
          </Group>
        )}
        {active === 2 && actions?.promote_skipping_verify && confirm === "skip" && (
          <Alert
            color="orange"
            title={
              cert ? "Activate without a successful test?" : "Promote without a successful verify?"
            }
            data-testid="rotation-skip-ask"
          >
            <Stack gap="xs">
              <Text size="sm">
                {cert
                  ? `Deliveries present the new certificate now. If the receiver does not trust it, every delivery to ${target} fails the TLS handshake until it does.`
                  : `The older secrets stop signing now. If the receiver does not accept the new secret, every delivery to ${target} fails until it does.`}
              </Text>
              <Group justify="flex-end" gap="xs">
                <Button
                  size="xs"
                  variant="default"
                  onClick={() => setConfirm(null)}
                  data-testid="rotation-skip-keep"
                >
                  {cert ? "Test first" : "Verify first"}
                </Button>
                <Button
                  size="xs"
                  color="orange"
                  loading={busy === "promote"}
                  onClick={() =>
                    run("promote", () => call("promote_rotation", { id: rid, skipVerify: true }))
                  }
                  data-testid="rotation-skip-confirm"
                >
                  {cert ? "Activate anyway" : "Promote anyway"}
                </Button>
              </Group>
            </Stack>
          </Alert>
        )}
      </Stack>
      {/* The row wraps: at any width every button stays inside the modal (a long verify
          label beside Close used to push Close out of it). */}
      <Group justify="space-between" mt="md" gap="xs" data-testid="rotation-buttons">
        <Group gap="xs">
          {active === 1 && !rotation && (
            <Button
              variant="default"
              onClick={() => {
                setChosen(false);
                setError(null);
              }}
              data-testid="rotation-back"
            >
              Back
            </Button>
          )}
          {actions?.roll_back && confirm !== "rollback" && (
            <Button
              variant="subtle"
              color="orange"
              onClick={() => setConfirm("rollback")}
              data-testid="rotation-rollback"
            >
              Roll back…
            </Button>
          )}
        </Group>
        <Group gap="xs" justify="flex-end" ml="auto">
          {error && rotation && (
            <Button
              variant="light"
              loading={busy === "resume"}
              onClick={() => run("resume", () => call("resume_rotation", { id: rid }))}
              data-testid="rotation-retry"
            >
              Retry
            </Button>
          )}
          {active === 0 && (
            <Button onClick={() => setChosen(true)} data-testid="rotation-next">
              Next
            </Button>
          )}
          {active === 1 && !rotation && cert && (
            <Button
              loading={busy === "stage"}
              disabled={
                profile === undefined ||
                !form.id.trim() ||
                !form.certificatePem.trim() ||
                !form.privateKeyPem.trim()
              }
              onClick={stageCertificate}
              data-testid="rotation-stage"
            >
              Upload new certificate
            </Button>
          )}
          {active === 1 && !rotation && !cert && (
            <Button
              color={force ? "red" : undefined}
              loading={busy === "stage"}
              disabled={profile === undefined}
              onClick={stage}
              data-testid="rotation-stage"
            >
              Stage new secret
            </Button>
          )}
          {active === 1 && rotation?.step === "staged" && (
            <Button
              loading={busy === "acknowledge"}
              onClick={() => run("acknowledge", () => call("acknowledge_secret", { id: rid }))}
              data-testid="rotation-stored"
            >
              I have stored it — verify next
            </Button>
          )}
          {active === 2 && actions?.verify && (
            <Button
              loading={busy === "verify"}
              onClick={() => run("verify", () => call("verify_rotation", { id: rid }))}
              data-testid="rotation-verify"
            >
              {cert
                ? rotation?.verify_attempts
                  ? "Test the handshake again"
                  : "Test the handshake with the new certificate"
                : rotation?.verify_attempts
                  ? "Send the test again"
                  : "Send test webhook"}
            </Button>
          )}
          {active === 3 && actions?.promote && (
            <Button
              loading={busy === "promote"}
              onClick={() =>
                run("promote", () => call("promote_rotation", { id: rid, skipVerify: false }))
              }
              data-testid="rotation-promote"
            >
              {cert ? "Activate" : "Promote now"}
            </Button>
          )}
          <Button variant="default" onClick={onClose} data-testid="rotation-close">
            {active === 4 ? "Close" : "Close (resume later)"}
          </Button>
        </Group>
      </Group>
    </Modal>
  );
}
