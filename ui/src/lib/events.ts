// Keeps the screen current from the core's events: no polling for state the core announces.
import { useQueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import type { CoreEvent, SyncStatus } from "../ipc/bindings";
import { onCoreEvent } from "../ipc/client";
import { dlqKeys } from "../ipc/dlqQueries";
import { keys } from "../ipc/queries";

export function applyCoreEvent(client: ReturnType<typeof useQueryClient>, event: CoreEvent): void {
  switch (event.type) {
    case "sync": {
      const { type: _type, ...status } = event;
      const before = client.getQueryData<SyncStatus>(keys.sync);
      client.setQueryData<SyncStatus>(keys.sync, status);
      if (before?.online !== status.online) client.invalidateQueries({ queryKey: keys.health });
      client.invalidateQueries({ queryKey: keys.overview });
      break;
    }
    case "operation":
      for (const queryKey of [
        keys.outbox,
        keys.resources(event.kind),
        keys.resource(event.kind, event.name),
        keys.history(event.kind, event.name),
        keys.overview,
        keys.audit,
        ["conflict"],
      ]) {
        client.invalidateQueries({ queryKey });
      }
      break;
    case "resources_changed":
      for (const queryKey of [keys.allResources, ["resource"], keys.overview]) {
        client.invalidateQueries({ queryKey });
      }
      break;
    case "replay_write":
      // The replay outbox row moved (saved → sent → confirmed / needs attention): the write
      // badges and the sessions (a confirmed start is a running session) are stale.
      for (const queryKey of [dlqKeys.writes, dlqKeys.replays, dlqKeys.replay(event.session_id)]) {
        client.invalidateQueries({ queryKey });
      }
      break;
  }
}

export function useCoreEvents(): void {
  const client = useQueryClient();
  useEffect(() => {
    let unlisten: (() => void) | undefined;
    let cancelled = false;
    onCoreEvent((event) => applyCoreEvent(client, event)).then((fn) => {
      if (cancelled) fn();
      else unlisten = fn;
    });
    return () => {
      cancelled = true;
      unlisten?.();
    };
  }, [client]);
}
