// The certificate path of the rotation wizard (RotationWizard.tsx drives it): the upload form
// (id, chain and key, typed or read from files in the webview), the staged certificate as the
// control plane listed it, the handshake test, activation and the end. The key is held by the
// wizard's state only until the upload call returns; nothing here stores it.
import {
  Alert,
  Badge,
  Button,
  Code,
  FileButton,
  Group,
  Loader,
  Stack,
  Table,
  Text,
  Textarea,
  TextInput,
} from "@mantine/core";
import type { CertificateView, IpcError, RotationView } from "../../ipc/bindings";
import { useResource } from "../../ipc/queries";
import {
  type CertificateField,
  certificateField,
  NEVER_OVER_HTTP,
  stepWords,
  withoutTls,
} from "../../lib/rotation";
import { VerifyResultAlert } from "./RotationSteps";

const at = (iso: string) => new Date(iso).toLocaleString();

export type CertificateForm = {
  id: string;
  certificatePem: string;
  privateKeyPem: string;
};

/** The refusal's message under the input it names (without the field's name the control
 * plane puts before it: the input's label says which). */
function fieldError(error: IpcError | null, field: CertificateField): string | undefined {
  const problem = error?.problem;
  if (certificateField(problem?.field) !== field) return undefined;
  const message = problem?.message ?? error?.message ?? "";
  const prefix = `${problem?.field}: `;
  return message.startsWith(prefix) ? message.slice(prefix.length) : message;
}

/** A PEM textarea with a "Load file…" button that reads the file in the webview. */
function PemInput({
  label,
  description,
  value,
  onChange,
  error,
  testid,
  accept,
}: {
  label: string;
  description: string;
  value: string;
  onChange: (v: string) => void;
  error?: string;
  testid: string;
  accept: string;
}) {
  // The hidden <input type="file"> (a test selects a file through it).
  const fileInput = { name: testid, "data-testid": `${testid}-file` };
  const read = (file: File | null) => {
    if (!file) return;
    const reader = new FileReader();
    reader.onload = () => onChange(typeof reader.result === "string" ? reader.result : "");
    reader.readAsText(file);
  };
  return (
    <Stack gap={4}>
      <Textarea
        label={label}
        description={description}
        value={value}
        onChange={(e) => onChange(e.currentTarget.value)}
        error={error}
        autosize
        minRows={3}
        maxRows={8}
        spellCheck={false}
        styles={{ input: { fontFamily: "monospace", fontSize: 12 } }}
        data-testid={testid}
      />
      <Group justify="flex-end">
        <FileButton onChange={read} accept={accept} inputProps={fileInput}>
          {(props) => (
            <Button {...props} size="compact-xs" variant="subtle">
              Load file…
            </Button>
          )}
        </FileButton>
      </Group>
    </Stack>
  );
}

/** Step 1 of the certificate path, before the upload. */
export function CertificateStageForm({
  form,
  onForm,
  error,
}: {
  form: CertificateForm;
  onForm: (f: CertificateForm) => void;
  error: IpcError | null;
}) {
  return (
    <Stack gap="sm">
      <TextInput
        label="Certificate id"
        description="Letters, digits and . _ : - (the upload is idempotent by it)"
        value={form.id}
        onChange={(e) => onForm({ ...form, id: e.currentTarget.value })}
        error={fieldError(error, "certificate_id")}
        data-testid="rotation-cert-id"
      />
      <PemInput
        label="Certificate chain (PEM)"
        description="The client certificate first, then each certificate that issued the one before it"
        value={form.certificatePem}
        onChange={(v) => onForm({ ...form, certificatePem: v })}
        error={fieldError(error, "certificate_pem")}
        testid="rotation-cert-pem"
        accept=".pem,.crt,.cer"
      />
      <PemInput
        label="Private key (PEM)"
        description="Sent to the control plane once, sealed there; the console never stores it"
        value={form.privateKeyPem}
        onChange={(v) => onForm({ ...form, privateKeyPem: v })}
        error={fieldError(error, "private_key_pem")}
        testid="rotation-cert-key"
        accept=".pem,.key"
      />
      <Text size="xs" c="dimmed">
        The certificate is uploaded staged: deliveries keep presenting the active one until you
        activate the new one. Offline, nothing is uploaded or saved.
      </Text>
    </Stack>
  );
}

/** A certificate as the control plane listed it. */
export function CertificateCard({ cert, title }: { cert: CertificateView; title: string }) {
  return (
    <Stack gap={4} data-testid="rotation-cert-card">
      <Group gap="xs">
        <Text size="sm" fw={500}>
          {title}
        </Text>
        <Code>{cert.id}</Code>
        <Badge size="sm" variant="light">
          {cert.state}
        </Badge>
      </Group>
      <Table fz="xs" withRowBorders={false} verticalSpacing={2}>
        <Table.Tbody>
          <Table.Tr>
            <Table.Td c="dimmed">Subject</Table.Td>
            <Table.Td data-testid="rotation-cert-subject">{cert.subject}</Table.Td>
          </Table.Tr>
          <Table.Tr>
            <Table.Td c="dimmed">SHA-256</Table.Td>
            <Table.Td
              style={{ wordBreak: "break-all", fontFamily: "monospace" }}
              data-testid="rotation-cert-fingerprint"
            >
              {cert.fingerprint_sha256}
            </Table.Td>
          </Table.Tr>
          <Table.Tr>
            <Table.Td c="dimmed">Expires</Table.Td>
            <Table.Td data-testid="rotation-cert-not-after">{at(cert.not_after)}</Table.Td>
          </Table.Tr>
        </Table.Tbody>
      </Table>
    </Stack>
  );
}

/** Step 2 of the certificate path: the staged certificate and the handshake test with it. */
export function CertificateVerifyBody({ rotation }: { rotation: RotationView }) {
  const v = rotation.verify_result;
  return (
    <Stack gap="sm">
      <PlainHttpWarning target={rotation.target} />
      {rotation.new_certificate && (
        <CertificateCard cert={rotation.new_certificate} title="Uploaded, staged" />
      )}
      <Text size="sm">
        A test webhook whose TLS handshake presents the new certificate only: a 2xx proves the
        receiver already trusts it. Deliveries keep presenting{" "}
        {rotation.old_certificate_id ? (
          <Code>{rotation.old_certificate_id}</Code>
        ) : (
          "no certificate"
        )}{" "}
        meanwhile.
      </Text>
      {rotation.step === "verifying" && (
        <Group gap="xs">
          <Loader size="xs" />
          <Text size="sm">Testing the handshake, waiting for the receiver…</Text>
        </Group>
      )}
      {v && rotation.step !== "verifying" && <VerifyResultAlert rotation={rotation} />}
    </Stack>
  );
}

/** Step 3 of the certificate path: activate. */
export function CertificatePromoteBody({ rotation }: { rotation: RotationView }) {
  const old = rotation.old_certificate;
  return (
    <Stack gap="sm">
      <VerifyResultAlert rotation={rotation} />
      {rotation.step === "promoting" ? (
        <Group gap="xs">
          <Loader size="xs" />
          <Text size="sm">
            Activating <Code>{rotation.new_certificate_id}</Code> (key{" "}
            <Code>{rotation.id}:promote</Code>)…
          </Text>
        </Group>
      ) : (
        <Text size="sm">
          <b>Activate</b>: every delivery presents <Code>{rotation.new_certificate_id}</Code> from
          then on.{" "}
          {old
            ? `The current one, ${old.id}, is retired and can be activated again (roll back) until it expires ${at(old.not_after)}.`
            : "The target had no active certificate."}
        </Text>
      )}
    </Stack>
  );
}

/** The target's URL is not https: a client certificate is never presented to it. */
function PlainHttpWarning({ target }: { target: string }) {
  const resource = useResource("target", target);
  if (!withoutTls(resource.data)) return null;
  return (
    <Alert color="orange" title="This target is not https" data-testid="rotation-plain-http">
      {NEVER_OVER_HTTP} A test answered over http verifies nothing about the certificate, and
      activating it changes nothing for deliveries until the target's URL is https.
    </Alert>
  );
}

/** The end of the certificate path. */
export function CertificateDoneBody({ rotation }: { rotation: RotationView }) {
  const words = stepWords[rotation.step];
  const plain = withoutTls(useResource("target", rotation.target).data);
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
      {rotation.step === "done" && plain && (
        <Text size="sm" data-testid="rotation-done-plain-http">
          <Code>{rotation.new_certificate_id}</Code> is the active certificate, but deliveries to
          this target's http URL present none. {NEVER_OVER_HTTP}
        </Text>
      )}
      {rotation.step === "done" && !plain && (
        <Text size="sm">
          Deliveries present <Code>{rotation.new_certificate_id}</Code>
          {rotation.new_certificate && ` (${rotation.new_certificate.subject})`}.{" "}
          {rotation.actions.roll_back && rotation.old_certificate_id
            ? `Roll back activates ${rotation.old_certificate_id} again while it has not expired.`
            : ""}
        </Text>
      )}
      {rotation.step === "rolling_back" && (
        <Group gap="xs">
          <Loader size="xs" />
          <Text size="sm">Activating {rotation.old_certificate_id} again…</Text>
        </Group>
      )}
      {rotation.step === "rolled_back" && (
        <Text size="sm">
          {rotation.old_certificate_id
            ? `Deliveries present ${rotation.old_certificate_id} as before the rotation; ${rotation.new_certificate_id} is not presented (staged or retired).`
            : `${rotation.new_certificate_id} is not presented.`}
        </Text>
      )}
    </Stack>
  );
}

/** What a roll back does, for its confirmation. */
export function certificateRollbackWords(rotation: RotationView): string {
  if (rotation.step === "done") {
    return `${rotation.old_certificate_id} is activated again: deliveries present it, and ${rotation.new_certificate_id} is retired. A receiver that no longer trusts the old one fails.`;
  }
  return `Ends the rotation. ${rotation.new_certificate_id} was never presented by deliveries and stays staged, unused.`;
}
