// A resource table's health cell: that resource's attempts per bucket over the window, red
// when any failed, with the figures in words for screen readers and on hover. A resource
// without attempts in the window shows "—".
import { Sparkline } from "@mantine/charts";
import { Box, Text } from "@mantine/core";
import type { HealthGroupView, MetricsWindow } from "../../ipc/bindings";
import { ABSENT, attemptsWords, windowWords } from "../../lib/health";

export function RowSparkline({
  group,
  window,
  stale = false,
}: {
  group: HealthGroupView | undefined;
  window: MetricsWindow;
  /** The last figures, kept while the control plane does not answer: dimmed and said so. */
  stale?: boolean;
}) {
  if (!group || group.figures.attempts === 0)
    return (
      <Text size="sm" c="dimmed" aria-label={`No attempts in ${windowWords(window)}`}>
        {ABSENT}
      </Text>
    );
  const label = `${attemptsWords(group, window)}${stale ? " (last fetched figures: the control plane does not answer)" : ""}`;
  const failed = group.figures.failures > 0;
  return (
    <Box
      role="img"
      aria-label={label}
      title={label}
      data-testid={`sparkline-${group.name}`}
      data-failed={failed}
      data-stale={stale}
      style={{ width: 48, height: 22, opacity: stale ? 0.45 : undefined }}
    >
      <Sparkline
        w={48}
        h={22}
        data={group.figures.buckets.map((b) => b.attempts)}
        color={failed ? "red.6" : "teal.6"}
        curveType="linear"
        fillOpacity={0.2}
        strokeWidth={1.5}
      />
    </Box>
  );
}
