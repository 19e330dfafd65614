// The bodies of the rotation wizard's steps (RotationWizard.tsx drives them): what is chosen,
// the new secret shown once with the receiver's instructions, the verify result, the promote
// choice and the end. They hold no state of the procedure: the rotation row does.
import {
  Alert,
  Badge,
  Button,
  Checkbox,
  Code,
  CopyButton,
  Group,
  List,
  Loader,
  Radio,
  SegmentedControl,
  Stack,
  Text,
} from "@mantine/core";
import type { Credential, RotationView } from "../../ipc/bindings";
import { overlaps, stepWords, verifyWords } from "../../lib/rotation";

const at = (iso: string) => new Date(iso).toLocaleString();

/** Step 0: what is rotated. */
export function ChooseBody({
  credential,
  onCredential,
}: {
  credential: Credential;
  onCredential: (c: Credential) => void;
}) {
  return (
    <Radio.Group
      value={credential}
      onChange={(v) => onCredential(v === "certificate" ? "certificate" : "secret")}
      label="What do you rotate?"
    >
      <Stack gap="xs" mt="xs">
        <Radio
          value="secret"
          label="Signing secret"
          description="A new whsec_ secret signs beside the current one during an overlap; the receiver accepts both, then the old one ends."
          data-testid="rotation-choose-secret"
        />
        <Radio
          value="certificate"
          label="Client certificate (mTLS)"
          description="Upload a new certificate staged, test the TLS handshake with it, then activate it; the old one can be activated again until it expires."
          data-testid="rotation-choose-certificate"
        />
      </Stack>
    </Radio.Group>
  );
}

/** Step 1 before anything is saved: the overlap, and "force" for a leaked secret. */
export function StageOptions({
  overlap,
  onOverlap,
  force,
  onForce,
}: {
  overlap: string;
  onOverlap: (v: string) => void;
  force: boolean;
  onForce: (v: boolean) => void;
}) {
  return (
    <Stack gap="sm">
      <div>
        <Text size="sm" fw={500}>
          Overlap: how long the current secret keeps signing beside the new one
        </Text>
        <SegmentedControl
          value={overlap}
          onChange={onOverlap}
          disabled={force}
          data={overlaps.map((o) => ({ value: o.value, label: o.label }))}
          data-testid="rotation-overlap"
        />
      </div>
      <Checkbox
        label="The current secret leaked: expire it now (no overlap)"
        checked={force}
        onChange={(e) => onForce(e.currentTarget.checked)}
        data-testid="rotation-force"
      />
      {force && (
        <Alert color="red" title="Deliveries fail until the receiver has the new secret">
          Every older secret stops signing at once, and a rotation already open is overridden. Use
          it for a leaked secret only.
        </Alert>
      )}
    </Stack>
  );
}

/** Step 1 once saved: sending, then the value shown once with what the receiver must do. */
export function StagedBody({
  rotation,
  value,
  target,
}: {
  rotation: RotationView;
  value: string | null;
  target: string;
}) {
  if (rotation.step === "staging") {
    return (
      <Group gap="xs" data-testid="rotation-staging">
        <Loader size="xs" />
        <Text size="sm">
          Saved locally; sending to the control plane under key <Code>{rotation.id}:stage</Code>.
          Offline, it stays queued and the new secret is made once, when the control plane answers.
        </Text>
      </Group>
    );
  }
  const ends = rotation.old_secrets[0]?.expires_at;
  return (
    <Stack gap="sm">
      {value ? (
        <>
          <Alert color="yellow" title="Shown once">
            Switchyard does not keep this value. Hand it to the owner of {target}'s receiver over a
            secure channel.
          </Alert>
          <Group wrap="nowrap" align="center">
            <Code
              block
              style={{ flex: 1, wordBreak: "break-all" }}
              data-testid="rotation-secret-value"
            >
              {value}
            </Code>
            <CopyButton value={value}>
              {({ copied, copy }) => (
                <Button variant="light" onClick={copy} data-testid="rotation-secret-copy">
                  {copied ? "Copied" : "Copy"}
                </Button>
              )}
            </CopyButton>
          </Group>
        </>
      ) : (
        <Alert color="orange" title="The value can no longer be shown">
          The control plane no longer holds the stage's answer. If the receiver does not have the
          new secret, roll back and rotate again.
        </Alert>
      )}
      <Text size="sm" fw={500}>
        On the receiver
      </Text>
      <List size="sm" data-testid="rotation-instructions">
        <List.Item>
          Add the new secret beside the current one; do not remove the old one yet.
        </List.Item>
        <List.Item>
          Accept a request when any <Code>v1,</Code> signature in <Code>webhook-signature</Code>{" "}
          verifies with any secret you hold.
        </List.Item>
        <List.Item>
          {ends
            ? `The old secret keeps signing until ${at(ends)}, or until you promote the new one.`
            : "The old secret stopped signing (forced rotation): only the new one signs."}
        </List.Item>
      </List>
    </Stack>
  );
}

/** Step 2: the test webhook signed with the new secret only. */
export function VerifyBody({ rotation }: { rotation: RotationView }) {
  const v = rotation.verify_result;
  return (
    <Stack gap="sm">
      <Text size="sm">
        A test webhook signed with the new secret <Code>{rotation.new_secret_id}</Code> only: a 2xx
        proves the receiver already accepts it.
      </Text>
      {rotation.step === "verifying" && (
        <Group gap="xs">
          <Loader size="xs" />
          <Text size="sm">Test webhook queued, waiting for the receiver's answer…</Text>
        </Group>
      )}
      {v && rotation.step !== "verifying" && <VerifyResultAlert rotation={rotation} />}
    </Stack>
  );
}

/** The last verify's answer (also shown on the promote step: why promoting is safe). */
export function VerifyResultAlert({ rotation }: { rotation: RotationView }) {
  const v = rotation.verify_result;
  if (!v) return null;
  // Answered over http: nothing about the certificate was tested.
  const untested = v.certificate_presented === false && v.status !== null;
  return (
    <Alert
      color={v.ok ? "green" : "red"}
      title={
        v.ok
          ? "Verified"
          : untested
            ? `Verify attempt ${v.attempt}: no certificate presented`
            : `Verify attempt ${v.attempt} failed`
      }
      data-testid="rotation-verify-result"
    >
      {verifyWords(v, rotation.credential)}
      {!v.ok &&
        (untested
          ? " Change the target's URL to https and test again, or roll back."
          : rotation.credential === "certificate"
            ? " Make the receiver trust the new certificate's issuer and test again, or roll back."
            : " Fix the receiver and send the test again, or roll back.")}
    </Alert>
  );
}

/** Step 3: end the overlap now, or let it end by itself. */
export function PromoteBody({ rotation }: { rotation: RotationView }) {
  const ends = rotation.old_secrets[0]?.expires_at;
  return (
    <Stack gap="sm">
      <VerifyResultAlert rotation={rotation} />
      {rotation.step === "promoting" ? (
        <Group gap="xs">
          <Loader size="xs" />
          <Text size="sm">Expiring the older secrets…</Text>
        </Group>
      ) : (
        <>
          <Text size="sm">
            <b>Promote now</b>: the older secrets stop signing at once; a receiver that only knows
            them fails from then on.
          </Text>
          {ends && (
            <Text size="sm">
              <b>Or wait</b>: the overlap ends by itself at {at(ends)} and the new secret signs
              alone. You can close this window; the rotation is done then.
            </Text>
          )}
        </>
      )}
    </Stack>
  );
}

/** The end: done, rolled back, or stopped with the control plane's problem. */
export function DoneBody({ rotation }: { rotation: RotationView }) {
  const words = stepWords[rotation.step];
  return (
    <Stack gap="sm" data-testid="rotation-done">
      <Group gap="xs">
        <Badge color={words.color} data-testid="rotation-final-step">
          {words.label}
        </Badge>
        <Text size="sm" c="dimmed">
          {rotation.id}
        </Text>
      </Group>
      {rotation.step === "done" && (
        <Text size="sm">
          Only the new secret <Code>{rotation.new_secret_id}</Code> signs. The receiver may drop the
          old one.
        </Text>
      )}
      {rotation.step === "rolling_back" && (
        <Group gap="xs">
          <Loader size="xs" />
          <Text size="sm">Expiring the new secret…</Text>
        </Group>
      )}
      {rotation.step === "rolled_back" && (
        <Text size="sm">
          The new secret is expired; the old one signs again, without an expiry, as before.
        </Text>
      )}
    </Stack>
  );
}
