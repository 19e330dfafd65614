// The DLQ tile's trend: dead deliveries per hour over the last 24 h (the server's exact counts,
// the same query as the DLQ page's chart), as a sparkline with the totals in words.
import { Sparkline } from "@mantine/charts";
import { Text } from "@mantine/core";

export function DlqTrend({ series }: { series: { hour: number; count: number }[] }) {
  const day = series.reduce((sum, s) => sum + s.count, 0);
  const lastHour = series.at(-1)?.count ?? 0;
  return (
    <>
      <Sparkline
        mt={6}
        h={28}
        data={series.map((s) => s.count)}
        color="red.6"
        curveType="linear"
        fillOpacity={0.4}
        strokeWidth={1.5}
        aria-label="Dead deliveries per hour, last 24 h"
      />
      <Text size="xs" c="dimmed" data-testid="stat-dlq-trend">
        {day} died in the last 24 h · {lastHour} this hour
      </Text>
    </>
  );
}
