// One delivery: its event's payload (pretty, copyable), the webhook headers it is sent with,
// and the attempt timeline against the planned schedule, grouped by hop.
import {
  Alert,
  Badge,
  Button,
  Code,
  CopyButton,
  Drawer,
  Group,
  Loader,
  Stack,
  Table,
  Text,
  Title,
  Tooltip,
} from "@mantine/core";
import type { DeliveryView } from "../../ipc/bindings";
import { useDelivery, useEvent, useSchedule } from "../../ipc/dlqQueries";
import { buildTimeline, plannedWords, type TimelineRow } from "../../lib/timeline";

const time = (ms: number) => new Date(ms).toLocaleString();

/** A failed attempt's answer: its status or class, and the error when it says more. */
export function answerWords(a: {
  status_code: number | null;
  error_class: string | null;
  error: string | null;
  outcome: string;
}): string {
  const head = a.status_code ? `HTTP ${a.status_code}` : (a.error_class ?? a.outcome);
  // "receiver answered HTTP 500" repeats the status: the cell stays one short line.
  const redundant = a.status_code !== null && a.error === `receiver answered HTTP ${a.status_code}`;
  return a.error && !redundant ? `${head} — ${a.error}` : head;
}

export function Timeline({ delivery, schedule }: { delivery: DeliveryView; schedule: number[] }) {
  const { groups, verdict } = buildTimeline(delivery, schedule);
  return (
    <Stack gap="xs" data-testid="timeline">
      {groups.map((g) => (
        <Stack gap={4} key={g.hop} data-testid={`timeline-${g.hop}`}>
          <Text size="sm" fw={500}>
            {g.label}
          </Text>
          <HopTable rows={g.rows} hop={g.hop} />
        </Stack>
      ))}
      <Text fw={500} data-testid="timeline-verdict">
        {verdict}
      </Text>
    </Stack>
  );
}

function HopTable({ rows, hop }: { rows: TimelineRow[]; hop: string }) {
  return (
    <Table striped>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>#</Table.Th>
          <Table.Th>
            <Tooltip
              multiline
              w={320}
              label="Each retry waits about the schedule's delay after the previous attempt, within ±20 % (jitter), so attempts are near their slot but not exactly on it."
            >
              <span>Planned</span>
            </Tooltip>
          </Table.Th>
          <Table.Th>Ran at</Table.Th>
          <Table.Th>Took</Table.Th>
          <Table.Th>Answer</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {rows.map((r) => (
          <Table.Tr key={r.number} data-testid={`timeline-${hop}-row-${r.number}`}>
            <Table.Td>{r.number}</Table.Td>
            <Table.Td>{plannedWords(r.number, r.planned_delay_ms)}</Table.Td>
            <Table.Td style={{ whiteSpace: "nowrap" }}>
              {r.attempt ? (
                <span title={time(r.attempt.started_at)}>
                  {new Date(r.attempt.started_at).toLocaleTimeString()}
                </span>
              ) : (
                <Text c="dimmed" size="sm">
                  not run
                </Text>
              )}
              {r.late && (
                <Badge ml="xs" color="orange" size="xs">
                  late
                </Badge>
              )}
            </Table.Td>
            <Table.Td style={{ whiteSpace: "nowrap" }}>
              {r.attempt?.duration_ms != null ? `${r.attempt.duration_ms} ms` : "-"}
            </Table.Td>
            <Table.Td>
              {r.attempt &&
                (r.attempt.outcome === "succeeded" ? (
                  <Badge color="green">HTTP {r.attempt.status_code}</Badge>
                ) : (
                  <Text
                    size="sm"
                    c={r.attempt.outcome === "failed" ? "red" : undefined}
                    title={r.attempt.error ?? undefined}
                  >
                    {answerWords(r.attempt)}
                  </Text>
                ))}
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

export function DeliveryDetail({ id, onClose }: { id: string | null; onClose: () => void }) {
  const delivery = useDelivery(id);
  const event = useEvent(delivery.data?.event_id ?? null);
  const schedule = useSchedule();
  const payload = event.data ? JSON.stringify(event.data.payload, null, 2) : "";
  const d = delivery.data;
  return (
    <Drawer opened={!!id} onClose={onClose} position="right" size="xl" title={id ?? ""}>
      {delivery.isLoading && <Loader />}
      {delivery.isError && <Alert color="red">{delivery.error.message}</Alert>}
      {d && (
        <Stack data-testid="delivery-detail">
          <Group gap="xs">
            <Badge>{d.state}</Badge>
            <Text size="sm">{d.event_type}</Text>
            <Text size="sm" c="dimmed">
              {d.endpoint} → {d.flow} → {d.target} ({d.mode})
            </Text>
          </Group>
          {d.replay_of && (
            <Text size="sm">
              Replay of {d.replay_of} (session {d.replay_session})
            </Text>
          )}
          <Title order={5}>Attempts</Title>
          {schedule.data ? (
            <Timeline delivery={d} schedule={schedule.data} />
          ) : (
            <Loader size="sm" />
          )}
          <Title order={5}>Request headers</Title>
          <Code block>
            {[
              `webhook-id: ${d.event_id}`,
              "webhook-timestamp: <unix seconds when each attempt was signed>",
              "webhook-signature: v1,<HMAC-SHA256, one per active secret>",
              `switchyard-delivery-id: ${d.id}`,
              "switchyard-attempt: <1…5>",
              "content-type: application/json",
            ].join("\n")}
          </Code>
          <Group justify="space-between">
            <Title order={5}>Payload</Title>
            <CopyButton value={payload}>
              {({ copied, copy }) => (
                <Button size="xs" variant="default" onClick={copy} data-testid="copy-payload">
                  {copied ? "Copied" : "Copy"}
                </Button>
              )}
            </CopyButton>
          </Group>
          <Code block data-testid="payload">
            {payload}
          </Code>
        </Stack>
      )}
    </Drawer>
  );
}
