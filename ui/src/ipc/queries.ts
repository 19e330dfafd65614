// TanStack Query hooks over the typed IPC.
//
// Every query whose answer depends on a control plane is keyed by that control plane's
// profile (`scope(profile)` below) and passes the profile to the command: data fetched for one
// profile can never be shown under another's name, and an answer that arrives after a switch
// lands in the cache of the profile it was asked for. While no profile (or another input, a
// name or an id) is known the queries wait (`skipToken`), keyed by what they have: a missing
// input is `null` in the key, never a placeholder value another query could share. Only state that spans every profile (the profile list, the outbox across
// profiles, the local audit log, one operation by id) has an unscoped key.
import {
  keepPreviousData,
  type QueryClient,
  type SkipToken,
  skipToken,
  useMutation,
  useQuery,
  useQueryClient,
} from "@tanstack/react-query";
import type {
  ProfileInput,
  ProfileView,
  QueuedWork,
  Resolution,
  ResourceKind,
  WriteRequest,
} from "./bindings";
import { call } from "./client";
import { commandInvalidates, invalidate } from "./invalidation";
import { keys, scope } from "./keys";

export { keys, scope };

/** The profile list (every control plane, which one is active). */
export const profilesQuery = () =>
  ({ queryKey: keys.profiles, queryFn: () => call("list_profiles", {}) }) as const;

export const useProfiles = () => useQuery(profilesQuery());

/** The profile every page shows; `undefined` until the profile list has loaded. */
export function useActiveProfile(): string | undefined {
  return useProfiles().data?.find((p) => p.active)?.name;
}

/**
 * The key and query function of a profile-scoped query: waits (`skipToken`) while no profile
 * is known, or when `fetch` is null (another input missing, or not wanted yet).
 */
export function scoped<T>(
  profile: string | undefined,
  key: (s: ReturnType<typeof scope>, profile: string | null) => readonly unknown[],
  fetch: ((profile: string) => Promise<T>) | null,
): { queryKey: readonly unknown[]; queryFn: (() => Promise<T>) | SkipToken } {
  return {
    queryKey: key(scope(profile ?? null), profile ?? null),
    queryFn: profile === undefined || fetch === null ? skipToken : () => fetch(profile),
  };
}

export function useHealth() {
  const profile = useActiveProfile();
  return useQuery({
    ...scoped(
      profile,
      (s) => s.health,
      (p) => call("check_health", { profile: p }),
    ),
    refetchInterval: 15_000,
  });
}

/** The overview's figures of `profile` (waits while it is unknown). */
export const overviewQuery = (profile: string | undefined) =>
  scoped(
    profile,
    (s) => s.overview,
    (p) => call("overview", { profile: p }),
  );

export function useOverview() {
  return useQuery(overviewQuery(useActiveProfile()));
}

export function useResources(kind: ResourceKind) {
  const profile = useActiveProfile();
  return useQuery(
    scoped(
      profile,
      (s) => s.resources(kind),
      (p) => call("list_resources", { profile: p, kind }),
    ),
  );
}

/** The command palette's resource search: names containing `query`, from the local cache. */
export function useResourceSearch(query: string) {
  const profile = useActiveProfile();
  const q = query.trim();
  return useQuery({
    ...scoped(
      profile,
      (s) => s.resourceSearch(q),
      q ? (p) => call("search_resources", { profile: p, query: q, limit: 30 }) : null,
    ),
    placeholderData: keepPreviousData,
  });
}

export function useResource(kind: ResourceKind, name: string | null) {
  const profile = useActiveProfile();
  return useQuery(
    scoped(
      profile,
      (s) => s.resource(kind, name),
      name ? (p) => call("get_resource", { profile: p, kind, name }) : null,
    ),
  );
}

export function useLive(kind: ResourceKind, name: string, enabled: boolean) {
  const profile = useActiveProfile();
  return useQuery({
    ...scoped(
      profile,
      (s) => s.live(kind, name),
      enabled ? (p) => call("fetch_live", { profile: p, kind, name }) : null,
    ),
    retry: false,
  });
}

export function useHistory(kind: ResourceKind, name: string | null) {
  const profile = useActiveProfile();
  return useQuery(
    scoped(
      profile,
      (s) => s.history(kind, name),
      name ? (p) => call("resource_history", { profile: p, kind, name }) : null,
    ),
  );
}

export function useDependants(kind: ResourceKind | null, name: string | null, enabled: boolean) {
  const profile = useActiveProfile();
  return useQuery(
    scoped(
      profile,
      (s) => s.dependants(kind, name),
      enabled && kind && name ? (p) => call("dependants", { profile: p, kind, name }) : null,
    ),
  );
}

/** Every profile's writes, newest first. */
export const useOutbox = () =>
  useQuery({ queryKey: keys.outbox, queryFn: () => call("list_outbox", { profile: null }) });

export const useConflict = (id: number | null) =>
  useQuery({
    queryKey: keys.conflict(id),
    queryFn: id === null ? skipToken : () => call("get_conflict", { id }),
  });

/** The outbox and sync state of every profile. */
export const syncStatusQuery = () =>
  ({ queryKey: keys.sync, queryFn: () => call("sync_status", {}) }) as const;

export const useSyncStatus = () => useQuery(syncStatusQuery());

/**
 * Starts the first screen's commands before the first render (main.tsx): the profile list
 * and the sync state at once, the active profile's overview as soon as the list names it.
 * Without it they wait for the first render to commit and, for the overview, for the profile
 * list's answer to render too (docs/desktop.md, "Start-up order"). A failure is left to the
 * hooks, which ask again and show it.
 */
export function prefetchFirstScreen(client: QueryClient): Promise<void> {
  const status = client.prefetchQuery(syncStatusQuery());
  const overview = client
    .fetchQuery(profilesQuery())
    .then((profiles) => {
      const active = profiles.find((p) => p.active)?.name;
      return active === undefined ? undefined : client.prefetchQuery(overviewQuery(active));
    })
    .catch(() => undefined);
  return Promise.all([status, overview]).then(() => undefined);
}

export const useAudit = (limit = 500) =>
  useQuery({ queryKey: keys.audit, queryFn: () => call("list_audit", { limit }) });

export const useOpAudit = (id: number) =>
  useQuery({ queryKey: keys.opAudit(id), queryFn: () => call("op_audit", { id }) });

/** Queues a write for the profile shown (the one the form or drawer was opened on). */
export function useQueueWrite() {
  const client = useQueryClient();
  const profile = useActiveProfile();
  return useMutation({
    mutationFn: (request: WriteRequest) => {
      if (profile === undefined) throw new Error("no control plane is selected");
      return call("queue_write", { profile, request });
    },
    onSettled: () => invalidate(client, commandInvalidates.queue_write(profile)),
  });
}

export function useRetryNow() {
  const client = useQueryClient();
  const profile = useActiveProfile();
  return useMutation({
    mutationFn: (id: number) => call("retry_now", { id }),
    onSettled: () => invalidate(client, commandInvalidates.retry_now(profile)),
  });
}

export function useResolve() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ id, resolution }: { id: number; resolution: Resolution; profile?: string }) =>
      call("resolve", { id, resolution }),
    // A row of the outbox may belong to any profile: refresh that profile's views.
    onSettled: (_data, _error, vars) =>
      invalidate(client, commandInvalidates.resolve(vars.profile)),
  });
}

export function useSyncNow() {
  const client = useQueryClient();
  const profile = useActiveProfile();
  return useMutation({
    mutationFn: () => call("sync_now", {}),
    onSettled: () => invalidate(client, commandInvalidates.sync_now(profile)),
  });
}

/**
 * After a switch, the new profile is active at once: its queries have their own keys, so the
 * previous profile's data is never on screen under the new name (it stays cached under its
 * own key for when the person switches back).
 */
function markActive(client: QueryClient, name: string) {
  client.setQueryData<ProfileView[]>(keys.profiles, (list) =>
    list?.map((p) => ({ ...p, active: p.name === name })),
  );
}

export function useSaveProfile() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ original, input }: { original: string | null; input: ProfileInput }) =>
      call("save_profile", { original, input }),
    onSuccess: (saved, { original }) => {
      invalidate(client, commandInvalidates.save_profile(saved.name, !!original));
    },
  });
}

/** The work queued for `name` in every kind (writes, rotations, replays…), counted afresh. */
export const useQueuedWork = (name: string) =>
  useQuery({
    queryKey: keys.queued(name),
    queryFn: () => call("queued_work", { name }),
    refetchOnMount: "always",
  });

/**
 * Removes a profile, losing at most `discard` (the queued work the person was shown; the
 * core refuses with `queued_work` when more is queued since).
 */
export function useRemoveProfile() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ name, discard }: { name: string; discard: QueuedWork }) =>
      call("remove_profile", { name, discard }),
    onSuccess: (_lost, { name }) => {
      client.removeQueries({ queryKey: scope(name).all });
      client.removeQueries({ queryKey: keys.queued(name) });
      invalidate(client, commandInvalidates.remove_profile());
    },
  });
}

export function useActivateProfile() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (name: string) => call("activate_profile", { name }),
    onSuccess: (profile) => {
      markActive(client, profile.name);
      invalidate(client, commandInvalidates.activate_profile());
    },
  });
}

export function useTestConnection() {
  return useMutation({ mutationFn: (input: ProfileInput) => call("test_connection", { input }) });
}
