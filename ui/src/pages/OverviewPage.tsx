import {
  Alert,
  Anchor,
  Badge,
  Box,
  Card,
  Group,
  SimpleGrid,
  Stack,
  Table,
  Text,
  Title,
} from "@mantine/core";
import { type ReactNode, useEffect } from "react";
import { DlqTrend } from "../components/charts/lazy";
import { CredentialsNotice } from "../components/overview/CredentialsNotice";
import { HealthSection } from "../components/overview/HealthSection";
import { Stat } from "../components/overview/Stat";
import type { IpcError, Overview } from "../ipc/bindings";
import { useDlqStats } from "../ipc/dlqQueries";
import { useActiveProfile, useOverview } from "../ipc/queries";
import { useFindings } from "../ipc/recoveryQueries";
import { actionLabel, outcomeColor, outcomeLabel } from "../lib/activity";
import { hourlySeries } from "../lib/dlq";
import { relativeTime } from "../lib/format";
import { attentionCount, attentionNames } from "../lib/recovery";
import { useNow } from "../lib/useNow";

/**
 * The DLQ size as the control plane counts it (the DLQ page's badge reads the same query).
 * When the control plane does not answer, the last count is shown with its age; it is absent
 * only when it cannot be known, and the hint says why.
 */
export function dlqTile(
  stats: {
    data?: { total: number };
    isError: boolean;
    error: Pick<IpcError, "message"> | null;
    dataUpdatedAt: number;
  },
  profile: string | undefined,
  now: number,
): { value: ReactNode; hint: string; color?: string } {
  const who = profile ?? "the control plane";
  if (stats.data && !stats.isError)
    return {
      value: stats.data.total,
      hint: stats.data.total === 0 ? "empty" : "dead deliveries (exact)",
      color: stats.data.total > 0 ? "red" : undefined,
    };
  if (stats.data)
    return {
      value: stats.data.total,
      hint: `last fetched ${relativeTime(stats.dataUpdatedAt, now)}; ${who} does not answer`,
      color: "dimmed",
    };
  if (stats.isError)
    return {
      value: "—",
      hint:
        (stats.error as Partial<IpcError> | null)?.code === "not_found"
          ? `${who} does not report its DLQ`
          : `unknown: ${who} does not answer (${stats.error?.message ?? "no answer"})`,
    };
  return { value: "…", hint: "asking the control plane" };
}

/**
 * The resource tiles: the local copy's counts once it was filled from the control plane at
 * least once; before that they are unknown (a plane that never answered has no "0 endpoints").
 */
export function resourceCounts(o: Overview | undefined, profile: string | undefined) {
  if (!o)
    return { endpoints: "…", targets: "…", flows: "…", hint: undefined, endpointsHint: undefined };
  if (o.refreshed_at === null) {
    const hint = `not loaded yet: ${profile ?? "the control plane"} has not answered`;
    return { endpoints: "—", targets: "—", flows: "—", hint, endpointsHint: hint };
  }
  return {
    endpoints: o.endpoints,
    targets: o.targets,
    flows: o.flows,
    hint: undefined,
    endpointsHint: o.disabled_endpoints ? `${o.disabled_endpoints} disabled` : "all enabled",
  };
}

/** What the Recovery page found that someone should act on, with the way there. */
function RecoveryBanner({ onOpen }: { onOpen?: () => void }) {
  const findings = useFindings();
  const n = attentionCount(findings.data?.findings);
  if (n === 0) return null;
  const critical = (findings.data?.findings ?? []).some((f) => f.severity === "critical");
  return (
    <Alert
      color={critical ? "red" : "orange"}
      title={n === 1 ? "1 problem needs attention" : `${n} problems need attention`}
      data-testid="overview-recovery"
    >
      <Text size="sm" fw={500} data-testid="overview-recovery-names">
        {attentionNames(findings.data?.findings)}
      </Text>
      <Anchor component="button" onClick={onOpen} data-testid="overview-open-recovery">
        Open Recovery
      </Anchor>{" "}
      for what is wrong and how to fix it.
    </Alert>
  );
}

export function OverviewPage({
  onOpenDlq,
  onOpenTarget,
  onOpenRecovery,
}: {
  /** Opens the Recovery page. */
  onOpenRecovery?: () => void;
  /** Opens the DLQ page filtered to `target`. */
  onOpenDlq?: (target: string) => void;
  /** Opens `target`'s drawer on the Targets page. */
  onOpenTarget?: (target: string) => void;
} = {}) {
  const profile = useActiveProfile();
  const overview = useOverview();
  const dlq = useDlqStats("error_class", 5000);
  const now = useNow(5000);
  const o = overview.data;
  const tile = dlqTile(dlq, profile, now);
  // The trend only from a current answer: an old one would draw yesterday's hours as today's.
  const hours = useDlqStats("hour", 10_000);
  const trend = hours.data && !hours.isError ? hourlySeries(hours.data.groups) : null;
  // The tile and its trend are two queries: when the count moves, the trend is asked again at
  // once, so "574" never stands over "0 died in the last 24 h" until the trend's next poll.
  const dlqTotal = dlq.data?.total;
  const { refetch: refetchHours } = hours;
  useEffect(() => {
    if (dlqTotal !== undefined) void refetchHours();
  }, [dlqTotal, refetchHours]);
  const counts = resourceCounts(o, profile);
  return (
    // Taller than the window: it scrolls inside the main area (never under the status bar). The
    // scroller is a plain box, so the cards keep their height instead of shrinking to fit.
    <Box style={{ flex: 1, minHeight: 0, overflow: "auto" }} data-testid="overview">
      <Stack gap="md">
        <Group justify="space-between">
          <Title order={3}>Overview</Title>
          <Text c="dimmed" size="sm">
            {o ? `Control plane: ${o.profile}` : ""}
          </Text>
        </Group>
        <RecoveryBanner onOpen={onOpenRecovery} />
        <CredentialsNotice now={now} onOpenTarget={onOpenTarget} />
        <SimpleGrid cols={{ base: 2, md: 3, lg: 6 }}>
          <Stat
            label="Endpoints"
            value={counts.endpoints}
            hint={counts.endpointsHint}
            testid="stat-endpoints"
          />
          <Stat label="Targets" value={counts.targets} hint={counts.hint} testid="stat-targets" />
          <Stat label="Flows" value={counts.flows} hint={counts.hint} testid="stat-flows" />
          <Stat
            label="Pending writes"
            value={o?.pending ?? "…"}
            hint="in the local outbox"
            testid="stat-pending"
          />
          <Stat
            label="Needs attention"
            value={o?.needs_attention ?? "…"}
            color={o?.needs_attention ? "red" : undefined}
            testid="stat-attention"
          />
          <Stat
            label="DLQ"
            value={tile.value}
            hint={tile.hint}
            color={tile.color}
            testid="stat-dlq"
          >
            {trend && <DlqTrend series={trend} />}
          </Stat>
        </SimpleGrid>
        <HealthSection profile={profile} onOpenDlq={onOpenDlq} onOpenTarget={onOpenTarget} />
        <Card withBorder padding="md">
          <Title order={5} mb="xs">
            Recent activity
          </Title>
          {o && o.recent.length === 0 && (
            <Text size="sm" c="dimmed">
              Nothing yet. Changes made in this console appear here.
            </Text>
          )}
          <Table data-testid="recent-activity">
            <Table.Tbody>
              {(o?.recent ?? []).map((entry) => (
                <Table.Tr key={entry.id}>
                  <Table.Td w={110}>
                    <Text size="sm" c="dimmed">
                      {relativeTime(entry.at, now)}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm" title={entry.action}>
                      {actionLabel(entry)}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm">{entry.resource ?? ""}</Text>
                  </Table.Td>
                  <Table.Td>
                    <Badge variant="light" color={outcomeColor(entry.outcome)}>
                      {outcomeLabel(entry.outcome)}
                    </Badge>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Card>
      </Stack>
    </Box>
  );
}
