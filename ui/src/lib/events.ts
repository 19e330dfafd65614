// Keeps the screen current from the core's events: no polling for state the core announces.
// Every event names its profile, and only that profile's queries are refreshed.
import { notifications } from "@mantine/notifications";
import { useQueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import type { CoreEvent, SyncStatus } from "../ipc/bindings";
import { onCoreEvent } from "../ipc/client";
import { dlqKeys } from "../ipc/dlqQueries";
import { healthKeys } from "../ipc/healthQueries";
import { keys, scope } from "../ipc/queries";

export function applyCoreEvent(client: ReturnType<typeof useQueryClient>, event: CoreEvent): void {
  const invalidate = (queryKey: readonly unknown[]) => client.invalidateQueries({ queryKey });
  switch (event.type) {
    case "sync": {
      const { type: _type, ...status } = event;
      const before = client.getQueryData<SyncStatus>(keys.sync);
      client.setQueryData<SyncStatus>(keys.sync, status);
      if (before?.online !== status.online) {
        invalidate(scope(status.profile).health);
        // Back online: the dashboard's stale figures refresh now, not at the next 15 s tick.
        invalidate(healthKeys(status.profile).all);
      }
      invalidate(scope(status.profile).overview);
      invalidate(keys.profiles);
      break;
    }
    case "operation": {
      const s = scope(event.profile);
      for (const queryKey of [
        keys.outbox,
        s.resources(event.kind),
        s.resource(event.kind, event.name),
        s.history(event.kind, event.name),
        s.overview,
        keys.audit,
        keys.profiles,
        ["conflict"],
      ]) {
        invalidate(queryKey);
      }
      break;
    }
    case "resources_changed": {
      const s = scope(event.profile);
      for (const queryKey of [s.allResources, s.allResource, s.overview]) invalidate(queryKey);
      break;
    }
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
    case "replay_write": {
      // The replay outbox row moved (saved → sent → confirmed / needs attention): the write
      // badges and the sessions (a confirmed start is a running session) are stale.
      const k = dlqKeys(event.profile);
      for (const queryKey of [k.writes, k.replays, k.replay(event.session_id)]) {
        invalidate(queryKey);
      }
      break;
    }
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
      // Whatever the core announced before this listener existed (the first sync runs while
      // the first screen loads) was missed: read the status again now that nothing can be.
      client.invalidateQueries({ queryKey: keys.sync });
    });
    return () => {
      cancelled = true;
      unlisten?.();
    };
  }, [client]);
}
