// TanStack Query hook for the delivery health dashboard. The key is scoped by the profile (see
// queries.ts) and carries the window and grouping: one control plane's figures are never shown
// under another's name, nor one window's under another's.
import { useQuery } from "@tanstack/react-query";
import type { MetricsGroupBy, MetricsWindow } from "./bindings";
import { call } from "./client";
import { healthKeys } from "./keys";
import { scoped, useActiveProfile } from "./queries";

/** How often the dashboard asks the control plane again. */
export const HEALTH_REFRESH_MS = 15_000;

/**
 * Delivery health of the active profile over `window`, refreshed every 15 s. When a refresh
 * fails, TanStack keeps the last answer (`data`, with its `dataUpdatedAt`) beside the error:
 * the dashboard shows it marked stale (`freshness()` in lib/health.ts).
 */
export function useDeliveryMetrics(window: MetricsWindow, groupBy: MetricsGroupBy = "target") {
  const profile = useActiveProfile();
  return useQuery({
    ...scoped(
      profile,
      (_s, p) => healthKeys(p).deliveries(window, groupBy),
      (p) => call("delivery_metrics", { profile: p, window, groupBy }),
    ),
    refetchInterval: HEALTH_REFRESH_MS,
  });
}
