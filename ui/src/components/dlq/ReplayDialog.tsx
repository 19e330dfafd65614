// The replay dialog: dry-run count first, optional trial batch, a rate limit, then start.
// The session id is minted when the dialog opens and sent with every click, so a double click
// or a retry lands on the same session (the core keeps one outbox row per session id).
import {
  Alert,
  Badge,
  Button,
  Checkbox,
  Group,
  Modal,
  NumberInput,
  Stack,
  Text,
} from "@mantine/core";
import { useEffect, useState } from "react";
import type { ReplaySelectionInput, ReplayWriteState } from "../../ipc/bindings";
import { call } from "../../ipc/client";
import { useDryRun, useReplayWrites, useStartReplay } from "../../ipc/dlqQueries";

const stateWords: Record<ReplayWriteState, { label: string; color: string }> = {
  saved_locally: { label: "Saved locally", color: "gray" },
  sent: { label: "Sent", color: "blue" },
  confirmed: { label: "Confirmed", color: "green" },
  needs_attention: { label: "Needs attention", color: "red" },
};

export function WriteBadge({ sessionId }: { sessionId: string }) {
  const writes = useReplayWrites();
  const write = writes.data?.find((w) => w.session_id === sessionId && w.action === "start");
  if (!write) return null;
  const w = stateWords[write.state];
  return (
    <Badge
      color={w.color}
      data-testid={`write-state-${sessionId}`}
      title={write.error ?? undefined}
    >
      {w.label}
    </Badge>
  );
}

export type ReplayDialogProps = {
  opened: boolean;
  onClose: () => void;
  /** What to replay. */
  selection: ReplaySelectionInput;
  /** For a trial batch of a filter replay: the ids to try first (oldest loaded first). */
  trialCandidates: string[];
  onStarted: (sessionId: string) => void;
};

export function ReplayDialog({
  opened,
  onClose,
  selection,
  trialCandidates,
  onStarted,
}: ReplayDialogProps) {
  const [sessionId, setSessionId] = useState<string | null>(null);
  const [rate, setRate] = useState<number | string>(10);
  const [trial, setTrial] = useState(false);
  const [trialSize, setTrialSize] = useState<number | string>(10);
  const [trialStarted, setTrialStarted] = useState(false);
  const dryRun = useDryRun();
  const start = useStartReplay();
  const { mutate: countNow } = dryRun;

  // A new draft id (and a fresh count) each time the dialog opens.
  useEffect(() => {
    if (!opened) return;
    setSessionId(null);
    setTrialStarted(false);
    call("new_replay_id", {}).then(setSessionId);
    countNow(selection);
  }, [opened, selection, countNow]);

  const rateValue = typeof rate === "number" && rate > 0 ? rate : null;
  const canTrial = selection.by === "filter" && trialCandidates.length > 0;
  const trialIds = trialCandidates.slice(0, Number(trialSize) || 0);

  const startTrial = () => {
    if (!sessionId || trialIds.length === 0) return;
    const id = `${sessionId}-trial`;
    start.mutate(
      { session_id: id, selection: { by: "ids", delivery_ids: trialIds }, rate_per_s: rateValue },
      {
        onSuccess: () => {
          setTrialStarted(true);
          onStarted(id);
        },
      },
    );
  };
  const startAll = () => {
    if (!sessionId) return;
    start.mutate(
      { session_id: sessionId, selection, rate_per_s: rateValue },
      { onSuccess: () => onStarted(sessionId) },
    );
  };

  return (
    <Modal opened={opened} onClose={onClose} title="Replay dead deliveries" size="lg">
      <Stack>
        <Text data-testid="dry-run-count">
          {dryRun.isPending && "Counting…"}
          {dryRun.isSuccess &&
            `${dryRun.data} dead ${dryRun.data === 1 ? "delivery" : "deliveries"} would be replayed${
              selection.by === "filter" ? " (everything matching this filter, oldest first)" : ""
            }.`}
        </Text>
        {dryRun.isError && <Alert color="red">{dryRun.error.message}</Alert>}
        <NumberInput
          label="Rate limit (re-deliveries per second)"
          description="Empty = as fast as the control plane goes"
          min={0.1}
          value={rate}
          onChange={setRate}
          data-testid="replay-rate"
        />
        {canTrial && (
          <Group align="end">
            <Checkbox
              label="Trial batch first: replay the first N, look, then the rest"
              checked={trial}
              onChange={(e) => setTrial(e.currentTarget.checked)}
              data-testid="replay-trial"
            />
            {trial && (
              <NumberInput
                w={100}
                min={1}
                max={1000}
                value={trialSize}
                onChange={setTrialSize}
                aria-label="Trial size"
              />
            )}
          </Group>
        )}
        {start.isError && (
          <Alert color="red" data-testid="replay-error">
            {start.error.message}
          </Alert>
        )}
        <Group justify="space-between">
          <Group gap="xs">
            {sessionId && (
              <Text size="xs" c="dimmed">
                session {sessionId}
              </Text>
            )}
            {sessionId && <WriteBadge sessionId={sessionId} />}
          </Group>
          <Group>
            {trial && canTrial && !trialStarted && (
              <Button
                onClick={startTrial}
                disabled={!sessionId || start.isPending}
                data-testid="replay-start-trial"
              >
                Replay first {trialIds.length}
              </Button>
            )}
            {(!trial || trialStarted || !canTrial) && (
              <Button
                onClick={startAll}
                disabled={!sessionId || dryRun.data === 0}
                loading={start.isPending}
                data-testid="replay-start"
              >
                {trialStarted ? "Replay the rest" : "Start replay"}
              </Button>
            )}
          </Group>
        </Group>
      </Stack>
    </Modal>
  );
}
