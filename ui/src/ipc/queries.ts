// TanStack Query hooks over the typed IPC. Query keys are small and stable so the core's events
// can invalidate exactly what changed.
import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { Kind, ProfileInput, Resolution, WriteRequest } from "./bindings";
import { call } from "./client";

export const keys = {
  profiles: ["profiles"] as const,
  health: ["health"] as const,
  overview: ["overview"] as const,
  resources: (kind: Kind) => ["resources", kind] as const,
  // Under "resources" so a cache change refreshes open searches too.
  resourceSearch: (query: string) => ["resources", "search", query] as const,
  allResources: ["resources"] as const,
  resource: (kind: Kind, name: string) => ["resource", kind, name] as const,
  live: (kind: Kind, name: string) => ["live", kind, name] as const,
  history: (kind: Kind, name: string) => ["history", kind, name] as const,
  dependants: (kind: Kind, name: string) => ["dependants", kind, name] as const,
  outbox: ["outbox"] as const,
  conflict: (id: number) => ["conflict", id] as const,
  sync: ["sync"] as const,
  audit: ["audit"] as const,
};

export const useProfiles = () =>
  useQuery({ queryKey: keys.profiles, queryFn: () => call("list_profiles", {}) });

export const useHealth = () =>
  useQuery({
    queryKey: keys.health,
    queryFn: () => call("check_health", {}),
    refetchInterval: 15_000,
  });

export const useOverview = () =>
  useQuery({ queryKey: keys.overview, queryFn: () => call("overview", {}) });

export const useResources = (kind: Kind) =>
  useQuery({ queryKey: keys.resources(kind), queryFn: () => call("list_resources", { kind }) });

/** The command palette's resource search: names containing `query`, from the local cache. */
export const useResourceSearch = (query: string) =>
  useQuery({
    queryKey: keys.resourceSearch(query.trim()),
    queryFn: () => call("search_resources", { query: query.trim(), limit: 30 }),
    enabled: query.trim().length > 0,
    placeholderData: keepPreviousData,
  });

export const useResource = (kind: Kind, name: string | null) =>
  useQuery({
    queryKey: keys.resource(kind, name ?? ""),
    queryFn: () => call("get_resource", { kind, name: name ?? "" }),
    enabled: !!name,
  });

export const useLive = (kind: Kind, name: string, enabled: boolean) =>
  useQuery({
    queryKey: keys.live(kind, name),
    queryFn: () => call("fetch_live", { kind, name }),
    enabled,
    retry: false,
  });

export const useHistory = (kind: Kind, name: string | null) =>
  useQuery({
    queryKey: keys.history(kind, name ?? ""),
    queryFn: () => call("resource_history", { kind, name: name ?? "" }),
    enabled: !!name,
  });

export const useDependants = (kind: Kind, name: string, enabled: boolean) =>
  useQuery({
    queryKey: keys.dependants(kind, name),
    queryFn: () => call("dependants", { kind, name }),
    enabled,
  });

export const useOutbox = () =>
  useQuery({ queryKey: keys.outbox, queryFn: () => call("list_outbox", {}) });

export const useConflict = (id: number | null) =>
  useQuery({
    queryKey: keys.conflict(id ?? -1),
    queryFn: () => call("get_conflict", { id: id ?? -1 }),
    enabled: id !== null,
  });

export const useSyncStatus = () =>
  useQuery({ queryKey: keys.sync, queryFn: () => call("sync_status", {}) });

export const useAudit = (limit = 500) =>
  useQuery({ queryKey: keys.audit, queryFn: () => call("list_audit", { limit }) });

/** Everything that shows cached or queued state. */
function useInvalidateLocal() {
  const client = useQueryClient();
  return () =>
    Promise.all(
      [
        keys.allResources,
        ["resource"],
        ["history"],
        keys.outbox,
        keys.overview,
        keys.sync,
        keys.audit,
      ].map((queryKey) => client.invalidateQueries({ queryKey })),
    );
}

export function useQueueWrite() {
  const invalidate = useInvalidateLocal();
  return useMutation({
    mutationFn: (request: WriteRequest) => call("queue_write", { request }),
    onSettled: invalidate,
  });
}

export function useRetryNow() {
  const invalidate = useInvalidateLocal();
  return useMutation({
    mutationFn: (id: number) => call("retry_now", { id }),
    onSettled: invalidate,
  });
}

export function useResolve() {
  const invalidate = useInvalidateLocal();
  return useMutation({
    mutationFn: ({ id, resolution }: { id: number; resolution: Resolution }) =>
      call("resolve", { id, resolution }),
    onSettled: invalidate,
  });
}

export function useSyncNow() {
  const invalidate = useInvalidateLocal();
  return useMutation({ mutationFn: () => call("sync_now", {}), onSettled: invalidate });
}

/** Switching, adding or removing a profile changes everything on screen. */
function useInvalidateAll() {
  const client = useQueryClient();
  return () => client.invalidateQueries();
}

export function useSaveProfile() {
  const invalidate = useInvalidateAll();
  return useMutation({
    mutationFn: ({ original, input }: { original: string | null; input: ProfileInput }) =>
      call("save_profile", { original, input }),
    onSuccess: invalidate,
  });
}

export function useRemoveProfile() {
  const invalidate = useInvalidateAll();
  return useMutation({
    mutationFn: (name: string) => call("remove_profile", { name }),
    onSuccess: invalidate,
  });
}

export function useActivateProfile() {
  const invalidate = useInvalidateAll();
  return useMutation({
    mutationFn: (name: string) => call("activate_profile", { name }),
    onSuccess: invalidate,
  });
}

export function useTestConnection() {
  return useMutation({ mutationFn: (input: ProfileInput) => call("test_connection", { input }) });
}

export const useOpAudit = (id: number) =>
  useQuery({ queryKey: ["op-audit", id], queryFn: () => call("op_audit", { id }) });
