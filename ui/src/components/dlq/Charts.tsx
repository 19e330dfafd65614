// Light SVG-free bar charts (no chart dependency): DLQ volume per hour and by error class.
import { Box, Group, Stack, Text, Tooltip } from "@mantine/core";
import { useDlqStats } from "../../ipc/dlqQueries";
import { hourlySeries } from "../../lib/dlq";

function Bars({
  data,
  label,
}: {
  data: { key: string; count: number; title: string }[];
  label: string;
}) {
  const max = Math.max(1, ...data.map((d) => d.count));
  return (
    <Stack gap={4}>
      <Text fw={500}>{label}</Text>
      <Group gap={2} align="end" h={120} wrap="nowrap">
        {data.map((d) => (
          <Tooltip key={d.key} label={`${d.title}: ${d.count}`}>
            <Box
              style={{
                flex: 1,
                minWidth: 4,
                height: `${(d.count / max) * 100}%`,
                minHeight: d.count ? 2 : 0,
              }}
              bg="red.6"
            />
          </Tooltip>
        ))}
      </Group>
    </Stack>
  );
}

export function DlqCharts() {
  const hours = useDlqStats("hour", 10_000);
  const classes = useDlqStats("error_class", 10_000);
  const series = hourlySeries(hours.data?.groups ?? []);
  return (
    <Stack data-testid="dlq-charts">
      <Bars
        label="DLQ volume, last 24 h (per hour)"
        data={series.map((s) => ({
          key: String(s.hour),
          count: s.count,
          title: new Date(s.hour).toLocaleString(),
        }))}
      />
      <Stack gap={4}>
        <Text fw={500}>By error class</Text>
        {(classes.data?.groups ?? []).map((g) => (
          <Group key={g.key} gap="xs" wrap="nowrap">
            <Text w={90} size="sm">
              {g.key}
            </Text>
            <Box
              h={14}
              bg="red.6"
              style={{ width: `${(g.count / Math.max(1, classes.data?.total ?? 1)) * 100}%` }}
            />
            <Text size="sm">{g.count}</Text>
          </Group>
        ))}
      </Stack>
    </Stack>
  );
}
