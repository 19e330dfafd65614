// Keeps the screen current from the core's events: no polling for state the core announces.
// Every event names its profile, and only that profile's queries are refreshed.
import { notifications } from "@mantine/notifications";
import { useQueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import type { CoreEvent, SyncStatus } from "../ipc/bindings";
import { onCoreEvent } from "../ipc/client";
import { eventInvalidates, invalidate } from "../ipc/invalidation";
import { keys } from "../ipc/keys";

export function applyCoreEvent(client: ReturnType<typeof useQueryClient>, event: CoreEvent): void {
  switch (event.type) {
    case "sync": {
      const { type: _type, ...status } = event;
      const before = client.getQueryData<SyncStatus>(keys.sync);
      client.setQueryData<SyncStatus>(keys.sync, status);
      const onlineChanged = before?.online !== status.online;
      invalidate(client, eventInvalidates.sync(status.profile, onlineChanged));
      break;
    }
    case "operation":
      invalidate(client, eventInvalidates.operation(event));
      break;
    case "resources_changed":
      invalidate(client, eventInvalidates.resources_changed(event));
      break;
    case "quitting": {
      // The window stays until the writes already sent are answered: say why.
      const writes = event.sending === 1 ? "1 write" : `${event.sending} writes`;
      notifications.show({
        id: "quitting",
        loading: true,
        autoClose: false,
        withCloseButton: false,
        title: "Closing Switchyard",
        message:
          event.sending > 0
            ? `Finishing ${writes} already sent; anything else stays queued for the next launch.`
            : "Finishing the sync under way; queued writes stay for the next launch.",
      });
      break;
    }
    case "replay_write":
      // The replay outbox row moved (saved → sent → confirmed / needs attention).
      invalidate(client, eventInvalidates.replay_write(event));
      break;
  }
}

export function useCoreEvents(): void {
  const client = useQueryClient();
  useEffect(() => {
    let unlisten: (() => void) | undefined;
    let cancelled = false;
    onCoreEvent((event) => applyCoreEvent(client, event)).then((fn) => {
      if (cancelled) {
        fn();
        return;
      }
      unlisten = fn;
      invalidate(client, eventInvalidates.listening());
    });
    return () => {
      cancelled = true;
      unlisten?.();
    };
  }, [client]);
}
