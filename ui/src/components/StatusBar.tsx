import { Badge, Group, Progress, Text, Tooltip } from "@mantine/core";
import { IconCloudOff, IconPlugConnected } from "@tabler/icons-react";
import { useSyncStatus } from "../ipc/queries";
import { relativeTime } from "../lib/format";
import { useNow } from "../lib/useNow";

/** Online or offline, last sync, pending writes and the progress of a running sync. */
export function StatusBar({ onOutbox }: { onOutbox: () => void }) {
  const status = useSyncStatus();
  const now = useNow();
  const s = status.data;
  const online = s?.online;
  return (
    <Group h="100%" px="md" justify="space-between" wrap="nowrap" data-testid="status-bar">
      <Group gap="md" wrap="nowrap">
        {online === false ? (
          <Tooltip
            label={s?.offline_reason ?? "The control plane does not answer"}
            multiline
            w={360}
          >
            <Badge
              color="red"
              variant="filled"
              leftSection={<IconCloudOff size={12} />}
              data-testid="status-online"
              data-online="false"
            >
              Offline — working from the local copy; changes are queued
            </Badge>
          </Tooltip>
        ) : (
          <Badge
            color={online ? "green" : "gray"}
            variant="light"
            leftSection={<IconPlugConnected size={12} />}
            data-testid="status-online"
            data-online={online ? "true" : "unknown"}
          >
            {online ? "Online" : "Connecting…"}
          </Badge>
        )}
        <Text size="xs" c="dimmed" data-testid="status-last-sync">
          Last sync: {relativeTime(s?.last_sync_at ?? null, now)}
        </Text>
      </Group>
      <Group gap="md" wrap="nowrap">
        {online === false && s && s.pending > 0 && (
          <Text size="xs" c="dimmed" data-testid="sync-waiting">
            Sends by itself when the control plane answers
          </Text>
        )}
        {online !== false && s?.syncing && s.round_total > 0 && (
          <Group gap={6} wrap="nowrap" data-testid="sync-progress">
            <Text size="xs">
              Syncing {s.round_done}/{s.round_total}
            </Text>
            <Progress value={(100 * s.round_done) / s.round_total} w={120} size="sm" />
          </Group>
        )}
        <Text
          size="xs"
          style={{ cursor: "pointer" }}
          onClick={onOutbox}
          data-testid="status-pending"
          c={s?.needs_attention ? "red" : undefined}
        >
          {s ? `${s.pending} pending` : "…"}
          {s?.needs_attention ? ` · ${s.needs_attention} need attention` : ""}
        </Text>
        <Text size="xs" c="dimmed">
          {s?.profile ?? ""}
        </Text>
      </Group>
    </Group>
  );
}
