// Every query key of the UI, by what it caches. One profile's keys all sit under
// `["p", profile]` (see `scoped` in ./queries.ts), so a profile's data is never shown under
// another's name; what each command or core event makes stale is declared in ./invalidation.ts.
import type {
  DlqFilterInput,
  DlqGroupBy,
  MetricsGroupBy,
  MetricsWindow,
  ResourceKind,
} from "./bindings";

/**
 * The keys of one profile's server-backed and cached data, all under `["p", profile]`
 * (`null`: no profile known yet, a query that waits).
 */
export const scope = (profile: string | null) => {
  const base = ["p", profile] as const;
  return {
    all: base,
    health: [...base, "health"] as const,
    overview: [...base, "overview"] as const,
    allResources: [...base, "resources"] as const,
    resources: (kind: ResourceKind) => [...base, "resources", kind] as const,
    // Under "resources" so a cache change refreshes open searches too.
    resourceSearch: (query: string) => [...base, "resources", "search", query] as const,
    allResource: [...base, "resource"] as const,
    resource: (kind: ResourceKind, name: string | null) =>
      [...base, "resource", kind, name] as const,
    live: (kind: ResourceKind, name: string) => [...base, "live", kind, name] as const,
    allHistory: [...base, "history"] as const,
    history: (kind: ResourceKind, name: string | null) => [...base, "history", kind, name] as const,
    dependants: (kind: ResourceKind | null, name: string | null) =>
      [...base, "dependants", kind, name] as const,
  };
};

/** Keys that span every profile. */
export const keys = {
  profiles: ["profiles"] as const,
  /**
   * What removing a profile would lose (its queued work of every kind). Under the profile
   * list, so every write, which makes the list stale, makes the count stale too.
   */
  queued: (profile: string) => ["profiles", "queued", profile] as const,
  /** The outbox of every profile (the page shows a Control plane column). */
  outbox: ["outbox"] as const,
  allConflicts: ["conflict"] as const,
  conflict: (id: number | null) => ["conflict", id] as const,
  /** The status bar's sync state; it names its own profile. */
  sync: ["sync"] as const,
  audit: ["audit"] as const,
  opAudit: (id: number) => ["op-audit", id] as const,
};

export const dlqKeys = (profile: string | null) => {
  const base = ["p", profile] as const;
  return {
    all: [...base, "dlq"] as const,
    page: (filter: DlqFilterInput) => [...base, "dlq", "page", filter] as const,
    allStats: [...base, "dlq", "stats"] as const,
    stats: (g: DlqGroupBy, filter: DlqFilterInput | null) =>
      [...base, "dlq", "stats", g, filter] as const,
    causes: (filter: DlqFilterInput) => [...base, "dlq", "causes", filter] as const,
    // Not under "stats": while the list's newest row is unknown this query waits (skipToken),
    // and a waiting observer must never share a key with the badge's live count.
    newer: (filter: DlqFilterInput | null) => [...base, "dlq", "newer", filter] as const,
    /** The newest page of a filter, for a trial batch started outside the DLQ page. */
    sample: (filter: DlqFilterInput) => [...base, "dlq", "sample", filter] as const,
    delivery: (id: string | null) => [...base, "delivery", id] as const,
    event: (id: string | null) => [...base, "event", id] as const,
    eventsByKey: (key: string | null, endpoint: string | null) =>
      [...base, "events", key, endpoint] as const,
    schedule: [...base, "schedule"] as const,
    replays: [...base, "replays"] as const,
    replay: (id: string | null) => [...base, "replays", id] as const,
    writes: [...base, "replay-writes"] as const,
  };
};

/** The GitOps keys of one profile. */
export const gitopsKeys = (profile: string | null) => {
  const base = [...scope(profile).all, "gitops"] as const;
  return {
    all: base,
    sources: [...base, "sources"] as const,
    /** Every source's status (the prefix of `status`). */
    statuses: [...base, "status"] as const,
    status: (source: string | null) => [...base, "status", source] as const,
    progress: (source: string | null, commit: string | null) =>
      [...base, "progress", source, commit] as const,
    // Under the profile's "resources" too, so a cache change refreshes the badges.
    managed: [...scope(profile).allResources, "gitops-managed"] as const,
  };
};

export const healthKeys = (profile: string | null) => {
  const base = ["p", profile, "metrics"] as const;
  return {
    all: base,
    deliveries: (window: MetricsWindow, groupBy: MetricsGroupBy) =>
      [...base, "deliveries", window, groupBy] as const,
  };
};

export const recoveryKeys = (profile: string | null) => {
  const base = ["p", profile, "recovery"] as const;
  return {
    all: base,
    findings: [...base, "findings"] as const,
    writes: [...base, "writes"] as const,
    retirements: [...base, "retirements"] as const,
    retirement: (id: string | null) => [...base, "retirements", id] as const,
    preview: (kind: ResourceKind, name: string, cascade: boolean) =>
      [...base, "preview", kind, name, cascade] as const,
  };
};

export const rotationKeys = (profile: string | null) => ({
  all: ["p", profile, "rotations"] as const,
});

export const targetTestKeys = (profile: string | null, target: string) =>
  ["p", profile, "target-tests", target] as const;

/** The app's own state (about, updates): not any profile's. */
export const aboutKeys = {
  info: ["app_info"] as const,
  settings: ["update_settings"] as const,
  status: ["update_status"] as const,
};
