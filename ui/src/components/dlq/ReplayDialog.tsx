// The replay dialog: dry-run count and breakdown first, optional trial batch, a rate limit,
// then start. The session id is minted when the dialog opens and sent with every click, so a
// double click or a retry lands on the same session (the core keeps one outbox row per
// session id). A trial batch keeps the dialog open: it follows the trial, then offers
// "Replay the rest" (the same filter, dead before the trial began).
import {
  Alert,
  Badge,
  Button,
  Checkbox,
  Group,
  Modal,
  NumberInput,
  Stack,
  Table,
  Text,
} from "@mantine/core";
import { useEffect, useState } from "react";
import type {
  DlqCauseView,
  DlqFilterInput,
  ReplaySelectionInput,
  ReplayWriteState,
} from "../../ipc/bindings";
import { call } from "../../ipc/client";
import { useDryRun, useReplay, useReplayWrites, useStartReplay } from "../../ipc/dlqQueries";
import { useActiveProfile } from "../../ipc/queries";
import { isFilterEmpty } from "../../lib/dlq";
import {
  failureSummary,
  replayOutcome,
  restFilter,
  saveTrial,
  stillFailing,
  trialPlan,
} from "../../lib/replay";
import { useRoleRefusal } from "../../lib/roles";

export const stateWords: Record<ReplayWriteState, { label: string; color: string }> = {
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

/** "target = legacy-erp, error class = timeout", for the dialog's sentence. */
export function filterWords(f: DlqFilterInput): string {
  const parts: string[] = [];
  for (const key of ["endpoint", "target", "flow"] as const) {
    if (f[key]) parts.push(`${key} = ${f[key]}`);
  }
  if (f.error_class) parts.push(`error class = ${f.error_class}`);
  if (f.since !== null) parts.push(`dead since ${new Date(f.since).toLocaleString()}`);
  if (f.until !== null) parts.push(`dead before ${new Date(f.until).toLocaleString()}`);
  return parts.join(", ");
}

/** What would be replayed, by target and error class: read with the count (one dry run), so
 * its rows add up to the headline's figure. */
function Breakdown({ causes, count }: { causes: DlqCauseView[]; count: number }) {
  const rows = causes.slice(0, 6);
  if (!rows.length) return null;
  const sum = causes.reduce((n, c) => n + c.count, 0);
  return (
    <Stack gap={4}>
      <Table withTableBorder data-testid="replay-breakdown">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Target</Table.Th>
            <Table.Th>Error class</Table.Th>
            <Table.Th>Dead deliveries</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((c) => (
            <Table.Tr key={`${c.target}/${c.error_class}`}>
              <Table.Td>{c.target}</Table.Td>
              <Table.Td>{c.error_class}</Table.Td>
              <Table.Td>{c.count}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {causes.length > rows.length && (
        <Text size="xs" c="dimmed">
          {causes.length - rows.length} more groups; {sum} in all.
        </Text>
      )}
      {sum > count && (
        <Text size="xs" c="dimmed" data-testid="replay-breakdown-cap">
          {sum} match; one session replays at most {count}, oldest first.
        </Text>
      )}
    </Stack>
  );
}

export type ReplayDialogProps = {
  opened: boolean;
  onClose: () => void;
  /** What to replay. */
  selection: ReplaySelectionInput;
  /** For a trial batch of a filter replay: the ids to try first (oldest loaded first). */
  trialCandidates: string[];
  /** A replay (not a trial) was started: the caller shows it. */
  onStarted: (sessionId: string) => void;
  /** Replaying the rest of a trial: the session id is the one planned for the rest. */
  restOf?: { sessionId: string };
};

export function ReplayDialog({
  opened,
  onClose,
  selection,
  trialCandidates,
  onStarted,
  restOf,
}: ReplayDialogProps) {
  const profile = useActiveProfile();
  const [sessionId, setSessionId] = useState<string | null>(restOf?.sessionId ?? null);
  const [rate, setRate] = useState<number | string>(10);
  const [trial, setTrial] = useState(false);
  const [trialSize, setTrialSize] = useState<number | string>(10);
  const [trialId, setTrialId] = useState<string | null>(null);
  const [wholeConfirmed, setWholeConfirmed] = useState(false);
  const dryRun = useDryRun();
  const start = useStartReplay();
  const { mutate: countNow } = dryRun;

  // A new draft id (and a fresh count) each time the dialog opens.
  useEffect(() => {
    if (!opened) return;
    setTrialId(null);
    setWholeConfirmed(false);
    if (restOf) setSessionId(restOf.sessionId);
    else {
      setSessionId(null);
      call("new_replay_id", {}).then(setSessionId);
    }
    countNow(selection);
  }, [opened, selection, countNow, restOf]);

  const rateValue = typeof rate === "number" && rate > 0 ? rate : null;
  const byFilter = selection.by === "filter";
  const whole = selection.by === "filter" && isFilterEmpty(selection.filter);
  const canTrial = byFilter && !restOf && trialCandidates.length > 0;
  const trialIds = trialCandidates.slice(0, Number(trialSize) || 0);
  const count = dryRun.data?.count;

  const startTrial = () => {
    if (!sessionId || trialIds.length === 0 || selection.by !== "filter" || !profile) return;
    const id = `${sessionId}-trial`;
    start.mutate(
      { session_id: id, selection: { by: "ids", delivery_ids: trialIds }, rate_per_s: rateValue },
      {
        onSuccess: () => {
          saveTrial(profile, id, {
            restSessionId: sessionId,
            filter: selection.filter,
            rate: rateValue,
          });
          setTrialId(id);
        },
      },
    );
  };
  const startAll = (what: ReplaySelectionInput = selection) => {
    if (!sessionId) return;
    start.mutate(
      { session_id: sessionId, selection: what, rate_per_s: rateValue },
      { onSuccess: () => onStarted(sessionId) },
    );
  };

  const title = restOf
    ? "Replay the rest of the trial"
    : selection.by === "ids"
      ? "Replay the selected dead deliveries"
      : whole
        ? "Replay the whole DLQ"
        : "Replay everything matching the filter";
  const sentence =
    count === undefined
      ? null
      : selection.by === "ids"
        ? `${count} selected dead ${count === 1 ? "delivery" : "deliveries"} would be replayed.`
        : whole
          ? `Every dead delivery in the DLQ would be replayed, oldest first: ${count}.`
          : `${count} dead ${count === 1 ? "delivery matches" : "deliveries match"} ${filterWords(selection.filter)}; ${count === 1 ? "it" : "they"} would be replayed, oldest first.`;
  const refused = useRoleRefusal("operator", "a replay");
  const blocked = !sessionId || count === 0 || (whole && !wholeConfirmed) || refused !== null;

  return (
    <Modal opened={opened} onClose={onClose} title={title} size="lg">
      <Stack>
        <Text data-testid="dry-run-count">
          {dryRun.isPending && "Counting…"}
          {dryRun.isSuccess && sentence}
        </Text>
        {dryRun.isError && <Alert color="red">{dryRun.error.message}</Alert>}
        {byFilter && !trialId && dryRun.data && (
          <Breakdown causes={dryRun.data.causes} count={dryRun.data.count} />
        )}
        {!trialId && (
          <NumberInput
            label="Rate limit (re-deliveries per second)"
            description="Empty = as fast as the control plane goes"
            min={0.1}
            value={rate}
            onChange={setRate}
            data-testid="replay-rate"
          />
        )}
        {canTrial && !trialId && (
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
                data-testid="replay-trial-size"
              />
            )}
          </Group>
        )}
        {whole && !trialId && (!trial || !canTrial) && (
          <Checkbox
            color="red"
            label={`Yes, replay the whole DLQ${count !== undefined ? ` (${count} deliveries)` : ""}`}
            checked={wholeConfirmed}
            onChange={(e) => setWholeConfirmed(e.currentTarget.checked)}
            data-testid="replay-confirm-all"
          />
        )}
        {trialId && selection.by === "filter" && (
          <TrialProgress trialId={trialId} onRest={startAll} starting={start.isPending} />
        )}
        {refused && (
          <Text size="sm" c="dimmed" data-testid="role-note">
            {refused}
          </Text>
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
                session {trialId ?? sessionId}
              </Text>
            )}
            {sessionId && <WriteBadge sessionId={trialId ?? sessionId} />}
          </Group>
          <Group>
            <Button variant="default" onClick={onClose} data-testid="replay-cancel-dialog">
              {trialId ? "Close" : "Cancel"}
            </Button>
            {trial && canTrial && !trialId && (
              <Button
                onClick={startTrial}
                disabled={
                  !sessionId || start.isPending || trialIds.length === 0 || refused !== null
                }
                data-testid="replay-start-trial"
              >
                Replay first {trialIds.length}
              </Button>
            )}
            {!trialId && (!trial || !canTrial) && (
              <Button
                onClick={() => startAll()}
                disabled={blocked}
                loading={start.isPending}
                color={whole ? "red" : undefined}
                data-testid="replay-start"
              >
                {restOf
                  ? `Replay the rest${count !== undefined ? ` (${count})` : ""}`
                  : "Start replay"}
              </Button>
            )}
          </Group>
        </Group>
      </Stack>
    </Modal>
  );
}

/** The trial's progress inside the dialog, and the way on: "Replay the rest (N)". After a
 * trial with failures the rest goes to a target that still fails: that needs a second,
 * explicit click that names the count and the failing target. */
function TrialProgress({
  trialId,
  onRest,
  starting,
}: {
  trialId: string;
  onRest: (rest: ReplaySelectionInput) => void;
  starting: boolean;
}) {
  const profile = useActiveProfile();
  const session = useReplay(trialId, 1000);
  const restCount = useDryRun();
  const [confirming, setConfirming] = useState(false);
  const s = session.data;
  const plan = trialPlan(profile, trialId);
  const done = s !== undefined && s.status !== "running";
  const { mutate: countRest } = restCount;
  const rest: ReplaySelectionInput | null =
    s && plan ? { by: "filter", filter: restFilter(plan, s.created_at) } : null;
  const restKey = rest ? JSON.stringify(rest) : null;
  // Counted once the trial is over (the session is read again every second while it runs).
  useEffect(() => {
    if (done && restKey) countRest(JSON.parse(restKey));
  }, [done, countRest, restKey]);
  if (!s)
    return (
      <Text size="sm" c="dimmed" data-testid="trial-progress">
        Trial {trialId} is queued; it starts when the control plane confirms it.
      </Text>
    );
  const outcome = replayOutcome(s);
  const failures = failureSummary(s);
  const n = restCount.data?.count;
  const still = stillFailing(s);
  return (
    <Stack gap="xs" data-testid="trial-progress">
      <Group gap="xs">
        <Text size="sm" fw={500}>
          Trial: {s.counts.succeeded + s.counts.failed}/{s.counts.total} done
        </Text>
        <Badge color={outcome.color} data-testid="trial-status">
          {outcome.label}
        </Badge>
      </Group>
      {failures && (
        <Alert color="red" p="xs" data-testid="trial-failures">
          {failures} Fix the target before replaying the rest.
        </Alert>
      )}
      {done && restCount.data && n !== undefined && n > 0 && (
        <Breakdown causes={restCount.data.causes} count={n} />
      )}
      {done && confirming && failures && n !== undefined && (
        <Alert color="orange" title="Replay the rest anyway?" data-testid="replay-rest-confirm">
          <Stack gap="xs">
            <Text size="sm">
              {n} {n === 1 ? "delivery goes" : "deliveries go"} to {still}, which the trial shows
              still fails: each is re-delivered once, runs through its retry schedule and is likely
              to die again. Fix the target first unless you mean it.
            </Text>
            <Group justify="flex-end">
              <Button variant="default" size="xs" onClick={() => setConfirming(false)}>
                Keep them in the DLQ
              </Button>
              <Button
                color="orange"
                size="xs"
                loading={starting}
                onClick={() => rest && onRest(rest)}
                data-testid="replay-rest-confirm-button"
              >
                Replay {n} to {still}
              </Button>
            </Group>
          </Stack>
        </Alert>
      )}
      {done ? (
        !confirming && (
          <Group justify="flex-end">
            <Button
              onClick={() => (failures ? setConfirming(true) : rest && onRest(rest))}
              loading={starting}
              disabled={n === 0 || restCount.isPending}
              color={failures ? "orange" : undefined}
              data-testid="replay-rest"
            >
              {n === undefined
                ? "Replay the rest"
                : n === 0
                  ? "Nothing left to replay"
                  : `Replay the rest (${n})${failures ? " anyway…" : ""}`}
            </Button>
          </Group>
        )
      ) : (
        <Text size="sm" c="dimmed">
          "Replay the rest" comes once the trial is done; each re-delivery follows the normal retry
          schedule, so a failing target takes a while.
        </Text>
      )}
    </Stack>
  );
}
