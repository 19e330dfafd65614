// Replay sessions: list and detail with live progress, per-item results, cancel, and a warning
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
} from "@mantine/core";
import { useEffect, useRef, useState } from "react";
import { DeliveryDetail } from "../components/dlq/DeliveryDetail";
import { WriteBadge } from "../components/dlq/ReplayDialog";
import { StaleNote } from "../components/StaleNote";
import type { ReplaySessionView } from "../ipc/bindings";
import {
  useCancelReplay,
  useDlqStats,
  useReplay,
  useReplays,
  useReplayWrites,
} from "../ipc/dlqQueries";
import { useActiveProfile } from "../ipc/queries";

/** Finished / total, rate (items per second since first seen) and time left. */
export function progressOf(
  s: ReplaySessionView,
  sample: { at: number; done: number } | null,
  now = Date.now(),
) {
  const c = s.counts;
  const done = c.succeeded + c.failed + c.cancelled;
  const pct = c.total === 0 ? 100 : Math.round((done / c.total) * 100);
  const seconds = sample ? (now - sample.at) / 1000 : 0;
  const rate = sample && seconds >= 1 ? (done - sample.done) / seconds : null;
  const left = rate && rate > 0 ? Math.ceil(c.pending / rate) : null;
  return { done, pct, rate, left };
}

export function ReplayDetail({ id }: { id: string }) {
  const running = useRef(true);
  const session = useReplay(id, running.current ? 1000 : false);
  const dlq = useDlqStats("error_class", 2000);
  const cancel = useCancelReplay();
  const [open, setOpen] = useState<string | null>(null);
  const first = useRef<{ at: number; done: number } | null>(null);
  const dlqAtStart = useRef<number | null>(null);
  const s = session.data;
  running.current = !s || s.status === "running";
  useEffect(() => {
    if (s && first.current === null) {
      const c = s.counts;
      first.current = { at: Date.now(), done: c.succeeded + c.failed + c.cancelled };
    }
  }, [s]);
  if (dlq.data && dlqAtStart.current === null) dlqAtStart.current = dlq.data.total;
  // An unreachable control plane is said once, by the page's list; a known session stays.
  if (session.isError && !s) return null;
  if (!s) return <Text>Loading…</Text>;
  const p = progressOf(s, first.current);
  // Re-deliveries of this session that die again are counted as failed; anything beyond that
  // growth is new failures from live traffic.
  const grew =
    dlq.data && dlqAtStart.current !== null
      ? dlq.data.total - dlqAtStart.current - s.counts.failed
      : 0;
  return (
    <Stack data-testid="replay-detail">
      <Group justify="space-between">
        <Group gap="xs">
          <Title order={4}>{s.id}</Title>
          <Badge
            data-testid="replay-status"
            color={s.status === "completed" ? "green" : s.status === "cancelled" ? "gray" : "blue"}
          >
            {s.status}
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
      <Text size="sm" c="dimmed">
        {s.selection}
        {s.rate_per_s ? `, at most ${s.rate_per_s}/s` : ""}
      </Text>
      {grew > 0 && s.status === "running" && (
        <Alert color="orange" data-testid="new-failures">
          {grew} new {grew === 1 ? "failure" : "failures"} reached the DLQ while this replay runs.
        </Alert>
      )}
      <Progress
        value={p.pct}
        size="xl"
        animated={s.status === "running"}
        data-testid="replay-progress"
      />
      <SimpleGrid cols={6}>
        {(["total", "succeeded", "failed", "pending", "cancelled", "skipped"] as const).map((k) => (
          <Stack key={k} gap={0}>
            <Text size="xs" c="dimmed">
              {k}
            </Text>
            <Text fw={700} data-testid={`count-${k}`}>
              {s.counts[k]}
            </Text>
          </Stack>
        ))}
      </SimpleGrid>
      <Text size="sm" data-testid="replay-rate">
        {p.rate !== null ? `${p.rate.toFixed(1)} per second` : "measuring rate…"}
        {p.left !== null ? `, about ${p.left} s left` : ""}
      </Text>
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
            <Table.Tr key={i.original_delivery_id}>
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
                {i.status}
                {i.reason ? ` (${i.reason})` : ""}
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
          {(sessions.data ?? []).map((s) => (
            <Table.Tr
              key={s.id}
              onClick={() => onSelect(s.id)}
              style={{ cursor: "pointer" }}
              data-testid="replay-row"
            >
              <Table.Td>{s.id}</Table.Td>
              <Table.Td>{new Date(s.created_at).toLocaleString()}</Table.Td>
              <Table.Td>{s.selection}</Table.Td>
              <Table.Td>{s.status}</Table.Td>
              <Table.Td>
                {s.counts.succeeded + s.counts.failed + s.counts.cancelled}/{s.counts.total}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {selected && <ReplayDetail key={selected} id={selected} />}
    </Stack>
  );
}
