// DLQ charts (Mantine charts over Recharts): volume per hour over the last 24 h on a time axis,
// and the split by error class, both for the active filter, with units, tooltips and legends.
import { BarChart } from "@mantine/charts";
import { Alert, Group, Stack, Text } from "@mantine/core";
import type { DlqFilterInput } from "../../ipc/bindings";
import { useDlqStats } from "../../ipc/dlqQueries";
import { hourlySeries } from "../../lib/dlq";
import { filterWords } from "./ReplayDialog";

const hourLabel = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });

export function DlqCharts({ filter, text }: { filter: DlqFilterInput | null; text: string }) {
  const hours = useDlqStats("hour", 10_000, filter);
  const classes = useDlqStats("error_class", 10_000, filter);
  const series = hourlySeries(hours.data?.groups ?? []).map((s) => ({
    hour: hourLabel.format(s.hour),
    "Dead deliveries": s.count,
  }));
  const byClass = (classes.data?.groups ?? []).map((g) => ({
    class: g.key,
    "Dead deliveries": g.count,
  }));
  const scope = filter ? `matching ${filterWords(filter)}` : "the whole DLQ";
  return (
    <Stack data-testid="dlq-charts" gap="lg" pt="sm">
      {(hours.isError || classes.isError) && (
        <Alert color="red">{(hours.error ?? classes.error)?.message}</Alert>
      )}
      <Group justify="space-between">
        <Text size="sm" c="dimmed" data-testid="charts-scope">
          Counts from the server, {scope}
          {text.trim() ? " (the text filter applies to the loaded rows only, not here)" : ""}.
        </Text>
        <Text size="sm" fw={500}>
          Total: {classes.data?.total ?? "…"}
        </Text>
      </Group>
      <Stack gap={4}>
        <Text fw={500}>Dead deliveries per hour, last 24 h</Text>
        <BarChart
          h={220}
          data={series}
          dataKey="hour"
          series={[{ name: "Dead deliveries", color: "red.6" }]}
          withLegend
          legendProps={{ verticalAlign: "top", height: 30 }}
          xAxisLabel="Hour it died (local time)"
          yAxisLabel="Dead deliveries"
          tickLine="y"
          tooltipAnimationDuration={100}
          data-testid="chart-hourly"
        />
      </Stack>
      <Stack gap={4}>
        <Text fw={500}>By error class</Text>
        <BarChart
          h={Math.max(120, 40 * byClass.length + 60)}
          data={byClass}
          dataKey="class"
          orientation="vertical"
          series={[{ name: "Dead deliveries", color: "orange.6" }]}
          withLegend
          legendProps={{ verticalAlign: "top", height: 30 }}
          xAxisLabel="Dead deliveries"
          yAxisProps={{ width: 90 }}
          withBarValueLabel
          data-testid="chart-classes"
        />
      </Stack>
    </Stack>
  );
}
