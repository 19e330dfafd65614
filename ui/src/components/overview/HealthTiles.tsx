// The dashboard's figures: success rate and attempts over the window, and what is waiting,
// on the wire and replaying now. A figure the server cannot compute reads "—" with the reason.
import { SimpleGrid } from "@mantine/core";
import type { DeliveryHealthView, MetricsWindow } from "../../ipc/bindings";
import { relativeTime } from "../../lib/format";
import {
  ABSENT,
  durationMs,
  type Freshness,
  percent,
  rateColor,
  windowWords,
} from "../../lib/health";
import { Stat } from "./Stat";

const TILES = [
  ["Success rate", "health-success-rate"],
  ["Attempts", "health-attempts"],
  ["Pending deliveries", "health-pending"],
  ["In flight", "health-in-flight"],
  ["Replays running", "health-replays"],
] as const;

export function HealthTiles({
  data,
  fresh,
  window,
  now,
}: {
  data: DeliveryHealthView | undefined;
  fresh: Freshness;
  window: MetricsWindow;
  now: number;
}) {
  const stale = fresh.state === "stale";
  // Old figures stay readable but dimmed; the freshness line above says how old.
  const tone = (color?: string) => (stale ? "dimmed" : color);
  if (!data) {
    const value = fresh.state === "loading" ? "…" : ABSENT;
    const hint = fresh.state === "loading" ? "asking the control plane" : "unknown";
    return (
      <SimpleGrid cols={{ base: 2, md: 3, lg: 5 }} data-testid="health-tiles">
        {TILES.map(([label, testid]) => (
          <Stat
            key={testid}
            label={label}
            value={value}
            hint={hint}
            title={fresh.text}
            testid={testid}
          />
        ))}
      </SimpleGrid>
    );
  }
  const t = data.totals;
  const f = t.figures;
  const within = windowWords(window);
  const oldest =
    t.oldest_pending_at !== null
      ? `oldest created ${relativeTime(t.oldest_pending_at, now)}`
      : t.deliveries_pending === 0
        ? "none waiting"
        : `oldest: ${ABSENT} (not reported)`;
  return (
    <SimpleGrid cols={{ base: 2, md: 3, lg: 5 }} data-testid="health-tiles">
      <Stat
        label="Success rate"
        value={percent(f.success_rate)}
        color={tone(rateColor(f.success_rate))}
        hint={
          f.success_rate === null
            ? `no attempts in ${within}`
            : `${f.successes} of ${f.attempts} attempts succeeded`
        }
        title={f.success_rate === null ? "Cannot be computed without attempts" : undefined}
        testid="health-success-rate"
      />
      <Stat
        label="Attempts"
        value={f.attempts}
        color={tone()}
        hint={`${f.failures} failed · p95 ${durationMs(f.latency_ms?.p95)}`}
        title={f.latency_ms === null ? "Latency: no attempts in the window" : undefined}
        testid="health-attempts"
      />
      <Stat
        label="Pending deliveries"
        value={t.deliveries_pending}
        color={tone()}
        hint={oldest}
        testid="health-pending"
      />
      <Stat
        label="In flight"
        value={t.deliveries_in_flight}
        color={tone()}
        hint="attempts on the wire now"
        testid="health-in-flight"
      />
      <Stat
        label="Replays running"
        value={t.replays_running}
        color={tone(t.replays_running > 0 ? "blue" : undefined)}
        hint={`${t.events_accepted} events accepted in ${within}`}
        testid="health-replays"
      />
    </SimpleGrid>
  );
}
