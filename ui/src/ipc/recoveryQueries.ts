// TanStack Query hooks for the Recovery page: findings (the control plane's and this
// console's), the fixes queued through the outbox, and retirements. Every key is scoped by the
// profile: one control plane's findings are never shown under another's name.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { isFinal } from "../lib/recovery";
import type { ResourceKind, RetireInput } from "./bindings";
import { call } from "./client";
import { commandInvalidates, invalidate } from "./invalidation";
import { recoveryKeys } from "./keys";
import { scoped, useActiveProfile } from "./queries";

/** Findings are checked again this often while the page (or the nav badge) is shown. */
export const FINDINGS_POLL_MS = 15_000;
/** A fix or retirement on its way is looked at this often until it settles. */
export const WRITE_POLL_MS = 1_000;

const unsettled = (state: string) => state === "saved_locally" || state === "sent";

export function useFindings() {
  const profile = useActiveProfile();
  return useQuery({
    ...scoped(
      profile,
      (_s, p) => recoveryKeys(p).findings,
      (p) => call("recovery_findings", { profile: p }),
    ),
    refetchInterval: FINDINGS_POLL_MS,
  });
}

/** Every fix and retirement write this console queued for the profile, newest first. */
export function useRecoveryWrites() {
  const profile = useActiveProfile();
  return useQuery({
    ...scoped(
      profile,
      (_s, p) => recoveryKeys(p).writes,
      (p) => call("list_recovery_writes", { profile: p }),
    ),
    refetchInterval: (q) =>
      (q.state.data ?? []).some((w) => unsettled(w.state)) ? WRITE_POLL_MS : false,
  });
}

/** Queues one fix: the key is minted per click (a double click queues nothing twice). */
export function useRunFix() {
  const client = useQueryClient();
  const profile = useActiveProfile();
  return useMutation({
    mutationFn: ({ findingId, action }: { findingId: string; action: number }) => {
      if (profile === undefined) throw new Error("no control plane is selected");
      return call("run_fix", {
        profile,
        findingId,
        action,
        key: crypto.randomUUID(),
      });
    },
    onSettled: () => {
      if (profile !== undefined) invalidate(client, commandInvalidates.run_fix(profile));
    },
  });
}

export function useRetirements() {
  const profile = useActiveProfile();
  return useQuery({
    ...scoped(
      profile,
      (_s, p) => recoveryKeys(p).retirements,
      (p) => call("list_retirements", { profile: p }),
    ),
    refetchInterval: (q) =>
      (q.state.data ?? []).some((r) => !r.server || !isFinal(r.server.state))
        ? WRITE_POLL_MS * 2
        : FINDINGS_POLL_MS,
  });
}

/** One retirement, followed closely until it is deleted or cancelled. */
export function useRetirement(id: string | null) {
  const profile = useActiveProfile();
  return useQuery({
    ...scoped(
      profile,
      (_s, p) => recoveryKeys(p).retirement(id),
      id ? (p) => call("get_retirement", { profile: p, id }) : null,
    ),
    refetchInterval: (q) =>
      q.state.data?.server && isFinal(q.state.data.server.state) ? false : WRITE_POLL_MS,
  });
}

/** The server's dry run: what retiring `name` touches and whether it would start blocked. */
export function useRetirementPreview(
  kind: ResourceKind,
  name: string,
  cascade: boolean,
  enabled: boolean,
) {
  const profile = useActiveProfile();
  return useQuery({
    ...scoped(
      profile,
      (_s, p) => recoveryKeys(p).preview(kind, name, cascade),
      enabled
        ? (p) => call("preview_retirement", { profile: p, kind, name, cascadeFlows: cascade })
        : null,
    ),
    staleTime: 0,
  });
}

export function useStartRetirement() {
  const client = useQueryClient();
  const profile = useActiveProfile();
  return useMutation({
    mutationFn: (input: RetireInput) => {
      if (profile === undefined) throw new Error("no control plane is selected");
      return call("start_retirement", { profile, input });
    },
    onSettled: () => {
      if (profile !== undefined) invalidate(client, commandInvalidates.start_retirement(profile));
    },
  });
}

export function useCancelRetirement() {
  const client = useQueryClient();
  const profile = useActiveProfile();
  return useMutation({
    mutationFn: (id: string) => {
      if (profile === undefined) throw new Error("no control plane is selected");
      return call("cancel_retirement", { profile, id });
    },
    onSettled: () => {
      if (profile !== undefined) invalidate(client, commandInvalidates.cancel_retirement(profile));
    },
  });
}
