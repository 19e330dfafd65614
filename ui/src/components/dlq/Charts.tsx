// DLQ charts (@mantine/charts over Recharts), all for the view's filter (server counts):
// dead deliveries per hour over the last 24 h on a local-time axis, the split by error class
// (a donut with a legend) and by target (bars). Tooltips on every chart; clicking an hour, a
// class or a target narrows the entries to it.
import { BarChart, DonutChart } from "@mantine/charts";
import {
  Alert,
  ColorSwatch,
  Group,
  SimpleGrid,
  Stack,
  Text,
  UnstyledButton,
  VisuallyHidden,
} from "@mantine/core";
import type { DlqFilterInput, ErrorClass } from "../../ipc/bindings";
import { useDlqStats, useSchedule } from "../../ipc/dlqQueries";
import { hourlySeries } from "../../lib/dlq";
import { filterWords } from "./ReplayDialog";

const HOUR = 3_600_000;
const hourTick = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
const hourLong = new Intl.DateTimeFormat(undefined, {
  weekday: "short",
  day: "numeric",
  month: "short",
  hour: "2-digit",
  minute: "2-digit",
});
const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;

/** Theme colours (CSS variables, readable on the light and the dark scheme) per error class. */
export const classColors: Record<string, string> = {
  http_5xx: "red.6",
  http_4xx: "yellow.6",
  timeout: "orange.6",
  connect: "grape.6",
  tls: "cyan.6",
  forbidden_address: "gray.6",
};

const plural = (n: number) => (n === 1 ? "dead delivery" : "dead deliveries");
const cut = (name: string, max = 22) => (name.length > max ? `${name.slice(0, max - 1)}…` : name);

export type ChartPick = Partial<Pick<DlqFilterInput, "since" | "until" | "error_class" | "target">>;

export function DlqCharts({
  filter,
  text,
  onPick,
}: {
  filter: DlqFilterInput | null;
  text: string;
  /** A bar or segment was clicked: narrow the entries to it. */
  onPick?: (pick: ChartPick) => void;
}) {
  const hours = useDlqStats("hour", 10_000, filter);
  const classes = useDlqStats("error_class", 10_000, filter);
  const targets = useDlqStats("target", 10_000, filter);
  const schedule = useSchedule();
  const series = hourlySeries(hours.data?.groups ?? []).map((s) => ({
    hour: s.hour,
    label: hourTick.format(s.hour),
    "Dead deliveries": s.count,
  }));
  const byClass = (classes.data?.groups ?? []).map((g) => ({
    name: g.key,
    value: g.count,
    color: classColors[g.key] ?? "blue.6",
  }));
  const byTarget = (targets.data?.groups ?? [])
    .slice()
    .sort((a, b) => b.count - a.count || a.key.localeCompare(b.key))
    .map((g) => ({ target: g.key, "Dead deliveries": g.count }));
  const scope = filter ? `matching ${filterWords(filter)}` : "the whole DLQ";
  const error = hours.error ?? classes.error ?? targets.error;
  const total = classes.data?.total;
  const last24 = series.reduce((n, s) => n + s["Dead deliveries"], 0);
  const peak = series.reduce((p, s) => (s["Dead deliveries"] > p["Dead deliveries"] ? s : p), {
    hour: 0,
    label: "",
    "Dead deliveries": 0,
  });
  const attempts = schedule.data?.length;
  const budget = attempts ? `their ${attempts} attempts` : "their retry schedule";

  return (
    <Stack data-testid="dlq-charts" gap="lg" pt="sm">
      {error && <Alert color="red">{error.message}</Alert>}
      <Group justify="space-between">
        <Text size="sm" c="dimmed" data-testid="charts-scope">
          Counts from the server, {scope}
          {text.trim() ? " (the text filter applies to the loaded rows only, not here)" : ""}.
        </Text>
        <Text size="sm" fw={500}>
          Total: {total ?? "…"}
        </Text>
      </Group>
      {total === 0 ? (
        <Alert color="gray" data-testid="charts-empty" title="Nothing dead yet">
          {filter ? "No dead deliveries match this filter. " : "The DLQ is empty. "}
          Deliveries that exhaust {budget} land here, and these charts then show them per hour over
          the last 24 h, by error class and by target.
        </Alert>
      ) : (
        <>
          <Stack gap={4} component="figure" m={0} aria-labelledby="chart-hourly-title">
            <Text fw={500} id="chart-hourly-title" component="figcaption">
              Dead deliveries per hour, last 24 h (local time, {zone})
            </Text>
            <VisuallyHidden>
              {last24} {plural(last24)} in the last 24 hours
              {peak["Dead deliveries"] > 0
                ? `, most in the hour from ${hourLong.format(peak.hour)} (${peak["Dead deliveries"]})`
                : ""}
              .
            </VisuallyHidden>
            <BarChart
              h={240}
              data={series}
              dataKey="label"
              series={[
                { name: "Dead deliveries", label: "Dead deliveries per hour", color: "red.6" },
              ]}
              withLegend
              legendProps={{ verticalAlign: "top", height: 30 }}
              xAxisLabel={`Hour it died (local time, ${zone})`}
              yAxisLabel="dead deliveries per hour"
              yAxisProps={{ allowDecimals: false }}
              tickLine="y"
              tooltipAnimationDuration={100}
              tooltipProps={{
                labelFormatter: (
                  _: unknown,
                  payload: readonly { payload?: { hour?: number } }[],
                ) => {
                  const hour = payload?.[0]?.payload?.hour;
                  return hour ? `${hourLong.format(hour)} – ${hourTick.format(hour + HOUR)}` : "";
                },
              }}
              barProps={{
                cursor: onPick ? "pointer" : undefined,
                onClick: (_: unknown, i: number) => {
                  const s = series[i];
                  if (s && onPick) onPick({ since: s.hour, until: s.hour + HOUR });
                },
              }}
              aria-label="Dead deliveries per hour over the last 24 hours, bar chart"
              data-testid="chart-hourly"
            />
          </Stack>
          <SimpleGrid cols={{ base: 1, md: 2 }} spacing="xl">
            <Stack gap={4} component="figure" m={0} aria-labelledby="chart-classes-title">
              <Text fw={500} id="chart-classes-title" component="figcaption">
                By error class
              </Text>
              <Group align="center" gap="xl" wrap="nowrap">
                <DonutChart
                  data={byClass}
                  size={160}
                  thickness={26}
                  chartLabel={total === undefined ? "" : `${total} dead`}
                  tooltipDataSource="segment"
                  valueFormatter={(v) => `${v} ${plural(v)}`}
                  pieProps={{
                    cursor: onPick ? "pointer" : undefined,
                    onClick: (_: unknown, i: number) => {
                      const c = byClass[i];
                      if (c && onPick) onPick({ error_class: c.name as ErrorClass });
                    },
                  }}
                  aria-label="Dead deliveries by error class, donut chart"
                  data-testid="chart-classes"
                />
                <Stack
                  gap={4}
                  role="list"
                  aria-label="Legend: error classes"
                  data-testid="class-legend"
                >
                  {byClass.map((c) => (
                    <UnstyledButton
                      key={c.name}
                      role="listitem"
                      onClick={() => onPick?.({ error_class: c.name as ErrorClass })}
                      title={`Show the ${c.name} entries`}
                      data-testid={`class-${c.name}`}
                    >
                      <Group gap={8} wrap="nowrap">
                        <ColorSwatch
                          color={`var(--mantine-color-${c.color.replace(".", "-")})`}
                          size={12}
                        />
                        <Text size="sm">
                          {c.name}: {c.value}
                          {total ? ` (${Math.round((100 * c.value) / total)} %)` : ""}
                        </Text>
                      </Group>
                    </UnstyledButton>
                  ))}
                </Stack>
              </Group>
            </Stack>
            <Stack gap={4} component="figure" m={0} aria-labelledby="chart-targets-title">
              <Text fw={500} id="chart-targets-title" component="figcaption">
                By target (click a bar to show its entries)
              </Text>
              <BarChart
                h={Math.max(140, 32 * byTarget.length + 70)}
                data={byTarget}
                dataKey="target"
                orientation="vertical"
                series={[{ name: "Dead deliveries", color: "orange.6" }]}
                withLegend
                legendProps={{ verticalAlign: "top", height: 30 }}
                xAxisLabel="dead deliveries"
                xAxisProps={{ allowDecimals: false }}
                yAxisProps={{ width: 150, tickFormatter: (t: string) => cut(t) }}
                withBarValueLabel
                tooltipAnimationDuration={100}
                barProps={{
                  cursor: onPick ? "pointer" : undefined,
                  onClick: (_: unknown, i: number) => {
                    const t = byTarget[i];
                    if (t && onPick) onPick({ target: t.target });
                  },
                }}
                aria-label="Dead deliveries by target, bar chart"
                data-testid="chart-targets"
              />
            </Stack>
          </SimpleGrid>
        </>
      )}
    </Stack>
  );
}
