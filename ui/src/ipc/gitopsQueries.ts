// TanStack Query hooks for GitOps: sources, plans, apply progress, drift.
import { skipToken, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { GitopsPlan, Kind, ManagedResource, PlanOptions, SourceSpec } from "./bindings";
import { call } from "./client";
import { keys } from "./queries";

export const gitopsKeys = {
  all: ["gitops"] as const,
  sources: ["gitops", "sources"] as const,
  status: (source: string) => ["gitops", "status", source] as const,
  progress: (source: string, commit: string) => ["gitops", "progress", source, commit] as const,
  // Under "resources" too, so a cache change refreshes the badges.
  managed: ["resources", "gitops-managed"] as const,
};

export const useGitopsSources = () =>
  useQuery({ queryKey: gitopsKeys.sources, queryFn: () => call("gitops_sources", {}) });

/** A source's status against live state (lists the control plane: refreshed on demand). */
export const useGitopsStatus = (source: string | null) =>
  useQuery({
    queryKey: gitopsKeys.status(source ?? ""),
    queryFn: source ? () => call("gitops_status", { source }) : skipToken,
    retry: false,
  });

/** Per-wave progress of an apply; polls while writes are on their way. */
export const useGitopsProgress = (source: string | null, commit: string | null) =>
  useQuery({
    queryKey: gitopsKeys.progress(source ?? "", commit ?? ""),
    queryFn: source && commit ? () => call("gitops_progress", { source, commit }) : skipToken,
    refetchInterval: (query) => (query.state.data?.complete ? false : 1000),
  });

/** Resources managed by Git, by kind and name, for badges (drift against the cache). */
export function useGitopsManaged(kind?: Kind, enabled = true) {
  const query = useQuery({
    queryKey: gitopsKeys.managed,
    queryFn: enabled ? () => call("gitops_managed", {}) : skipToken,
    retry: false,
  });
  const byName: Record<string, ManagedResource> = {};
  for (const m of query.data ?? []) {
    if (!kind || m.kind === kind) byName[`${m.kind}/${m.name}`] = m;
  }
  return byName;
}

export function useAddSource() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (spec: SourceSpec) => call("gitops_add_source", { spec }),
    onSuccess: () => client.invalidateQueries({ queryKey: gitopsKeys.sources }),
  });
}

export function useRemoveSource() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (source: string) => call("gitops_remove_source", { source }),
    onSuccess: () => client.invalidateQueries({ queryKey: gitopsKeys.all }),
  });
}

export function usePlan() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ spec, options }: { spec: SourceSpec; options: PlanOptions }) =>
      call("gitops_plan", { spec, options }),
    // A plan refreshes the cache from its listing and records the source.
    onSettled: () =>
      Promise.all(
        [gitopsKeys.sources, keys.allResources].map((queryKey) =>
          client.invalidateQueries({ queryKey }),
        ),
      ),
  });
}

export function useApply() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (plan: GitopsPlan) => call("gitops_apply", { plan }),
    onSettled: () =>
      Promise.all(
        [gitopsKeys.all, keys.allResources, keys.outbox, keys.sync, keys.overview].map((queryKey) =>
          client.invalidateQueries({ queryKey }),
        ),
      ),
  });
}
