// "Retire…": a guided retirement of one resource. Impact (the server's dry run: flows that
// reference it, pending deliveries, DLQ depth, open replays) → options (grace period, retire the
// flows first, keep or purge dead deliveries) → typed-name confirmation → live progress through
// draining, disabled, scheduled and deleted, with Cancel while it is cancellable. The start is
// queued through the outbox under an id minted when the dialog opens, so a double click or a
// lost answer starts one retirement.
import {
  Alert,
  Button,
  Checkbox,
  Group,
  List,
  Loader,
  Modal,
  SegmentedControl,
  Stack,
  Stepper,
  Text,
  TextInput,
} from "@mantine/core";
import { useState } from "react";
import type { IpcError, ResourceKind } from "../../ipc/bindings";
import { call } from "../../ipc/client";
import { useRetirement, useRetirementPreview, useStartRetirement } from "../../ipc/recoveryQueries";
import { kindLabels } from "../../lib/format";
import { useNow } from "../../lib/useNow";
import { stateWords } from "../dlq/ReplayDialog";
import { ErrorAlert } from "../ErrorAlert";
import { RetirementProgress } from "./RetirementProgress";

export function RetireDialog({
  kind,
  name,
  onClose,
}: {
  kind: ResourceKind;
  name: string;
  onClose: () => void;
}) {
  const [step, setStep] = useState(0);
  const [cascade, setCascade] = useState(false);
  const [grace, setGrace] = useState("0s");
  const [dlq, setDlq] = useState<"keep" | "purge">("keep");
  const [typed, setTyped] = useState("");
  const [id, setId] = useState<string | null>(null);
  const preview = useRetirementPreview(kind, name, cascade, step <= 2);
  const start = useStartRetirement();
  const retirement = useRetirement(id && step === 3 ? id : null);
  const now = useNow(1000);
  const one = kindLabels[kind].one.toLowerCase();
  const impact = preview.data?.impact;
  const write = retirement.data?.start ?? start.data?.start ?? null;

  const begin = async () => {
    const fresh = id ?? (await call("new_retirement_id", {}));
    setId(fresh);
    start.mutate(
      { id: fresh, kind, name, grace, cascade_flows: cascade, dlq },
      { onSuccess: () => setStep(3) },
    );
  };

  return (
    <Modal
      opened
      onClose={onClose}
      title={`Retire ${one} ${name}`}
      size="lg"
      data-testid="retire-dialog"
    >
      <Stepper active={step} size="sm">
        <Stepper.Step label="Impact">
          {preview.isLoading && <Loader size="sm" />}
          {preview.error && (
            <ErrorAlert error={preview.error as unknown as IpcError} title="No preview" />
          )}
          {impact && (
            <Stack gap="xs" data-testid="retire-impact">
              <Text size="sm">
                {impact.flows.length === 0
                  ? "No flow references it."
                  : `Flows that reference it: ${impact.flows.join(", ")}.`}
              </Text>
              <Text size="sm">
                {impact.pending_deliveries} pending deliveries finish or die before it is deleted.
              </Text>
              <Text size="sm">{impact.dlq_depth} dead deliveries in the DLQ.</Text>
              <Text size="sm">
                {impact.open_replays.length === 0
                  ? "No replay is running through it."
                  : `Replays running: ${impact.open_replays.join(", ")}.`}
              </Text>
              {preview.data?.would_start === "blocked" && (
                <Alert color="orange" title="It would stop at blocked">
                  {preview.data.blockers
                    .map((b) => (b.name ? `${b.kind} ${b.name}` : b.kind))
                    .join(", ")}{" "}
                  must go first: retire the flows with it (next step) or remove them.
                </Alert>
              )}
            </Stack>
          )}
        </Stepper.Step>
        <Stepper.Step label="Options">
          <Stack gap="sm">
            {kind !== "flow" && (
              <Checkbox
                label="Retire the flows that reference it first"
                checked={cascade}
                onChange={(e) => setCascade(e.currentTarget.checked)}
                data-testid="retire-cascade"
              />
            )}
            <TextInput
              label="Grace period before the delete (cancellable)"
              description="e.g. 0s, 10m, 1h, 7d"
              value={grace}
              onChange={(e) => setGrace(e.currentTarget.value)}
              data-testid="retire-grace"
            />
            <div>
              <Text size="sm" fw={500}>
                Dead deliveries
              </Text>
              <SegmentedControl
                value={dlq}
                onChange={(v) => setDlq(v as "keep" | "purge")}
                data={[
                  { value: "keep", label: "Keep (browsable)" },
                  { value: "purge", label: "Purge with it" },
                ]}
                data-testid="retire-dlq"
              />
            </div>
          </Stack>
        </Stepper.Step>
        <Stepper.Step label="Confirm">
          <Stack gap="sm">
            <Text size="sm">
              The {one} stops taking new work now and is deleted once drained
              {grace !== "0s" && grace !== "0" ? ` and ${grace} later` : ""}. Type its name to go
              on.
            </Text>
            <List size="sm">
              {cascade && impact && impact.flows.length > 0 && (
                <List.Item>Flows retired first: {impact.flows.join(", ")}</List.Item>
              )}
              <List.Item>Dead deliveries: {dlq === "purge" ? "purged" : "kept"}</List.Item>
            </List>
            <TextInput
              label={`Type ${name}`}
              value={typed}
              onChange={(e) => setTyped(e.currentTarget.value)}
              data-testid="retire-typed"
            />
            {start.error && (
              <ErrorAlert error={start.error as unknown as IpcError} title="Not started" />
            )}
          </Stack>
        </Stepper.Step>
        <Stepper.Completed>
          <Stack gap="sm">
            {write && (
              <Text size="sm" data-testid="retire-write-state">
                Start: {stateWords[write.state].label}
                {write.error ? ` — ${write.error}` : ""}
              </Text>
            )}
            {retirement.data?.server ? (
              <RetirementProgress r={retirement.data.server} now={now} />
            ) : (
              <Text size="sm" c="dimmed">
                Saved locally; waiting for the control plane to take it…
              </Text>
            )}
          </Stack>
        </Stepper.Completed>
      </Stepper>
      <Group justify="flex-end" mt="md">
        {step > 0 && step < 3 && (
          <Button variant="default" onClick={() => setStep(step - 1)}>
            Back
          </Button>
        )}
        {step < 2 && (
          <Button onClick={() => setStep(step + 1)} disabled={!impact} data-testid="retire-next">
            Next
          </Button>
        )}
        {step === 2 && (
          <Button
            color="red"
            disabled={typed !== name}
            loading={start.isPending}
            onClick={begin}
            data-testid="retire-start"
          >
            Retire {name}
          </Button>
        )}
        {step === 3 && (
          <Button variant="default" onClick={onClose} data-testid="retire-close">
            Close
          </Button>
        )}
      </Group>
    </Modal>
  );
}
