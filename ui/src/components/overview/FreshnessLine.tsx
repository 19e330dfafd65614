// How fresh delivery health figures are: "updated 12 s ago" (ticking), or, when the control
// plane stops answering, a yellow note saying how old the figures on screen are and why.
// Shared by the Overview and a drawer's Health tab.
import { Alert, Text } from "@mantine/core";
import { IconClockExclamation } from "@tabler/icons-react";
import { freshness, type MetricsQuery } from "../../lib/health";
import { useNow } from "../../lib/useNow";

export function FreshnessLine({
  query,
  profile,
}: {
  query: MetricsQuery;
  profile: string | undefined;
}) {
  const now = useNow(1000);
  const f = freshness(query, profile, now);
  if (f.state === "stale" || f.state === "missing")
    return (
      <Alert
        color="yellow"
        variant="light"
        icon={<IconClockExclamation size={18} />}
        p="xs"
        data-testid="health-freshness"
        data-state={f.state}
      >
        <Text size="sm">{f.text}</Text>
      </Alert>
    );
  return (
    <Text size="sm" c="dimmed" data-testid="health-freshness" data-state={f.state}>
      {f.text}
    </Text>
  );
}

/** Whether the freshness says the figures are old or absent (shown as a note of its own). */
export const isOutdated = (state: string) => state === "stale" || state === "missing";
