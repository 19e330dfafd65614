// The overview's delivery health: a window picker, how fresh the figures are, the tiles, the
// attempts chart and the failing targets. Figures come from the control plane every 15 s;
// when it stops answering, the last ones stay on screen, dimmed and marked stale.
import { Alert, Card, Group, SegmentedControl, Stack, Text, Title } from "@mantine/core";
import { IconClockExclamation } from "@tabler/icons-react";
import { useState } from "react";
import type { HealthWindow } from "../../ipc/bindings";
import { useDeliveryMetrics } from "../../ipc/healthQueries";
import { freshness, isWindow, type MetricsQuery, windows } from "../../lib/health";
import { useNow } from "../../lib/useNow";
import { DeliveryChart } from "./DeliveryChart";
import { FailingTargets } from "./FailingTargets";
import { HealthTiles } from "./HealthTiles";

const WINDOW_KEY = "overview-window";

function initialWindow(): HealthWindow {
  const saved = localStorage.getItem(WINDOW_KEY);
  return isWindow(saved) ? saved : "1h";
}

/** "updated 12 s ago", ticking every second; or how old the figures are and why. */
function FreshnessLine({ query, profile }: { query: MetricsQuery; profile: string | undefined }) {
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

export function HealthSection({
  profile,
  onOpenDlq,
  onOpenTarget,
}: {
  profile: string | undefined;
  onOpenDlq?: (target: string) => void;
  onOpenTarget?: (target: string) => void;
}) {
  const [window, setWindow] = useState<HealthWindow>(initialWindow);
  const metrics = useDeliveryMetrics(window, "target");
  const now = useNow(5000);
  const fresh = freshness(metrics, profile, now);
  // Keyed by profile and window: this is the answer for exactly what is on screen.
  const data = metrics.data;
  const pick = (value: string) => {
    if (!isWindow(value)) return;
    setWindow(value);
    localStorage.setItem(WINDOW_KEY, value);
  };
  return (
    <Card withBorder padding="md" data-testid="delivery-health">
      <Stack gap="sm">
        <Group justify="space-between" align="center">
          <Group gap="sm" align="baseline">
            <Title order={5}>Delivery health</Title>
            {fresh.state !== "stale" && fresh.state !== "missing" && (
              <FreshnessLine query={metrics} profile={profile} />
            )}
          </Group>
          <SegmentedControl
            size="xs"
            value={window}
            onChange={pick}
            data={windows.map((w) => ({ value: w.value, label: w.label }))}
            aria-label="Time window"
            data-testid="health-window"
          />
        </Group>
        {(fresh.state === "stale" || fresh.state === "missing") && (
          <FreshnessLine query={metrics} profile={profile} />
        )}
        <HealthTiles data={data} fresh={fresh} window={window} now={now} />
        {data && <DeliveryChart data={data} window={window} />}
        {data && (
          <FailingTargets
            groups={data.groups}
            window={window}
            now={now}
            onOpenDlq={onOpenDlq}
            onOpenTarget={onOpenTarget}
          />
        )}
      </Stack>
    </Card>
  );
}
