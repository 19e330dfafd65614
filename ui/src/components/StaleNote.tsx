// What the person sees when a control plane's data could not be refreshed: the data shown is
// the same profile's last answer, said so with its age, never another profile's.
import { Alert, Text } from "@mantine/core";
import { IconClockExclamation } from "@tabler/icons-react";
import { relativeTime } from "../lib/format";
import { useNow } from "../lib/useNow";

/** The fields of a TanStack query result this reads (plain and infinite queries have them). */
export type Freshness = {
  isError: boolean;
  data: unknown;
  dataUpdatedAt: number;
  error: { message: string } | null;
};

/** "Last fetched 3 min ago from sandbox", when the latest refresh failed but data is shown. */
export function StaleNote({ query, profile }: { query: Freshness; profile: string | undefined }) {
  const now = useNow(5000);
  if (!query.isError || query.data === undefined) return null;
  return (
    <Alert
      color="yellow"
      variant="light"
      icon={<IconClockExclamation size={18} />}
      data-testid="stale-note"
      p="xs"
    >
      <Text size="sm">
        Last fetched {relativeTime(query.dataUpdatedAt, now)} from {profile ?? "this control plane"}
        ; refreshing failed: {query.error?.message ?? "no answer"}
      </Text>
    </Alert>
  );
}

/**
 * Why an action that needs the control plane waits, or `null` when it can go ahead: the
 * first of `queries` that failed (the control plane did not answer them).
 */
export function serverWait(profile: string | undefined, ...queries: Freshness[]): string | null {
  const failed = queries.find((q) => q.isError);
  if (!failed) return null;
  return `Waits for ${profile ?? "the control plane"} to answer (${failed.error?.message ?? "no answer"})`;
}
