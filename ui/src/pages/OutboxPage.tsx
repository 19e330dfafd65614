import {
  Code,
  Group,
  SegmentedControl,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
  Tooltip,
} from "@mantine/core";
import { IconSearch } from "@tabler/icons-react";
import { Fragment, useMemo, useState } from "react";
import { AttentionActions } from "../components/AttentionActions";
import { OriginNote } from "../components/OriginNote";
import { StateBadge } from "../components/PendingBadge";
import type { OutboxEntry } from "../ipc/bindings";
import { useOpAudit, useOutbox } from "../ipc/queries";
import { kindLabels, operationLabels, relativeTime, shortTime } from "../lib/format";
import { useNow } from "../lib/useNow";

type Show = "live" | "attention" | "all";

/** Seconds until the next retry, or what it is waiting for. */
export function nextTry(entry: OutboxEntry, now: number): string {
  if (entry.state === "sending") return "sending now";
  if (entry.state !== "pending") return "—";
  if (entry.next_attempt_at === null || entry.next_attempt_at <= now) return "due now";
  return relativeTime(entry.next_attempt_at, now);
}

export function OutboxPage() {
  const outbox = useOutbox();
  const now = useNow();
  const [show, setShow] = useState<Show>("live");
  const [filter, setFilter] = useState("");
  const [expanded, setExpanded] = useState<number | null>(null);
  const rows = useMemo(() => {
    const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
    return (outbox.data ?? []).filter((entry) => {
      if (show === "live" && !["pending", "sending", "needs_attention"].includes(entry.state))
        return false;
      if (show === "attention" && entry.state !== "needs_attention") return false;
      const text =
        `${entry.kind} ${entry.name} ${entry.operation} ${entry.idempotency_key} ${entry.state}`.toLowerCase();
      return words.every((w) => text.includes(w));
    });
  }, [outbox.data, show, filter]);

  return (
    <Stack gap="sm">
      <Group justify="space-between">
        <Title order={3}>Outbox</Title>
        <Group>
          <TextInput
            placeholder="Filter"
            leftSection={<IconSearch size={16} />}
            value={filter}
            onChange={(e) => setFilter(e.currentTarget.value)}
            aria-label="Filter outbox"
          />
          <SegmentedControl
            value={show}
            onChange={(v) => setShow(v as Show)}
            data={[
              { value: "live", label: "Not settled" },
              { value: "attention", label: "Needs attention" },
              { value: "all", label: "All" },
            ]}
          />
        </Group>
      </Group>
      <Text size="sm" c="dimmed">
        Every change made in this console is queued here with its own idempotency key, and sent
        until the control plane confirms it exactly once.
      </Text>
      <Table striped highlightOnHover data-testid="outbox-table">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Change</Table.Th>
            <Table.Th>State</Table.Th>
            <Table.Th>Idempotency key</Table.Th>
            <Table.Th>Attempts</Table.Th>
            <Table.Th>Next try</Table.Th>
            <Table.Th>Queued</Table.Th>
            <Table.Th />
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((entry) => (
            <Fragment key={entry.id}>
              <Table.Tr
                data-testid={`outbox-${entry.id}`}
                onClick={() => setExpanded(expanded === entry.id ? null : entry.id)}
                style={{ cursor: "pointer" }}
              >
                <Table.Td>
                  <Text size="sm">
                    {operationLabels[entry.operation]} {kindLabels[entry.kind].one.toLowerCase()}{" "}
                    <b>{entry.name}</b>
                  </Text>
                  <OriginNote origin={entry.origin} />
                  {entry.error && (
                    <Text size="xs" c={entry.state === "needs_attention" ? "red" : "dimmed"}>
                      {entry.error.message}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td style={{ whiteSpace: "nowrap" }}>
                  <StateBadge state={entry.state} />
                </Table.Td>
                <Table.Td>
                  <Tooltip label="Sent with every attempt, so the control plane applies it once">
                    <Code>{entry.idempotency_key}</Code>
                  </Tooltip>
                </Table.Td>
                <Table.Td>{entry.attempts}</Table.Td>
                <Table.Td data-testid="next-try">{nextTry(entry, now)}</Table.Td>
                <Table.Td>{relativeTime(entry.created_at, now)}</Table.Td>
                <Table.Td onClick={(e) => e.stopPropagation()}>
                  <AttentionActions id={entry.id} state={entry.state} error={entry.error} />
                </Table.Td>
              </Table.Tr>
              {expanded === entry.id && (
                <Table.Tr>
                  <Table.Td colSpan={7}>
                    <Attempts entry={entry} />
                  </Table.Td>
                </Table.Tr>
              )}
            </Fragment>
          ))}
        </Table.Tbody>
      </Table>
      {rows.length === 0 && (
        <Text c="dimmed" size="sm" data-testid="outbox-empty">
          {show === "live" ? "Nothing waiting: every change is confirmed." : "Nothing here."}
        </Text>
      )}
    </Stack>
  );
}

/** The operation's own log: each attempt and the answer it got. */
function Attempts({ entry }: { entry: OutboxEntry }) {
  const audit = useOpAudit(entry.id);
  return (
    <Stack gap={4}>
      <Text size="xs" c="dimmed">
        Body: <Code>{JSON.stringify(entry.body)}</Code>
        {entry.base_version !== null && ` · based on version ${entry.base_version}`}
      </Text>
      {(audit.data ?? []).map((a) => (
        <Text size="xs" key={a.id}>
          {shortTime(a.at)} · {a.action} · {a.outcome}
          {a.detail ? ` · ${a.detail}` : ""}
        </Text>
      ))}
    </Stack>
  );
}
