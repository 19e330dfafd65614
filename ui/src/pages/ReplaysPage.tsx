// Replay sessions: list and detail with live progress (succeeded and failed apart), per-item
// attempts, cancel, what failed and why, "Replay the rest" after a trial batch, and a warning
// when new failures reach the DLQ while a replay runs.
import {
  Alert,
  Badge,
  Button,
  Group,
  Progress,
  SimpleGrid,
  Stack,
  Table,
  Text,
  Title,
  Tooltip,
} from "@mantine/core";
import { useState } from "react";
import { DeliveryDetail } from "../components/dlq/DeliveryDetail";
import { filterWords, ReplayDialog, WriteBadge } from "../components/dlq/ReplayDialog";
import { StaleNote, Waiting } from "../components/StaleNote";
import type { ReplaySessionView } from "../ipc/bindings";
import {
  useCancelReplay,
  useDlqStats,
  useReplay,
  useReplays,
  useReplayWrites,
} from "../ipc/dlqQueries";
import { useActiveProfile } from "../ipc/queries";
import { emptyFilter } from "../lib/dlq";
import {
  failureSummary,
  itemProgress,
  progressOf,
  progressWords,
  rateWords,
  replayOutcome,
  restFilter,
  selectionWords,
  trialPlan,
} from "../lib/replay";
import { useNow } from "../lib/useNow";

const itemColor: Record<string, string | undefined> = {
  succeeded: "green",
  failed: "red",
  cancelled: "dimmed",
  skipped: "dimmed",
};

/** Succeeded in green, failed in red, cancelled in grey; what is left stays empty. */
export function ReplayBar({ s }: { s: ReplaySessionView }) {
  const p = progressOf(s);
  const c = s.counts;
  return (
    <Progress.Root size="xl" data-testid="replay-progress">
      <Tooltip label={`${c.succeeded} succeeded`}>
        <Progress.Section value={p.sections.succeeded} color="green" data-testid="bar-succeeded" />
      </Tooltip>
      <Tooltip label={`${c.failed} failed`}>
        <Progress.Section value={p.sections.failed} color="red" data-testid="bar-failed" />
      </Tooltip>
      <Tooltip label={`${c.cancelled} cancelled`}>
        <Progress.Section value={p.sections.cancelled} color="gray" />
      </Tooltip>
    </Progress.Root>
  );
}

/** The trial's "Replay the rest", unless the rest already started; a cancelled rest says so
 * and can be replayed again (a new session: the cancelled one replays nothing twice). */
function RestOfTrial({
  s,
  known,
  onStarted,
}: {
  s: ReplaySessionView;
  known: ReplaySessionView[];
  onStarted: (id: string) => void;
}) {
  const profile = useActiveProfile();
  const [open, setOpen] = useState(false);
  const plan = trialPlan(profile, s.id);
  if (!plan || s.status === "running") return null;
  const rest = known.find((k) => k.id === plan.restSessionId);
  const link = (
    <Text
      span
      td="underline"
      style={{ cursor: "pointer" }}
      onClick={() => onStarted(plan.restSessionId)}
    >
      {plan.restSessionId}
    </Text>
  );
  if (rest && rest.status !== "cancelled")
    return (
      <Text size="sm" data-testid="rest-started">
        The rest runs as {link}.
      </Text>
    );
  const selection = { by: "filter" as const, filter: restFilter(plan, s.created_at) };
  return (
    <>
      {rest && (
        <Text size="sm" data-testid="rest-cancelled">
          The rest was started as {link} and cancelled: {progressWords(rest)}. What was cancelled is
          back in the DLQ.
        </Text>
      )}
      <Group>
        <Button onClick={() => setOpen(true)} data-testid="open-replay-rest">
          {rest ? "Replay the rest again…" : "Replay the rest…"}
        </Button>
      </Group>
      {open && (
        <ReplayDialog
          opened
          onClose={() => setOpen(false)}
          selection={selection}
          trialCandidates={[]}
          restOf={rest ? undefined : { sessionId: plan.restSessionId }}
          onStarted={(id) => {
            setOpen(false);
            onStarted(id);
          }}
        />
      )}
    </>
  );
}

export function ReplayDetail({
  id,
  known,
  onSelect,
}: {
  id: string;
  known: ReplaySessionView[];
  onSelect: (id: string) => void;
}) {
  const profile = useActiveProfile();
  const [running, setRunning] = useState(true);
  const session = useReplay(id, running ? 1000 : false);
  const s = session.data;
  // Dead deliveries since the session began, minus its own failures: live traffic's new
  // failures (counted by the server, so the figure survives leaving the page).
  const since = useDlqStats(
    "error_class",
    running ? 2000 : undefined,
    s ? { ...emptyFilter(), since: s.created_at } : null,
  );
  const cancel = useCancelReplay();
  const now = useNow();
  const [open, setOpen] = useState<string | null>(null);
  if (s && running !== (s.status === "running")) setRunning(s.status === "running");
  // An unreachable control plane is said once, by the page's list; a known session stays.
  if (session.isError && !s) return null;
  if (!s) return <Text>Loading…</Text>;
  const p = progressOf(s, now);
  const outcome = replayOutcome(s);
  const failures = failureSummary(s);
  const grew = s && since.data ? since.data.total - s.counts.failed : 0;
  return (
    <Stack data-testid="replay-detail">
      <Group justify="space-between">
        <Group gap="xs">
          <Title order={4}>{s.id}</Title>
          <Badge
            data-testid="replay-status"
            data-status={s.status}
            color={outcome.color}
            className="badge-wrap"
          >
            {outcome.label}
          </Badge>
          <WriteBadge sessionId={s.id} />
        </Group>
        {s.status === "running" && (
          <Button
            color="red"
            variant="light"
            loading={cancel.isPending}
            onClick={() => cancel.mutate(s.id)}
            data-testid="replay-cancel"
          >
            Cancel
          </Button>
        )}
      </Group>
      <Text size="sm" c="dimmed" data-testid="replay-selection">
        {selectionWords(s, trialPlan(profile, s.id), filterWords)}, {rateWords(s)}
      </Text>
      {grew > 0 && s.status === "running" && (
        <Alert color="orange" data-testid="new-failures">
          {grew} new {grew === 1 ? "failure" : "failures"} reached the DLQ since this replay
          started.
        </Alert>
      )}
      <ReplayBar s={s} />
      <SimpleGrid cols={6}>
        {(["total", "succeeded", "failed", "pending", "cancelled", "skipped"] as const).map((k) => (
          <Stack key={k} gap={0}>
            <Text size="xs" c="dimmed">
              {k}
            </Text>
            <Text fw={700} data-testid={`count-${k}`} c={itemColor[k]}>
              {s.counts[k]}
            </Text>
          </Stack>
        ))}
      </SimpleGrid>
      {failures && (
        <Alert color="red" data-testid="replay-failures">
          {failures}
        </Alert>
      )}
      {s.status === "running" && (
        <Text size="sm" data-testid="replay-rate">
          {p.rate !== null ? `${p.rate.toFixed(1)} finished per second on average` : "starting…"}
          {p.left !== null ? `, about ${p.left} s left` : ""}. Each re-delivery follows the normal
          retry schedule: a failing target holds its items for several attempts.
        </Text>
      )}
      <RestOfTrial s={s} known={known} onStarted={onSelect} />
      <Table>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Original (DLQ)</Table.Th>
            <Table.Th>Re-delivery</Table.Th>
            <Table.Th>Result</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {s.items.slice(0, 500).map((i) => (
            <Table.Tr key={i.original_delivery_id} data-testid="replay-item">
              <Table.Td
                style={{ cursor: "pointer", textDecoration: "underline" }}
                onClick={() => setOpen(i.original_delivery_id)}
              >
                {i.original_delivery_id}
              </Table.Td>
              <Table.Td
                style={{ cursor: i.delivery_id ? "pointer" : undefined }}
                onClick={() => i.delivery_id && setOpen(i.delivery_id)}
              >
                {i.delivery_id ?? "-"}
              </Table.Td>
              <Table.Td>
                <Text size="sm" c={itemColor[i.status]} data-testid="replay-item-result">
                  {itemProgress(i, now)}
                </Text>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {s.items.length > 500 && (
        <Text size="sm" c="dimmed">
          First 500 of {s.items.length} items.
        </Text>
      )}
      <DeliveryDetail id={open} onClose={() => setOpen(null)} />
    </Stack>
  );
}

export function ReplaysPage({
  selected,
  onSelect,
}: {
  selected: string | null;
  onSelect: (id: string | null) => void;
}) {
  const profile = useActiveProfile();
  const sessions = useReplays();
  const writes = useReplayWrites();
  const queued = (writes.data ?? []).filter((w) => w.state !== "confirmed");
  const known = sessions.data ?? [];
  return (
    <Stack style={{ overflow: "auto" }}>
      <Title order={3}>Replay sessions</Title>
      {queued.map((w) => (
        <Alert
          key={w.id}
          color={w.state === "needs_attention" ? "red" : "blue"}
          data-testid="queued-write"
        >
          {w.action} {w.session_id}: {w.state.replace("_", " ")}
          {w.error ? ` — ${w.error}` : ""}
        </Alert>
      ))}
      <StaleNote query={sessions} profile={profile} />
      {sessions.isError && sessions.data === undefined && (
        <Alert color="red" data-testid="replays-error">
          {sessions.error.message}
        </Alert>
      )}
      <Table highlightOnHover data-testid="replay-list">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Session</Table.Th>
            <Table.Th>Created</Table.Th>
            <Table.Th>Selection</Table.Th>
            <Table.Th>Status</Table.Th>
            <Table.Th>Progress</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {(sessions.data ?? []).map((s) => {
            const outcome = replayOutcome(s);
            return (
              <Table.Tr
                key={s.id}
                onClick={() => onSelect(s.id)}
                style={{ cursor: "pointer" }}
                data-testid="replay-row"
              >
                {/* The id may wrap anywhere: whole, it took the room the status needs. */}
                <Table.Td style={{ overflowWrap: "anywhere" }}>{s.id}</Table.Td>
                <Table.Td>{new Date(s.created_at).toLocaleString()}</Table.Td>
                <Table.Td>{selectionWords(s, trialPlan(profile, s.id), filterWords)}</Table.Td>
                <Table.Td>
                  <Badge
                    variant="light"
                    color={outcome.color}
                    className="badge-wrap"
                    data-testid="replay-row-status"
                  >
                    {outcome.label}
                  </Badge>
                </Table.Td>
                <Table.Td data-testid="replay-row-progress">{progressWords(s)}</Table.Td>
              </Table.Tr>
            );
          })}
        </Table.Tbody>
      </Table>
      <Waiting query={sessions} profile={profile} what="the list of replay sessions" />
      {sessions.data?.length === 0 && (
        <Text size="sm" c="dimmed">
          No replay sessions on {profile} yet. Start one from the DLQ.
        </Text>
      )}
      {selected && <ReplayDetail key={selected} id={selected} known={known} onSelect={onSelect} />}
    </Stack>
  );
}
