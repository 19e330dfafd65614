// The targets that failed in the window, worst first (lowest success rate, then the longest
// run of failures), with the last error, since when, and where to click next: the DLQ
// filtered to the target, and the target's drawer.
import {
  Badge,
  Button,
  Group,
  Stack,
  Table,
  Text,
  TextInput,
  Tooltip,
  VisuallyHidden,
} from "@mantine/core";
import { IconSearch } from "@tabler/icons-react";
import { useMemo, useState } from "react";
import type { HealthGroupView, MetricsWindow } from "../../ipc/bindings";
import { relativeTime, shortTime } from "../../lib/format";
import {
  classLabels,
  failingTargets,
  percent,
  rateColor,
  stillFailingOutsideWindow,
  windowWords,
} from "../../lib/health";
import { Absent, KEYBOARD } from "./Absent";

export function LastError({ group }: { group: HealthGroupView }) {
  if (group.last_error_class === null && group.last_error === null)
    return <Absent why="the control plane did not report the last error" />;
  return (
    <Group gap={6} wrap="nowrap" style={{ minWidth: 0 }}>
      {group.last_error_class && (
        <Badge variant="light" color="red" style={{ flexShrink: 0 }}>
          {classLabels[group.last_error_class]}
        </Badge>
      )}
      {group.last_error && (
        <Tooltip label={group.last_error} multiline maw={420} withArrow events={KEYBOARD}>
          <Text size="sm" truncate="end" tabIndex={0} style={{ minWidth: 0 }}>
            {group.last_error}
          </Text>
        </Tooltip>
      )}
    </Group>
  );
}

export function FailingTargets({
  groups,
  window,
  now,
  onOpenDlq,
  onOpenTarget,
}: {
  groups: HealthGroupView[];
  window: MetricsWindow;
  now: number;
  onOpenDlq?: (target: string) => void;
  onOpenTarget?: (target: string) => void;
}) {
  const [filter, setFilter] = useState("");
  const failing = useMemo(() => failingTargets(groups), [groups]);
  const older = useMemo(() => stillFailingOutsideWindow(groups), [groups]);
  const needle = filter.trim().toLowerCase();
  const rows = needle ? failing.filter((g) => g.name.toLowerCase().includes(needle)) : failing;
  return (
    <Stack gap="xs" data-testid="failing-targets">
      <Group justify="space-between">
        <Text fw={500} size="sm">
          Failing targets, {windowWords(window)}
          {failing.length > 0 ? ` (${failing.length})` : ""}
        </Text>
        {failing.length > 0 && (
          <TextInput
            size="xs"
            w={220}
            placeholder="Filter targets"
            aria-label="Filter failing targets by name"
            leftSection={<IconSearch size={14} />}
            value={filter}
            onChange={(e) => setFilter(e.currentTarget.value)}
            data-testid="failing-filter"
          />
        )}
      </Group>
      {failing.length === 0 ? (
        <Text size="sm" c="dimmed" data-testid="failing-empty">
          No target failed in {windowWords(window)}.
        </Text>
      ) : rows.length === 0 ? (
        <Text size="sm" c="dimmed" data-testid="failing-empty">
          No failing target matches “{filter.trim()}”.
        </Text>
      ) : (
        <Table.ScrollContainer minWidth={720}>
          <Table
            highlightOnHover
            verticalSpacing={6}
            style={{ tableLayout: "fixed" }}
            data-testid="failing-table"
          >
            <Table.Thead>
              <Table.Tr>
                <Table.Th w={122}>Target</Table.Th>
                <Table.Th w={80}>Success rate</Table.Th>
                <Table.Th w={100}>Consecutive failures</Table.Th>
                <Table.Th>Last error</Table.Th>
                <Table.Th w={104}>Failing since</Table.Th>
                <Table.Th w={128}>
                  <VisuallyHidden>Links</VisuallyHidden>
                </Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((g) => (
                <Table.Tr key={g.name} data-testid={`failing-row-${g.name}`}>
                  <Table.Td>
                    <Text size="sm" fw={500} truncate="end" title={g.name}>
                      {g.name}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    {g.figures.success_rate === null ? (
                      <Absent why="no attempts in the window" testid={`rate-${g.name}`} />
                    ) : (
                      <Text
                        size="sm"
                        c={rateColor(g.figures.success_rate)}
                        title={`${g.figures.successes} of ${g.figures.attempts} attempts succeeded`}
                        data-testid={`rate-${g.name}`}
                      >
                        {percent(g.figures.success_rate)}
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>
                    {g.consecutive_failures === null ? (
                      <Absent
                        why="no attempt recorded since the control plane started keeping health figures"
                        testid={`streak-${g.name}`}
                      />
                    ) : (
                      <Text size="sm" data-testid={`streak-${g.name}`}>
                        {g.consecutive_failures}
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>
                    <LastError group={g} />
                  </Table.Td>
                  <Table.Td>
                    {g.failing_since === null ? (
                      <Absent
                        why="its last attempt succeeded: no failure run is open"
                        testid={`since-${g.name}`}
                      />
                    ) : (
                      <Text
                        size="sm"
                        title={shortTime(g.failing_since)}
                        data-testid={`since-${g.name}`}
                      >
                        {relativeTime(g.failing_since, now)}
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>
                    <Group gap={4} wrap="nowrap">
                      <Button
                        size="compact-xs"
                        variant="light"
                        color="red"
                        onClick={() => onOpenDlq?.(g.name)}
                        disabled={!onOpenDlq}
                        aria-label={`DLQ of ${g.name}`}
                        data-testid={`failing-dlq-${g.name}`}
                      >
                        DLQ
                      </Button>
                      <Button
                        size="compact-xs"
                        variant="default"
                        onClick={() => onOpenTarget?.(g.name)}
                        disabled={!onOpenTarget}
                        aria-label={`Target ${g.name}`}
                        data-testid={`failing-target-${g.name}`}
                      >
                        Target
                      </Button>
                    </Group>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      {older.length > 0 && (
        <Text size="xs" c="dimmed" data-testid="failing-older">
          Still failing, with no attempt in {windowWords(window)} (retries wait): {older.join(", ")}
          . A longer window shows them.
        </Text>
      )}
    </Stack>
  );
}
