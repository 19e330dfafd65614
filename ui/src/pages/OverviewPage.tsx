import { Card, Group, SimpleGrid, Stack, Table, Text, Title } from "@mantine/core";
import type { ReactNode } from "react";
import { useOverview } from "../ipc/queries";
import { relativeTime } from "../lib/format";
import { useNow } from "../lib/useNow";

function Stat({
  label,
  value,
  hint,
  testid,
}: {
  label: string;
  value: ReactNode;
  hint?: string;
  testid: string;
}) {
  return (
    <Card withBorder padding="md" data-testid={testid}>
      <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
        {label}
      </Text>
      <Text size="xl" fw={700} mt={4}>
        {value}
      </Text>
      {hint && (
        <Text size="xs" c="dimmed" mt={2}>
          {hint}
        </Text>
      )}
    </Card>
  );
}

export function OverviewPage() {
  const overview = useOverview();
  const now = useNow(5000);
  const o = overview.data;
  return (
    <Stack gap="md">
      <Group justify="space-between">
        <Title order={3}>Overview</Title>
        <Text c="dimmed" size="sm">
          {o ? `Control plane: ${o.profile}` : ""}
        </Text>
      </Group>
      <SimpleGrid cols={{ base: 2, md: 3, lg: 6 }}>
        <Stat
          label="Endpoints"
          value={o?.endpoints ?? "…"}
          hint={o?.disabled_endpoints ? `${o.disabled_endpoints} disabled` : "all enabled"}
          testid="stat-endpoints"
        />
        <Stat label="Targets" value={o?.targets ?? "…"} testid="stat-targets" />
        <Stat label="Flows" value={o?.flows ?? "…"} testid="stat-flows" />
        <Stat
          label="Pending writes"
          value={o?.pending ?? "…"}
          hint="in the local outbox"
          testid="stat-pending"
        />
        <Stat label="Needs attention" value={o?.needs_attention ?? "…"} testid="stat-attention" />
        <Stat
          label="DLQ"
          value={o ? (o.dlq_size ?? "—") : "…"}
          hint={o && o.dlq_size === null ? "not reported by this control plane" : "dead deliveries"}
          testid="stat-dlq"
        />
      </SimpleGrid>
      <Card withBorder padding="md">
        <Title order={5} mb="xs">
          Recent activity
        </Title>
        {o && o.recent.length === 0 && (
          <Text size="sm" c="dimmed">
            Nothing yet. Changes made in this console appear here.
          </Text>
        )}
        <Table>
          <Table.Tbody>
            {(o?.recent ?? []).map((entry) => (
              <Table.Tr key={entry.id}>
                <Table.Td w={110}>
                  <Text size="sm" c="dimmed">
                    {relativeTime(entry.at, now)}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{entry.action}</Text>
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{entry.resource ?? ""}</Text>
                </Table.Td>
                <Table.Td>
                  <Text size="sm" c={entry.outcome === "ok" ? "green" : "orange"}>
                    {entry.outcome}
                  </Text>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Card>
    </Stack>
  );
}
