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
import type { OutboxEntry, SyncStatus } from "../ipc/bindings";
import { useActiveProfile, useOpAudit, useOutbox, useSyncStatus } from "../ipc/queries";
import { kindLabels, operationLabels, relativeTime, shortTime } from "../lib/format";
import { useNow } from "../lib/useNow";

type Show = "live" | "attention" | "all";

const live = (entry: OutboxEntry) =>
  entry.state === "pending" || entry.state === "sending" || entry.state === "needs_attention";

/**
 * When the next attempt happens, or what it waits for: only the active control plane is sent
 * to, and nothing is sent while it does not answer.
 */
export function nextTry(
  entry: OutboxEntry,
  now: number,
  active?: string,
  status?: SyncStatus,
): string {
  if (entry.state === "sending") return "sending now";
  if (entry.state !== "pending") return "—";
  if (active !== undefined && entry.profile !== active) return `when ${entry.profile} is active`;
  if (status?.profile === entry.profile && status.online === false)
    return `when ${entry.profile} answers`;
  if (entry.next_attempt_at === null || entry.next_attempt_at <= now) return "due now";
  return relativeTime(entry.next_attempt_at, now);
}

/**
 * "2 waiting for offline-cp." · "Nothing waiting for sandbox; 2 waiting for offline-cp." ·
 * "Nothing waiting for sandbox: every change is confirmed." (only when nothing waits anywhere).
 */
export function waitingSummary(entries: OutboxEntry[], active: string | undefined): string {
  const counts = new Map<string, number>();
  for (const e of entries) if (live(e)) counts.set(e.profile, (counts.get(e.profile) ?? 0) + 1);
  const mine = active ? (counts.get(active) ?? 0) : 0;
  const others = [...counts].filter(([p]) => p !== active).map(([p, n]) => `${n} waiting for ${p}`);
  const head =
    mine === 0
      ? `Nothing waiting for ${active ?? "this control plane"}`
      : `${mine} waiting for ${active}`;
  if (others.length) return `${head}; ${others.join(", ")}.`;
  return mine === 0 ? `${head}: every change is confirmed.` : `${head}.`;
}

/**
 * What the tries were: a try that could not connect never reached the control plane, so
 * "17" alone would read as 17 requests it received.
 */
export function triesWords(entry: {
  attempts: number;
  error: { status: number | null } | null;
}): string {
  const n = entry.attempts;
  if (n === 0) return "not tried yet";
  const tries = n === 1 ? "1 try" : `${n} tries`;
  if (!entry.error) return tries;
  return entry.error.status === null
    ? `${tries}; the last got no answer`
    : `${tries}; the last answered HTTP ${entry.error.status}`;
}

export function OutboxPage() {
  const outbox = useOutbox();
  const active = useActiveProfile();
  const status = useSyncStatus();
  const now = useNow();
  const [show, setShow] = useState<Show>("live");
  const [plane, setPlane] = useState<string>("all");
  const [filter, setFilter] = useState("");
  const [expanded, setExpanded] = useState<number | null>(null);
  const rows = useMemo(() => {
    const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
    return (outbox.data ?? []).filter((entry) => {
      if (plane !== "all" && entry.profile !== plane) return false;
      if (show === "live" && !live(entry)) return false;
      if (show === "attention" && entry.state !== "needs_attention") return false;
      const text =
        `${entry.profile} ${entry.kind} ${entry.name} ${entry.operation} ${entry.idempotency_key} ${entry.state}`.toLowerCase();
      return words.every((w) => text.includes(w));
    });
  }, [outbox.data, show, filter, plane]);
  const planes = [...new Set((outbox.data ?? []).map((e) => e.profile))].sort();

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
          {planes.length > 1 && (
            <SegmentedControl
              value={plane}
              onChange={setPlane}
              data={[{ value: "all", label: "Every control plane" }, ...planes]}
              data-testid="outbox-plane"
            />
          )}
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
        Every change made in this console, for every control plane, is queued here with its own
        idempotency key and sent until its control plane confirms it exactly once. Changes are sent
        to the active control plane ({active ?? "…"}) while it answers.
      </Text>
      <Text size="sm" fw={500} data-testid="outbox-summary">
        {outbox.data ? waitingSummary(outbox.data, active) : "…"}
      </Text>
      <Table striped highlightOnHover data-testid="outbox-table">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Control plane</Table.Th>
            <Table.Th>Change</Table.Th>
            <Table.Th>State</Table.Th>
            <Table.Th>Idempotency key</Table.Th>
            <Table.Th>
              <Tooltip label="How often this console tried to send it. A try that could not connect never reached the control plane; the same key makes every try that did count once.">
                <span>Tries</span>
              </Tooltip>
            </Table.Th>
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
                <Table.Td data-testid="outbox-profile">
                  <Text size="sm" fw={entry.profile === active ? 600 : undefined}>
                    {entry.profile}
                  </Text>
                </Table.Td>
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
                <Table.Td style={{ whiteSpace: "nowrap", minWidth: 150 }}>
                  <StateBadge state={entry.state} />
                </Table.Td>
                <Table.Td>
                  <Tooltip label="Sent with every attempt, so the control plane applies it once">
                    <Code>{entry.idempotency_key}</Code>
                  </Tooltip>
                </Table.Td>
                <Table.Td data-testid="outbox-tries">
                  <Text size="sm">{triesWords(entry)}</Text>
                </Table.Td>
                <Table.Td data-testid="next-try">
                  {nextTry(entry, now, active, status.data)}
                </Table.Td>
                <Table.Td>{relativeTime(entry.created_at, now)}</Table.Td>
                <Table.Td onClick={(e) => e.stopPropagation()}>
                  <AttentionActions
                    id={entry.id}
                    state={entry.state}
                    error={entry.error}
                    profile={entry.profile}
                    kind={entry.kind}
                    name={entry.name}
                  />
                </Table.Td>
              </Table.Tr>
              {expanded === entry.id && (
                <Table.Tr>
                  <Table.Td colSpan={8}>
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
          {filter || plane !== "all" ? "No change matches the filter." : "Nothing here."}
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
