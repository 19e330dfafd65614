import { Alert, Anchor, Button, Group, List, Stack, Text } from "@mantine/core";
import { useState } from "react";
import type { IpcError, ProfileView } from "../ipc/bindings";
import { isIpcError } from "../ipc/client";
import { useOutbox, useQueuedWork, useRemoveProfile } from "../ipc/queries";
import { kindLabels, operationLabels } from "../lib/format";
import { ErrorAlert } from "./ErrorAlert";

/**
 * Removing a profile: names every kind of work still queued for it (writes, rotations in
 * progress, replays, …) that is lost with it, and removes it losing at most what it showed.
 * Until the count has come back it says so and the button waits; when more was queued
 * meanwhile the core refuses, and the dialog counts again.
 */
export function RemoveProfile({
  profile,
  onDone,
  onOutbox,
}: {
  profile: ProfileView;
  onDone: () => void;
  onOutbox?: () => void;
}) {
  const queued = useQueuedWork(profile.name);
  const remove = useRemoveProfile();
  const outbox = useOutbox();
  const [error, setError] = useState<IpcError | null>(null);
  const work = queued.isFetching ? undefined : queued.data;
  const writes = (outbox.data ?? []).filter(
    (e) =>
      e.profile === profile.name &&
      (e.state === "pending" || e.state === "sending" || e.state === "needs_attention"),
  );
  const onRemove = async () => {
    if (!work) return;
    setError(null);
    try {
      await remove.mutateAsync({ name: profile.name, discard: work });
      onDone();
    } catch (e) {
      setError(isIpcError(e) ? e : { code: "internal", message: String(e), problem: null });
      await queued.refetch();
    }
  };
  return (
    <Stack data-testid="remove-profile">
      <Text size="sm">
        The connection, its stored token and its local cache are removed from this computer. Nothing
        changes on the control plane.
      </Text>
      {queued.isError ? (
        <ErrorAlert error={isIpcError(queued.error) ? queued.error : null} title="Not counted" />
      ) : !work ? (
        <Text size="sm" c="dimmed" data-testid="remove-counting">
          Counting what is still queued for it…
        </Text>
      ) : work.total > 0 ? (
        <Alert color="red" title={`Lost with it: ${work.summary}`} data-testid="remove-unsent">
          <Text size="sm">Saved on this computer and never confirmed by the control plane:</Text>
          <List size="sm" data-testid="remove-kinds">
            {work.kinds.map((k) => (
              <List.Item key={k.kind}>{k.label}</List.Item>
            ))}
          </List>
          {writes.length > 0 && (
            <List size="sm" mt="xs" data-testid="remove-writes">
              {writes.slice(0, 8).map((e) => (
                <List.Item key={e.id}>
                  {operationLabels[e.operation]} {kindLabels[e.kind].one.toLowerCase()} {e.name}
                </List.Item>
              ))}
            </List>
          )}
          {writes.length > 8 && <Text size="sm">…and {writes.length - 8} more writes.</Text>}
          {onOutbox && (
            <Anchor size="sm" component="button" onClick={onOutbox} data-testid="remove-see-outbox">
              See them in the outbox
            </Anchor>
          )}
        </Alert>
      ) : (
        <Text size="sm" c="dimmed" data-testid="remove-nothing-queued">
          Nothing is queued for it.
        </Text>
      )}
      <ErrorAlert error={error} title="Not removed" />
      <Group justify="flex-end">
        <Button variant="default" onClick={onDone}>
          Cancel
        </Button>
        <Button
          color="red"
          disabled={!work}
          loading={remove.isPending}
          onClick={onRemove}
          data-testid="confirm-remove-profile"
        >
          {work && work.total > 0 ? `Remove, losing ${work.total}` : "Remove"}
        </Button>
      </Group>
    </Stack>
  );
}
