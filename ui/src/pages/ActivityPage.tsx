import { Badge, Checkbox, Group, Stack, Table, Text, TextInput, Title } from "@mantine/core";
import { IconSearch } from "@tabler/icons-react";
import { useMemo, useState } from "react";
import { useAudit } from "../ipc/queries";
import {
  actionLabel,
  detailText,
  outcomeColor,
  outcomeLabel,
  resourceLabel,
} from "../lib/activity";
import { shortTime } from "../lib/format";

/** The local audit log: every action taken from this console and how it ended. */
export function ActivityPage() {
  const audit = useAudit(1000);
  const [filter, setFilter] = useState("");
  const [refreshes, setRefreshes] = useState(false);
  const rows = useMemo(() => {
    const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
    return (audit.data ?? []).filter((entry) => {
      if (!refreshes && entry.action === "cache.refresh") return false;
      const text =
        `${entry.actor} ${entry.profile ?? ""} ${entry.action} ${actionLabel(entry)} ${entry.resource ?? ""} ${resourceLabel(entry)} ${entry.outcome} ${entry.detail ?? ""}`.toLowerCase();
      return words.every((w) => text.includes(w));
    });
  }, [audit.data, filter, refreshes]);
  return (
    <Stack gap="sm">
      <Title order={3}>Activity</Title>
      <Group>
        <TextInput
          placeholder="Filter by action, resource, outcome…"
          leftSection={<IconSearch size={16} />}
          value={filter}
          onChange={(e) => setFilter(e.currentTarget.value)}
          w={420}
          aria-label="Filter activity"
        />
        <Checkbox
          label="Show background cache refreshes"
          checked={refreshes}
          onChange={(e) => setRefreshes(e.currentTarget.checked)}
        />
      </Group>
      {/* Fixed widths, and long words (a request path, an id) broken anywhere: the Outcome
          column's detail stays on the page at 1024 and 1440 px. */}
      <Table striped layout="fixed" style={{ overflowWrap: "anywhere" }} data-testid="audit-table">
        <Table.Thead>
          <Table.Tr>
            <Table.Th w={130}>When</Table.Th>
            <Table.Th w={80}>Who</Table.Th>
            <Table.Th w={110}>Control plane</Table.Th>
            <Table.Th w="22%">Action</Table.Th>
            <Table.Th w="20%">Resource</Table.Th>
            <Table.Th>Outcome</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((entry) => (
            <Table.Tr key={entry.id}>
              <Table.Td>{shortTime(entry.at)}</Table.Td>
              <Table.Td>{entry.actor}</Table.Td>
              <Table.Td>{entry.profile ?? ""}</Table.Td>
              <Table.Td title={entry.action}>{actionLabel(entry)}</Table.Td>
              <Table.Td title={entry.resource ?? undefined}>{resourceLabel(entry)}</Table.Td>
              <Table.Td>
                <Badge variant="light" color={outcomeColor(entry.outcome)} className="badge-wrap">
                  {outcomeLabel(entry.outcome)}
                </Badge>
                {detailText(entry) && (
                  <Text size="xs" c="dimmed">
                    {detailText(entry)}
                  </Text>
                )}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {rows.length === 0 && (
        <Text c="dimmed" size="sm">
          No activity recorded yet.
        </Text>
      )}
    </Stack>
  );
}
