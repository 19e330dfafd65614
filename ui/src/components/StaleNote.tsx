// What the person sees while a control plane's answer is missing: not asked yet or waiting
// ("sandbox has not answered for 12 s"), failed, or answered earlier and not refreshable (the
// same profile's last answer, said so with its age, never another profile's). A view says
// "empty", "0" or "nothing" only once its query has answered (`answered`).
import { Alert, Group, Loader, Text } from "@mantine/core";
import { IconClockExclamation } from "@tabler/icons-react";
import { useEffect, useState } from "react";
import { relativeTime } from "../lib/format";
import { useNow } from "../lib/useNow";

/** The fields of a TanStack query result this reads (plain and infinite queries have them). */
export type Freshness = {
  isError: boolean;
  data: unknown;
  dataUpdatedAt: number;
  error: { message: string } | null;
};

/** After this long without an answer a waiting view says how long it has waited. */
export const SILENT_AFTER_MS = 5_000;

/** Whether the control plane answered `query` (now, or before a refresh that failed). */
export const answered = (query: Pick<Freshness, "data">): boolean => query.data !== undefined;

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
 * When the wait for `key` (a profile, a filter: whatever names what is asked) began, while
 * `waiting`; `null` when not waiting. A new key is a new question: its wait starts again.
 */
export function useWaitingSince(waiting: boolean, key: string): number | null {
  const [since, setSince] = useState<{ key: string; at: number } | null>(null);
  useEffect(() => {
    if (!waiting) setSince(null);
    else setSince((s) => (s && s.key === key ? s : { key, at: Date.now() }));
  }, [waiting, key]);
  if (!waiting) return null;
  return since && since.key === key ? since.at : Date.now();
}

/** "Asking sandbox…", then after `SILENT_AFTER_MS` "sandbox has not answered for 12 s". */
export function waitingWords(profile: string | undefined, since: number, now: number): string {
  const who = profile ?? "the control plane";
  const waited = Math.max(0, now - since);
  if (waited < SILENT_AFTER_MS) return `Asking ${who}…`;
  return `${who} has not answered for ${Math.round(waited / 1000)} s`;
}

/**
 * Shown in place of a list, a count or a sentence whose query has not answered yet: never
 * "empty". `what` says what is awaited ("the DLQ", "replay sessions").
 */
export function Waiting({
  query,
  profile,
  what,
  testid = "waiting",
}: {
  query: Freshness;
  profile: string | undefined;
  what: string;
  testid?: string;
}) {
  const waiting = !answered(query) && !query.isError;
  const since = useWaitingSince(waiting, profile ?? "");
  const now = useNow(1000);
  if (!waiting || since === null) return null;
  return (
    <Group gap="xs" p="md" data-testid={testid}>
      <Loader size="xs" />
      <Text size="sm" c="dimmed">
        {waitingWords(profile, since, now)}: {what} is not loaded yet.
      </Text>
    </Group>
  );
}

/**
 * Why an action that needs the control plane waits, or `null` when it can go ahead: the
 * first of `queries` that failed, else the first that has not answered yet (an action never
 * acts on a count it has not seen).
 */
export function serverWait(profile: string | undefined, ...queries: Freshness[]): string | null {
  const who = profile ?? "the control plane";
  const failed = queries.find((q) => q.isError);
  if (failed) return `Waits for ${who} to answer (${failed.error?.message ?? "no answer"})`;
  if (queries.some((q) => !answered(q))) return `Waits for ${who} to answer`;
  return null;
}
