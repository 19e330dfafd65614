import { Badge, Group, Progress, Text, Tooltip } from "@mantine/core";
import { IconCloudOff, IconPlugConnected } from "@tabler/icons-react";
import type { ProfileView, SyncStatus } from "../ipc/bindings";
import { useActiveProfile, useProfiles, useSyncStatus } from "../ipc/queries";
import { relativeTime } from "../lib/format";
import { useNow } from "../lib/useNow";

/** "2 pending for sandbox · 1 needs attention", scoped to the profile it counts. */
export function pendingText(s: SyncStatus): string {
  const attention = s.needs_attention
    ? ` · ${s.needs_attention} ${s.needs_attention === 1 ? "needs" : "need"} attention`
    : "";
  return `${s.pending} pending for ${s.profile}${attention}`;
}

/** The other profiles' unsettled writes, e.g. "2 waiting for offline-cp", or null. */
export function othersText(profiles: ProfileView[], active: string | undefined): string | null {
  const waiting = profiles
    .filter((p) => p.name !== active && p.pending + p.needs_attention > 0)
    .map((p) => `${p.pending + p.needs_attention} waiting for ${p.name}`);
  return waiting.length ? waiting.join(", ") : null;
}

/** Online or offline, last sync, pending writes and the progress of a running sync. */
export function StatusBar({ onOutbox }: { onOutbox: () => void }) {
  const status = useSyncStatus();
  const profiles = useProfiles();
  const active = useActiveProfile();
  const now = useNow();
  // Right after a switch the status may still describe the previous profile: not shown.
  const s = status.data && (!active || status.data.profile === active) ? status.data : undefined;
  const online = s?.online;
  const others = othersText(profiles.data ?? [], active);
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
          Last sync: {s ? relativeTime(s.last_sync_at, now) : "…"}
          {s && s.last_sync_at === null && online === false
            ? ` (${s.profile} has not answered yet)`
            : ""}
        </Text>
      </Group>
      <Group gap="md" wrap="nowrap">
        {online === false && s && s.pending > 0 && (
          <Text size="xs" c="dimmed" data-testid="sync-waiting">
            Sends by itself when {s.profile} answers
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
          {s ? pendingText(s) : "…"}
        </Text>
        {others && (
          <Text
            size="xs"
            c="yellow.8"
            style={{ cursor: "pointer" }}
            onClick={onOutbox}
            data-testid="status-others"
            title="Sent while that control plane is the active one"
          >
            {others}
          </Text>
        )}
      </Group>
    </Group>
  );
}
