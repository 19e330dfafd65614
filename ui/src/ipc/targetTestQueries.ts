// TanStack Query hooks for a target's test webhooks. Keyed by profile and target (never
// another control plane's tests); the list is polled quickly only while the newest test is
// still on its way, so a settled drawer asks nothing.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { TargetTestView } from "./bindings";
import { call } from "./client";
import { commandInvalidates, invalidate } from "./invalidation";
import { targetTestKeys } from "./keys";
import { scoped, useActiveProfile } from "./queries";

/** How often an unsettled test is looked at again. */
export const TEST_POLL_MS = 700;

/** Saved locally or sent: the receiver's answer is not known yet. */
export function unsettled(test: TargetTestView | undefined): boolean {
  return test?.state === "saved_locally" || test?.state === "sent";
}

export function useTargetTests(target: string) {
  const profile = useActiveProfile();
  return useQuery({
    ...scoped(
      profile,
      (_s, p) => targetTestKeys(p, target),
      (p) => call("list_target_tests", { profile: p, target }),
    ),
    refetchInterval: (query) => (unsettled(query.state.data?.[0]) ? TEST_POLL_MS : false),
  });
}

/** Queues one test webhook; each call mints its own key (one click, one webhook). */
export function useSendTestWebhook(target: string) {
  const client = useQueryClient();
  const profile = useActiveProfile();
  return useMutation({
    mutationFn: () => {
      if (profile === undefined) throw new Error("no control plane is selected");
      return call("test_target", {
        profile,
        input: { target, key: crypto.randomUUID() },
      });
    },
    onSuccess: (test) => {
      if (profile === undefined) return;
      client.setQueryData<TargetTestView[]>(targetTestKeys(profile, target), (old) => [
        test,
        ...(old ?? []).filter((t) => t.id !== test.id),
      ]);
    },
    onSettled: () => {
      if (profile !== undefined)
        invalidate(client, commandInvalidates.test_target(profile, target));
    },
  });
}
