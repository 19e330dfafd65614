// TanStack Query hooks of the rotation wizard. A rotation is stored in console.db and read by
// id; the profile scopes the list, so one control plane's rotations never show under another's
// name. The new secret's value never enters the query cache: the wizard keeps it in component
// state only, for the one time it is shown.
import { useQuery } from "@tanstack/react-query";
import { isFinished } from "../lib/rotation";
import { call } from "./client";
import { rotationKeys } from "./keys";
import { scoped, useActiveProfile } from "./queries";

/** The profile's rotations, newest first; polled while one is unfinished. `enabled: false`
 * (a drawer of something that is not a target) asks nothing. */
export function useRotations(enabled = true) {
  const profile = useActiveProfile();
  return useQuery({
    ...scoped(
      profile,
      (_s, p) => rotationKeys(p).all,
      (p) => call("list_rotations", { profile: p }),
    ),
    enabled,
    refetchInterval: (q) => ((q.state.data ?? []).some((r) => !isFinished(r.step)) ? 5_000 : false),
  });
}
