// TanStack Query hooks for the DLQ explorer and replay sessions. Every key is scoped by the
// profile (see queries.ts): the DLQ of one control plane is never shown under another's name.
import {
  type InfiniteData,
  type SkipToken,
  skipToken,
  useInfiniteQuery,
  useMutation,
  useQuery,
  useQueryClient,
} from "@tanstack/react-query";
import { useCallback, useEffect, useRef, useState } from "react";
import { emptyFilter } from "../lib/dlq";
import { type WindowPage, type WindowParam, windowOptions } from "../lib/dlqWindow";
import type {
  DlqCauseView,
  DlqFilterInput,
  DlqGroupBy,
  ReplaySelectionInput,
  ReplayStartInput,
} from "./bindings";
import { call } from "./client";
import { commandInvalidates, invalidate } from "./invalidation";
import { dlqKeys } from "./keys";
import { useActiveProfile } from "./queries";

export const PAGE_SIZE = 200;

type DlqKeys = ReturnType<typeof dlqKeys>;

/**
 * Key and query function for `profile`; waits (skipToken) while the profile is unknown or
 * `fetch` is null (keyed by `null` for what is missing, as `scoped` in queries.ts).
 */
function scoped<T>(
  profile: string | undefined,
  key: (s: DlqKeys) => readonly unknown[],
  fetch: ((profile: string) => Promise<T>) | null,
): { queryKey: readonly unknown[]; queryFn: (() => Promise<T>) | SkipToken } {
  return {
    queryKey: key(dlqKeys(profile ?? null)),
    queryFn: profile === undefined || fetch === null ? skipToken : () => fetch(profile),
  };
}

/**
 * The DLQ as pages fetched on demand (cursor pagination), at most `MAX_PAGES` kept in memory:
 * see lib/dlqWindow.ts for how pages dropped above are fetched again when scrolling back up.
 * `reload` fetches the kept pages again, or starts at the top when the window has moved down
 * (and `generation` changes, so the table goes back to the top with it).
 */
export function useDlqPages(filter: DlqFilterInput) {
  const profile = useActiveProfile();
  const client = useQueryClient();
  const queryKey = dlqKeys(profile ?? null).page(filter);
  const paging = windowOptions((cursor) =>
    profile === undefined
      ? Promise.reject(new Error("no control plane is selected"))
      : call("dlq_page", { profile, filter, limit: PAGE_SIZE, cursor }),
  );
  const query = useInfiniteQuery({
    ...paging,
    queryKey,
    queryFn: profile === undefined ? skipToken : paging.queryFn,
  });
  const [generation, setGeneration] = useState(0);
  const hash = JSON.stringify(queryKey);
  const keyRef = useRef(queryKey);
  keyRef.current = queryKey;
  const reset = useCallback(() => {
    setGeneration((g) => g + 1);
    return client.resetQueries({ queryKey: keyRef.current, exact: true });
  }, [client]);
  // A window left below the top (another filter, another visit) starts at the top again: the
  // table opens scrolled to the top, above which nothing would be loaded.
  // biome-ignore lint/correctness/useExhaustiveDependencies: once per query key (hash)
  useEffect(() => {
    const d = client.getQueryData<InfiniteData<WindowPage, WindowParam>>(keyRef.current);
    if (d && d.pages.length > 0 && d.pages[0].index > 0) reset();
  }, [hash, client, reset]);
  // A backfill that could not meet the kept rows: start again at the top rather than show a gap.
  const broken = query.data?.pages.some((p) => !p.complete) ?? false;
  useEffect(() => {
    if (broken) reset();
  }, [broken, reset]);
  const firstIndex = query.data?.pages[0]?.index ?? 0;
  const { refetch } = query;
  const reload = useCallback(
    () => (firstIndex > 0 ? reset() : refetch()),
    [firstIndex, reset, refetch],
  );
  return { ...query, reload, generation };
}

/**
 * Exact DLQ counts from the server, grouped; `filter: null` is the whole DLQ (the badge and
 * the overview's tile share that key, so they always agree).
 */
export function useDlqStats(
  groupBy: DlqGroupBy,
  refetchMs?: number,
  filter: DlqFilterInput | null = null,
) {
  const profile = useActiveProfile();
  return useQuery({
    ...scoped(
      profile,
      (k) => k.stats(groupBy, filter),
      (p) => call("dlq_stats", { profile: p, groupBy, filter }),
    ),
    refetchInterval: refetchMs,
  });
}

/** Error class × target counts of the DLQ matching `filter` (one server call). */
export function useDlqCauses(filter: DlqFilterInput, refetchMs = 10_000) {
  const profile = useActiveProfile();
  return useQuery({
    ...scoped(
      profile,
      (k) => k.causes(filter),
      (p) => call("dlq_causes", { profile: p, filter }),
    ),
    // In step with the charts (Charts.tsx) and the badge: the matrix is live, not a snapshot.
    refetchInterval: refetchMs,
  });
}

/**
 * Trial candidates for a replay of `filter` opened outside the DLQ page (a Recovery fix): the
 * newest page's ids, oldest first, as the DLQ page offers its loaded rows. Read while `enabled`.
 */
export function useTrialCandidates(filter: DlqFilterInput | null, enabled: boolean) {
  const profile = useActiveProfile();
  return useQuery({
    ...scoped(
      profile,
      (k) => k.sample(filter ?? emptyFilter()),
      filter && enabled
        ? (p) =>
            call("dlq_page", { profile: p, filter, limit: 100, cursor: null }).then((page) =>
              page.items.map((r) => r.delivery_id).reverse(),
            )
        : null,
    ),
  });
}

/**
 * How many dead deliveries matching `filter` died after `newest` (the dead_at of the list's
 * newest row): the rows the list does not show yet. `newest === undefined`: not known yet
 * (no answer); `null`: the list is empty, so every matching row is new.
 */
export function useDlqNewer(filter: DlqFilterInput, newest: number | null | undefined) {
  const profile = useActiveProfile();
  const since =
    newest === null || newest === undefined
      ? filter.since
      : Math.max(filter.since ?? 0, newest + 1);
  const asked = newest === undefined ? null : { ...filter, since };
  return useQuery({
    ...scoped(
      profile,
      (k) => k.newer(asked),
      asked === null
        ? null
        : (p) => call("dlq_stats", { profile: p, groupBy: "error_class", filter: asked }),
    ),
    refetchInterval: 5000,
  });
}

export function useDelivery(id: string | null) {
  const profile = useActiveProfile();
  return useQuery(
    scoped(
      profile,
      (k) => k.delivery(id),
      id ? (p) => call("get_delivery", { profile: p, id }) : null,
    ),
  );
}

export function useEvent(id: string | null) {
  const profile = useActiveProfile();
  return useQuery({
    ...scoped(
      profile,
      (k) => k.event(id),
      id ? (p) => call("get_event", { profile: p, id }) : null,
    ),
    retry: false,
  });
}

/** Every event submitted with `key` (on `endpoint`, when given), newest first. */
export function useEventsByKey(key: string | null, endpoint: string | null) {
  const profile = useActiveProfile();
  return useQuery({
    ...scoped(
      profile,
      (k) => k.eventsByKey(key, endpoint),
      key ? (p) => call("find_events", { profile: p, eventKey: key, endpoint }) : null,
    ),
    retry: false,
  });
}

export function useSchedule() {
  const profile = useActiveProfile();
  return useQuery({
    ...scoped(
      profile,
      (k) => k.schedule,
      (p) => call("retry_schedule", { profile: p }),
    ),
    staleTime: 60_000,
  });
}

export function useReplays(refetchMs = 2000) {
  const profile = useActiveProfile();
  return useQuery({
    ...scoped(
      profile,
      (k) => k.replays,
      (p) => call("list_replays", { profile: p }),
    ),
    refetchInterval: refetchMs,
  });
}

export function useReplay(id: string | null, refetchMs: number | false = 1000) {
  const profile = useActiveProfile();
  return useQuery({
    ...scoped(
      profile,
      (k) => k.replay(id),
      id ? (p) => call("get_replay", { profile: p, id }) : null,
    ),
    refetchInterval: refetchMs,
  });
}

/**
 * The replay writes (outbox rows) and their states. The core announces every move of a row
 * (`replay_write` core event, which invalidates this); the slow poll is only a safety net.
 */
export function useReplayWrites(refetchMs = 15_000) {
  const profile = useActiveProfile();
  return useQuery({
    ...scoped(
      profile,
      (k) => k.writes,
      (p) => call("list_replay_writes", { profile: p }),
    ),
    refetchInterval: refetchMs,
  });
}

/** A replay's dry run: how many it would take and, for a filter, by target and error class. */
export type ReplayPreview = { count: number; causes: DlqCauseView[] };

/**
 * The dry-run count and its breakdown, read together, once per call: the dialog's headline,
 * its button and its breakdown come from the same moment. (A breakdown read again every 10 s
 * beside a count read once drifted apart: a cancelled replay gives its originals back to the
 * DLQ with their old dead_at, inside a trial's "rest" window, so the breakdown said 520 while
 * the headline and the button still said 519.)
 */
export function useDryRun() {
  const profile = useActiveProfile();
  return useMutation({
    mutationFn: async (selection: ReplaySelectionInput): Promise<ReplayPreview> => {
      if (profile === undefined) throw new Error("no control plane is selected");
      const [count, causes] = await Promise.all([
        call("replay_dry_run", { profile, selection }),
        selection.by === "filter"
          ? call("dlq_causes", { profile, filter: selection.filter })
          : Promise.resolve([]),
      ]);
      return { count, causes };
    },
  });
}

export function useStartReplay() {
  const client = useQueryClient();
  const profile = useActiveProfile();
  return useMutation({
    mutationFn: (input: ReplayStartInput) => {
      if (profile === undefined) throw new Error("no control plane is selected");
      return call("start_replay", { profile, input });
    },
    onSettled: () => {
      if (profile !== undefined) invalidate(client, commandInvalidates.start_replay(profile));
    },
  });
}

export function useCancelReplay() {
  const client = useQueryClient();
  const profile = useActiveProfile();
  return useMutation({
    mutationFn: (sessionId: string) => {
      if (profile === undefined) throw new Error("no control plane is selected");
      return call("cancel_replay", { profile, sessionId });
    },
    onSettled: () => {
      if (profile !== undefined) invalidate(client, commandInvalidates.cancel_replay(profile));
    },
  });
}
