// TanStack Query hooks for GitOps: sources, plans, apply progress, drift. Like every query
// that reads a control plane or its cache, they are keyed by the profile they ask for (see
// `scope` in ./queries) and wait while no profile is known.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type {
  GitopsPlan,
  ManagedResource,
  PlanOptions,
  ResourceKind,
  SourceSpec,
} from "./bindings";
import { call } from "./client";
import { commandInvalidates, invalidate, type KeySet } from "./invalidation";
import { gitopsKeys } from "./keys";
import { scoped, useActiveProfile } from "./queries";

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
export function useGitopsManaged(kind?: ResourceKind, enabled = true) {
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
  stale: (profile: string) => KeySet,
) {
  const client = useQueryClient();
  const profile = useActiveProfile();
  return useMutation({
    mutationFn: (args: A) => {
      if (profile === undefined) return Promise.reject(new Error("no control plane is active"));
      return run(profile, args);
    },
    onSettled: () => (profile === undefined ? undefined : invalidate(client, stale(profile))),
  });
}

export const useAddSource = () =>
  useProfileMutation(
    (profile, spec: SourceSpec) => call("gitops_add_source", { profile, spec }),
    commandInvalidates.gitops_add_source,
  );

export const useRemoveSource = () =>
  useProfileMutation(
    (profile, source: string) => call("gitops_remove_source", { profile, source }),
    commandInvalidates.gitops_remove_source,
  );

/** A plan refreshes the cache from its listing and records the source. */
export const usePlan = () =>
  useProfileMutation(
    (profile, { spec, options }: { spec: SourceSpec; options: PlanOptions }) =>
      call("gitops_plan", { profile, spec, options }),
    commandInvalidates.gitops_plan,
  );

export const useApply = () =>
  useProfileMutation(
    (_profile, plan: GitopsPlan) => call("gitops_apply", { plan }),
    commandInvalidates.gitops_apply,
  );
