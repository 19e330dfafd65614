// Keeps the screen current from the core's events: no polling for state the core announces.
import { useQueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import type { CoreEvent, SyncStatus } from "../ipc/bindings";
import { onCoreEvent } from "../ipc/client";
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
