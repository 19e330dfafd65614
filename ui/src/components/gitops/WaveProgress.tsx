import { Group, Progress, Stack, Text } from "@mantine/core";
import type { ApplyProgress } from "../../ipc/bindings";

const waveNames: Record<number, string> = {
  1: "Targets and endpoints",
  2: "Flows",
  3: "Flow deletes",
  4: "Endpoint and target deletes",
};

/** Each wave of an apply: confirmed, on their way, needing attention. */
export function WaveProgress({ progress }: { progress: ApplyProgress }) {
  const waves = progress.waves.filter((w) => w.total > 0);
  if (waves.length === 0) {
    return <Text size="sm">Nothing to send: the commit is applied.</Text>;
  }
  return (
    <Stack gap="xs" data-testid="wave-progress">
      {waves.map((w) => (
        <Stack key={w.wave} gap={2} data-testid={`wave-${w.wave}`} data-done={w.done === w.total}>
          <Group justify="space-between">
            <Text size="sm" fw={500}>
              Wave {w.wave} · {waveNames[w.wave]}
            </Text>
            <Text size="sm" c={w.needs_attention > 0 ? "red" : "dimmed"}>
              {w.done}/{w.total} confirmed
              {w.pending > 0 ? ` · ${w.pending} on their way` : ""}
              {w.needs_attention > 0 ? ` · ${w.needs_attention} need attention (see Outbox)` : ""}
              {w.discarded > 0 ? ` · ${w.discarded} discarded` : ""}
            </Text>
          </Group>
          <Progress.Root size="lg">
            <Progress.Section value={(100 * w.done) / w.total} color="green" />
            <Progress.Section value={(100 * w.needs_attention) / w.total} color="red" />
            <Progress.Section value={(100 * w.pending) / w.total} color="blue" animated />
          </Progress.Root>
        </Stack>
      ))}
    </Stack>
  );
}
