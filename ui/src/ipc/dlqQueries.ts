// TanStack Query hooks for the DLQ explorer and replay sessions.
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type {
  DlqFilterInput,
  DlqGrouping,
  ReplaySelectionInput,
  ReplayStartInput,
} from "./bindings";
import { call } from "./client";

export const PAGE_SIZE = 200;

export const dlqKeys = {
  all: ["dlq"] as const,
  page: (filter: DlqFilterInput) => ["dlq", "page", filter] as const,
  stats: (g: DlqGrouping) => ["dlq", "stats", g] as const,
  causes: (filter: DlqFilterInput) => ["dlq", "causes", filter] as const,
  delivery: (id: string) => ["delivery", id] as const,
  event: (id: string) => ["event", id] as const,
  eventsByKey: (key: string, endpoint: string | null) => ["events", key, endpoint] as const,
  schedule: ["schedule"] as const,
  replays: ["replays"] as const,
  replay: (id: string) => ["replays", id] as const,
  writes: ["replay-writes"] as const,
};

/** The DLQ as pages fetched on demand (cursor pagination). */
export const useDlqPages = (filter: DlqFilterInput) =>
  useInfiniteQuery({
    queryKey: dlqKeys.page(filter),
    queryFn: ({ pageParam }) =>
      call("dlq_page", { filter, limit: PAGE_SIZE, cursor: pageParam ?? null }),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next_cursor,
  });

export const useDlqStats = (groupBy: DlqGrouping, refetchMs?: number) =>
  useQuery({
    queryKey: dlqKeys.stats(groupBy),
    queryFn: () => call("dlq_stats", { groupBy }),
    refetchInterval: refetchMs,
  });

/** Error class × target counts of the DLQ matching `filter` (one server call). */
export const useDlqCauses = (filter: DlqFilterInput) =>
  useQuery({ queryKey: dlqKeys.causes(filter), queryFn: () => call("dlq_causes", { filter }) });

export const useDelivery = (id: string | null) =>
  useQuery({
    queryKey: dlqKeys.delivery(id ?? ""),
    queryFn: () => call("get_delivery", { id: id ?? "" }),
    enabled: !!id,
  });

export const useEvent = (id: string | null) =>
  useQuery({
    queryKey: dlqKeys.event(id ?? ""),
    queryFn: () => call("get_event", { id: id ?? "" }),
    enabled: !!id,
    retry: false,
  });

/** Every event submitted with `key` (on `endpoint`, when given), newest first. */
export const useEventsByKey = (key: string | null, endpoint: string | null) =>
  useQuery({
    queryKey: dlqKeys.eventsByKey(key ?? "", endpoint),
    queryFn: () => call("find_events", { eventKey: key ?? "", endpoint }),
    enabled: !!key,
    retry: false,
  });

export const useSchedule = () =>
  useQuery({
    queryKey: dlqKeys.schedule,
    queryFn: () => call("retry_schedule", {}),
    staleTime: 60_000,
  });

export const useReplays = (refetchMs = 2000) =>
  useQuery({
    queryKey: dlqKeys.replays,
    queryFn: () => call("list_replays", {}),
    refetchInterval: refetchMs,
  });

export const useReplay = (id: string | null, refetchMs: number | false = 1000) =>
  useQuery({
    queryKey: dlqKeys.replay(id ?? ""),
    queryFn: () => call("get_replay", { id: id ?? "" }),
    enabled: !!id,
    refetchInterval: refetchMs,
  });

/**
 * The replay writes (outbox rows) and their states. The core announces every move of a row
 * (`replay_write` core event, which invalidates this); the slow poll is only a safety net.
 */
export const useReplayWrites = (refetchMs = 15_000) =>
  useQuery({
    queryKey: dlqKeys.writes,
    queryFn: () => call("list_replay_writes", {}),
    refetchInterval: refetchMs,
  });

export const useDryRun = () =>
  useMutation({
    mutationFn: (selection: ReplaySelectionInput) => call("replay_dry_run", { selection }),
  });

export function useStartReplay() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: ReplayStartInput) => call("start_replay", { input }),
    onSettled: () => {
      client.invalidateQueries({ queryKey: dlqKeys.writes });
      client.invalidateQueries({ queryKey: dlqKeys.replays });
    },
  });
}

export function useCancelReplay() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (sessionId: string) => call("cancel_replay", { sessionId }),
    onSettled: () => client.invalidateQueries({ queryKey: dlqKeys.writes }),
  });
}
