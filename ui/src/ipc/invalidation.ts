// What each command and each core event makes stale, declared once. The mutations
// (ipc/*Queries.ts, components/rotation/RotationWizard.tsx, components/about/queries.ts) and
// the core events (lib/events.ts) invalidate the set listed here for them, and list none of
// their own. A profile's sets name that profile's keys only (./keys.ts): a write on one control
// plane never refetches another's data. The outbox, sync status, audit log and profile list
// span every profile and are refreshed whichever profile a write was for.
import type { QueryClient } from "@tanstack/react-query";
import type { CoreEvent } from "./bindings";
import {
  aboutKeys,
  dlqKeys,
  gitopsKeys,
  healthKeys,
  keys,
  recoveryKeys,
  rotationKeys,
  scope,
  targetTestKeys,
} from "./keys";

/** Query keys to invalidate (each a prefix: every query under it goes stale). */
export type KeySet = readonly (readonly unknown[])[];

const everyProfile = [keys.outbox, keys.sync, keys.audit, keys.profiles] as const;

/**
 * The cached and queued state of `profile`: its resources, their histories and its overview,
 * with the views across profiles. Unknown profile (a row of any profile): every profile's.
 */
const localState = (profile: string | undefined): KeySet => {
  const s = profile === undefined ? null : scope(profile);
  return [
    ...(s ? [s.allResources, s.allResource, s.allHistory, s.overview] : [["p"]]),
    ...everyProfile,
  ];
};

/** What a command that ran for `profile` makes stale, by command. */
export const commandInvalidates = {
  /** A create, update, delete or toggle queued to the outbox. */
  queue_write: localState,
  retry_now: localState,
  /** Resolving a conflict or discarding a write (of any profile: the row's). */
  resolve: localState,
  sync_now: localState,
  /** An edited URL or token may answer differently: drop what was fetched with the old one. */
  save_profile: (saved: string, edited: boolean): KeySet => [
    ...(edited ? [scope(saved).all] : []),
    ...everyProfile,
  ],
  /** (Its own cache is removed, not refreshed.) */
  remove_profile: (): KeySet => everyProfile,
  activate_profile: (): KeySet => everyProfile,
  gitops_add_source: (profile: string): KeySet => [gitopsKeys(profile).sources],
  gitops_remove_source: (profile: string): KeySet => [gitopsKeys(profile).all],
  /** A plan refreshes the cache from its listing and records the source; it read the ref's
   * head, so the source's status (the head it shows, behind or not) is asked again: otherwise
   * the header kept the old commit beside a plan of the new one. */
  gitops_plan: (profile: string): KeySet => [
    gitopsKeys(profile).sources,
    gitopsKeys(profile).statuses,
    scope(profile).allResources,
  ],
  gitops_apply: (profile: string): KeySet => [
    gitopsKeys(profile).all,
    scope(profile).allResources,
    scope(profile).overview,
    keys.outbox,
    keys.sync,
  ],
  run_fix: (profile: string): KeySet => [
    recoveryKeys(profile).writes,
    recoveryKeys(profile).findings,
  ],
  start_retirement: (profile: string): KeySet => [recoveryKeys(profile).all],
  cancel_retirement: (profile: string): KeySet => [recoveryKeys(profile).all],
  test_target: (profile: string, target: string): KeySet => [targetTestKeys(profile, target)],
  // A replay takes deliveries out of the DLQ (or gives them back): the findings say so.
  start_replay: (profile: string): KeySet => [
    dlqKeys(profile).writes,
    dlqKeys(profile).replays,
    recoveryKeys(profile).findings,
  ],
  cancel_replay: (profile: string): KeySet => [
    dlqKeys(profile).writes,
    recoveryKeys(profile).findings,
  ],
  /**
   * Any step of the rotation wizard (start_rotation, start_certificate_rotation,
   * verify_rotation, promote_rotation, rollback_rotation, resume_rotation, acknowledge_secret,
   * and reading it again): the target's status (signing secrets, the open overlap) changed.
   */
  rotation_step: (profile: string): KeySet => [
    rotationKeys(profile).all,
    scope(profile).allResources,
    scope(profile).allResource,
  ],
  install_update: (): KeySet => [aboutKeys.status],
};

type Event<T extends CoreEvent["type"]> = Extract<CoreEvent, { type: T }>;

/** What a core event makes stale (the event names its profile), by event type. */
export const eventInvalidates = {
  /**
   * The listener is attached: whatever the core announced before it existed (the first sync
   * runs while the first screen loads) was missed, so the status is read again.
   */
  listening: (): KeySet => [keys.sync],
  /** The sync status of `profile`; its health figures too when it went on- or offline. */
  sync: (profile: string, onlineChanged: boolean): KeySet => [
    // Back online: the dashboard's stale figures refresh now, not at the next 15 s tick.
    ...(onlineChanged ? [scope(profile).health, healthKeys(profile).all] : []),
    scope(profile).overview,
    keys.profiles,
  ],
  /** An outbox write moved: its resource, the lists and the outbox views. */
  operation: (e: Pick<Event<"operation">, "profile" | "kind" | "name">): KeySet => {
    const s = scope(e.profile);
    return [
      keys.outbox,
      s.resources(e.kind),
      s.resource(e.kind, e.name),
      s.history(e.kind, e.name),
      s.overview,
      keys.audit,
      keys.profiles,
      keys.allConflicts,
    ];
  },
  /**
   * The local copy was filled again from the control plane: the counts beside it (the DLQ's,
   * delivery health) are asked again too, so the overview never shows a fresh resource count
   * beside a DLQ count from before (a sandbox answers while it seeds its demo data). The DLQ's
   * rows stay as they are: that list is a snapshot the person reloads.
   */
  resources_changed: (e: Pick<Event<"resources_changed">, "profile">): KeySet => {
    const s = scope(e.profile);
    return [
      s.allResources,
      s.allResource,
      s.overview,
      dlqKeys(e.profile).allStats,
      healthKeys(e.profile).all,
    ];
  },
  /** A replay outbox row moved: the write badges and the sessions are stale. */
  replay_write: (e: Pick<Event<"replay_write">, "profile" | "session_id">): KeySet => {
    const k = dlqKeys(e.profile);
    return [k.writes, k.replays, k.replay(e.session_id)];
  },
};

/** Marks every query under the set's keys stale (active ones refetch). */
export function invalidate(client: QueryClient, set: KeySet) {
  return Promise.all(set.map((queryKey) => client.invalidateQueries({ queryKey })));
}
