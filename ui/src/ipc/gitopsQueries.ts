// TanStack Query hooks for GitOps: sources, plans, apply progress, drift. Like every query
// that reads a control plane or its cache, they are keyed by the profile they ask for (see
// `scope` in ./queries) and wait while no profile is known.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { GitopsPlan, Kind, ManagedResource, PlanOptions, SourceSpec } from "./bindings";
import { call } from "./client";
import { keys, scope, scoped, useActiveProfile } from "./queries";

/** The GitOps keys of one profile. */
export const gitopsKeys = (profile: string | null) => {
  const base = [...scope(profile).all, "gitops"] as const;
  return {
    all: base,
    sources: [...base, "sources"] as const,
    status: (source: string | null) => [...base, "status", source] as const,
    progress: (source: string | null, commit: string | null) =>
      [...base, "progress", source, commit] as const,
    // Under the profile's "resources" too, so a cache change refreshes the badges.
    managed: [...scope(profile).allResources, "gitops-managed"] as const,
  };
};

export function useGitopsSources() {
  const profile = useActiveProfile();
  return useQuery(
    scoped(
      profile,
      (_, p) => gitopsKeys(p).sources,
      (p) => call("gitops_sources", { profile: p }),
    ),
  );
}

/** A source's status against live state (lists the control plane: refreshed on demand). */
export function useGitopsStatus(source: string | null) {
  const profile = useActiveProfile();
  return useQuery({
    ...scoped(
      profile,
      (_, p) => gitopsKeys(p).status(source),
      source ? (p) => call("gitops_status", { profile: p, source }) : null,
    ),
    retry: false,
  });
}

/** Per-wave progress of an apply; polls while writes are on their way. */
export function useGitopsProgress(source: string | null, commit: string | null) {
  const profile = useActiveProfile();
  return useQuery({
    ...scoped(
      profile,
      (_, p) => gitopsKeys(p).progress(source, commit),
      source && commit ? (p) => call("gitops_progress", { profile: p, source, commit }) : null,
    ),
    refetchInterval: (query) => (query.state.data?.complete ? false : 1000),
  });
}

/** Resources managed by Git, by kind and name, for badges (drift against the cache). */
export function useGitopsManaged(kind?: Kind, enabled = true) {
  const profile = useActiveProfile();
  const query = useQuery({
    ...scoped(
      profile,
      (_, p) => gitopsKeys(p).managed,
      enabled ? (p) => call("gitops_managed", { profile: p }) : null,
    ),
    retry: false,
  });
  const byName: Record<string, ManagedResource> = {};
  for (const m of query.data ?? []) {
    if (!kind || m.kind === kind) byName[`${m.kind}/${m.name}`] = m;
  }
  return byName;
}

/** A mutation on the active profile's GitOps state; refuses while no profile is known. */
function useProfileMutation<A, R>(
  run: (profile: string, args: A) => Promise<R>,
  invalidate: (profile: string) => readonly (readonly unknown[])[],
) {
  const client = useQueryClient();
  const profile = useActiveProfile();
  return useMutation({
    mutationFn: (args: A) => {
      if (profile === undefined) return Promise.reject(new Error("no control plane is active"));
      return run(profile, args);
    },
    onSettled: () =>
      profile === undefined
        ? undefined
        : Promise.all(
            invalidate(profile).map((queryKey) => client.invalidateQueries({ queryKey })),
          ),
  });
}

export const useAddSource = () =>
  useProfileMutation(
    (profile, spec: SourceSpec) => call("gitops_add_source", { profile, spec }),
    (p) => [gitopsKeys(p).sources],
  );

export const useRemoveSource = () =>
  useProfileMutation(
    (profile, source: string) => call("gitops_remove_source", { profile, source }),
    (p) => [gitopsKeys(p).all],
  );

/** A plan refreshes the cache from its listing and records the source. */
export const usePlan = () =>
  useProfileMutation(
    (profile, { spec, options }: { spec: SourceSpec; options: PlanOptions }) =>
      call("gitops_plan", { profile, spec, options }),
    (p) => [gitopsKeys(p).sources, scope(p).allResources],
  );

export const useApply = () =>
  useProfileMutation(
    (_profile, plan: GitopsPlan) => call("gitops_apply", { plan }),
    (p) => [gitopsKeys(p).all, scope(p).allResources, scope(p).overview, keys.outbox, keys.sync],
  );
