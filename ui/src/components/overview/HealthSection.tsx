// The overview's delivery health: a window picker, how fresh the figures are, the tiles, the
// attempts chart and the failing targets. Figures come from the control plane every 15 s;
// when it stops answering, the last ones stay on screen, dimmed and marked stale.
import { Card, Group, SegmentedControl, Stack, Title } from "@mantine/core";
import { useDeliveryMetrics } from "../../ipc/healthQueries";
import { freshness, windows } from "../../lib/health";
import { useHealthWindow } from "../../lib/healthWindow";
import { useNow } from "../../lib/useNow";
import { DeliveryChart } from "../charts/lazy";
import { FailingTargets } from "./FailingTargets";
import { FreshnessLine, isOutdated } from "./FreshnessLine";
import { HealthTiles } from "./HealthTiles";

export function HealthSection({
  profile,
  onOpenDlq,
  onOpenTarget,
}: {
  profile: string | undefined;
  onOpenDlq?: (target: string) => void;
  onOpenTarget?: (target: string) => void;
}) {
  const [window, pick] = useHealthWindow();
  const metrics = useDeliveryMetrics(window, "target");
  const now = useNow(5000);
  const fresh = freshness(metrics, profile, now);
  // Keyed by profile and window: this is the answer for exactly what is on screen.
  const data = metrics.data;
  return (
    <Card withBorder padding="md" data-testid="delivery-health">
      <Stack gap="sm">
        <Group justify="space-between" align="center">
          <Group gap="sm" align="baseline">
            <Title order={5}>Delivery health</Title>
            {!isOutdated(fresh.state) && <FreshnessLine query={metrics} profile={profile} />}
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
        {isOutdated(fresh.state) && <FreshnessLine query={metrics} profile={profile} />}
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
