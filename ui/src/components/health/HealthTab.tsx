// A drawer's Health tab: one target's, endpoint's or flow's delivery figures over the window
// the Overview uses. It reads the same query as the Overview (same profile, window and
// grouping, so one fetch serves both) and marks the figures stale the same way.
import {
  Anchor,
  Badge,
  Divider,
  Group,
  SegmentedControl,
  SimpleGrid,
  Stack,
  Table,
  Text,
} from "@mantine/core";
import type { ReactNode } from "react";
import type { HealthGroupView, ResourceKind } from "../../ipc/bindings";
import { useDeliveryMetrics } from "../../ipc/healthQueries";
import { useActiveProfile } from "../../ipc/queries";
import { relativeTime, shortTime } from "../../lib/format";
import {
  classLabels,
  durationMs,
  freshness,
  percent,
  rateColor,
  windows,
  windowWords,
} from "../../lib/health";
import { useHealthWindow } from "../../lib/healthWindow";
import { useNow } from "../../lib/useNow";
import { DeliveryChart } from "../charts/lazy";
import { Absent } from "../overview/Absent";
import { LastError } from "../overview/FailingTargets";
import { FreshnessLine, isOutdated } from "../overview/FreshnessLine";
import { Stat } from "../overview/Stat";
import { TestWebhook } from "./TestWebhook";

/** A time, relative with the exact one on hover; "—" with why when there is none. */
function When({
  at,
  now,
  why,
  testid,
}: {
  at: number | null;
  now: number;
  why: string;
  testid: string;
}) {
  if (at === null) return <Absent why={why} testid={testid} />;
  return (
    <Text size="sm" title={shortTime(at)} data-testid={testid}>
      {relativeTime(at, now)}
    </Text>
  );
}

function Row({ label, children }: { label: string; children: ReactNode }) {
  return (
    <Table.Tr>
      <Table.Td w={180}>
        <Text size="sm" c="dimmed">
          {label}
        </Text>
      </Table.Td>
      <Table.Td style={{ maxWidth: 0 }}>{children}</Table.Td>
    </Table.Tr>
  );
}

function Figures({ group, stale, now }: { group: HealthGroupView; stale: boolean; now: number }) {
  const f = group.figures;
  const tone = (color?: string) => (stale ? "dimmed" : color);
  const classes =
    f.failures_by_class.length === 0 ? (
      <Text size="sm" c="dimmed" data-testid="drawer-health-classes">
        none
      </Text>
    ) : (
      <Group gap={6} data-testid="drawer-health-classes">
        {f.failures_by_class.map((c) => (
          <Badge key={c.error_class} variant="light" color="red">
            {classLabels[c.error_class]}: {c.count}
          </Badge>
        ))}
      </Group>
    );
  const streak =
    group.consecutive_failures === null ? (
      <Absent
        why="no attempt recorded since the control plane started keeping health figures"
        testid="drawer-health-streak"
      />
    ) : (
      <Text size="sm" data-testid="drawer-health-streak">
        {group.consecutive_failures}
      </Text>
    );
  return (
    <Stack gap="sm" style={stale ? { opacity: 0.75 } : undefined}>
      <SimpleGrid cols={3}>
        <Stat
          label="Success rate"
          value={percent(f.success_rate)}
          color={tone(rateColor(f.success_rate))}
          hint={
            f.success_rate === null
              ? "no attempts"
              : `${f.successes} of ${f.attempts} attempts succeeded`
          }
          testid="drawer-health-rate"
        />
        <Stat
          label="Attempts"
          value={f.attempts}
          color={tone()}
          hint={`${f.failures} failed`}
          testid="drawer-health-attempts"
        />
        <Stat
          label="Latency p95"
          value={durationMs(f.latency_ms?.p95)}
          hint={`p50 ${durationMs(f.latency_ms?.p50)} · p99 ${durationMs(f.latency_ms?.p99)}`}
          color={tone()}
          title={f.latency_ms === null ? "Latency: no attempts in the window" : undefined}
          testid="drawer-health-latency"
        />
      </SimpleGrid>
      <Table withRowBorders data-testid="drawer-health-table">
        <Table.Tbody>
          <Row label="Failures by class">{classes}</Row>
          <Row label="Consecutive failures">{streak}</Row>
          <Row label="Failing since">
            <When
              at={group.failing_since}
              now={now}
              why="its last attempt succeeded: no failure run is open"
              testid="drawer-health-since"
            />
          </Row>
          <Row label="Last success">
            <When
              at={group.last_success_at}
              now={now}
              why="no success recorded"
              testid="drawer-health-last-success"
            />
          </Row>
          <Row label="Last failure">
            <When
              at={group.last_failure_at}
              now={now}
              why="no failure recorded"
              testid="drawer-health-last-failure"
            />
          </Row>
          <Row label="Last error">
            <LastError group={group} />
          </Row>
        </Table.Tbody>
      </Table>
    </Stack>
  );
}

export function HealthTab({
  kind,
  name,
  onOpenDlq,
}: {
  kind: ResourceKind;
  name: string;
  /** Opens the DLQ page filtered to this target (targets only). */
  onOpenDlq?: (target: string) => void;
}) {
  const profile = useActiveProfile();
  const [window, pick] = useHealthWindow();
  const metrics = useDeliveryMetrics(window, kind);
  const now = useNow(5000);
  const fresh = freshness(metrics, profile, now);
  const data = metrics.data;
  const group = data?.groups.find((g) => g.name === name);
  return (
    <Stack gap="sm" data-testid="drawer-health">
      <Group justify="space-between" align="center">
        {isOutdated(fresh.state) ? <span /> : <FreshnessLine query={metrics} profile={profile} />}
        <Group gap="xs">
          {kind === "target" && onOpenDlq && (
            <Anchor
              component="button"
              type="button"
              size="sm"
              onClick={() => onOpenDlq(name)}
              data-testid="drawer-health-dlq"
            >
              Open in DLQ
            </Anchor>
          )}
          <SegmentedControl
            size="xs"
            value={window}
            onChange={pick}
            data={windows.map((w) => ({ value: w.value, label: w.label }))}
            aria-label="Time window"
            data-testid="drawer-health-window"
          />
        </Group>
      </Group>
      {/* Old or absent figures: said on a line of its own, as on the Overview. */}
      {isOutdated(fresh.state) && <FreshnessLine query={metrics} profile={profile} />}
      {data && !group && (
        <Text size="sm" c="dimmed" data-testid="drawer-health-none">
          No attempts in {windowWords(window)}.
        </Text>
      )}
      {data && group && (
        <>
          {group.figures.attempts === 0 && (
            <Text size="sm" c="dimmed" data-testid="drawer-health-none">
              No attempts in {windowWords(window)}.
            </Text>
          )}
          <Figures group={group} stale={fresh.state === "stale"} now={now} />
          {group.figures.attempts > 0 && (
            <DeliveryChart data={data} window={window} figures={group.figures} height={180} />
          )}
        </>
      )}
      {kind === "target" && (
        <>
          <Divider />
          <TestWebhook target={name} />
        </>
      )}
    </Stack>
  );
}
