// Attempts and failures over the window's buckets (Mantine charts over Recharts): a local-time
// axis, the bucket width as the unit, a legend and tooltips. Colors are theme colors, so the
// chart follows the light/dark scheme.
import { AreaChart } from "@mantine/charts";
import { Stack, Text } from "@mantine/core";
import type { AttemptFiguresView, DeliveryHealthView, MetricsWindow } from "../../ipc/bindings";
import { windowWords } from "../../lib/health";

const clock = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
const dayClock = new Intl.DateTimeFormat(undefined, {
  weekday: "short",
  hour: "2-digit",
  minute: "2-digit",
});

/** "2 min", "30 min", "4 h". */
export function bucketWords(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

/** The chart's rows: the tenant's buckets, or one group's (`figures`). */
export function chartSeries(data: DeliveryHealthView, figures = data.totals.figures) {
  const label = data.window === "7d" ? dayClock : clock;
  return figures.buckets.map((b) => ({
    time: label.format(b.start),
    Attempts: b.attempts,
    Failures: b.failures,
  }));
}

export function DeliveryChart({
  data,
  window,
  figures = data.totals.figures,
  height = 220,
}: {
  data: DeliveryHealthView;
  window: MetricsWindow;
  /** One group's figures (a drawer's Health tab); the tenant's totals by default. */
  figures?: AttemptFiguresView;
  height?: number;
}) {
  const unit = bucketWords(data.bucket_seconds);
  const none = figures.attempts === 0;
  return (
    <Stack gap={4} data-testid="health-chart">
      <Text fw={500} size="sm">
        Attempts and failures, {windowWords(window)} (per {unit})
      </Text>
      {none ? (
        <Text size="sm" c="dimmed" data-testid="health-chart-empty">
          No delivery attempt finished in {windowWords(window)}: the chart fills as deliveries are
          attempted.
        </Text>
      ) : (
        <AreaChart
          h={height}
          data={chartSeries(data, figures)}
          dataKey="time"
          series={[
            { name: "Attempts", color: "indigo.6" },
            { name: "Failures", color: "red.6" },
          ]}
          curveType="monotone"
          withLegend
          legendProps={{ verticalAlign: "top", height: 30 }}
          xAxisLabel="Local time"
          yAxisLabel={`Attempts per ${unit}`}
          tickLine="y"
          withDots={false}
          fillOpacity={0.25}
          tooltipAnimationDuration={100}
          aria-label={`Attempts and failures per ${unit} over ${windowWords(window)}`}
        />
      )}
    </Stack>
  );
}
