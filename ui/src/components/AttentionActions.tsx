import { Button, Group, Modal, Text } from "@mantine/core";
import { useState } from "react";
import type { OpState, ResourceKind, WriteError } from "../ipc/bindings";
import { useActiveProfile, useDependants, useResolve, useRetryNow } from "../ipc/queries";
import { useSendNotice } from "../lib/sendNotice";
import { ConflictPanel } from "./ConflictView";

/**
 * Why sending the same change again (as a new operation) would be refused again, or `null`
 * when a retry can succeed. `stillUsedBy`: what the local copy says still references the
 * resource (for an `in_use` refusal).
 */
export function retryWouldRepeat(error: WriteError | null, stillUsedBy: string[]): string | null {
  if (!error) return null;
  if (error.code === "in_use")
    return stillUsedBy.length
      ? `Still used by ${stillUsedBy.join(", ")}: remove ${stillUsedBy.length === 1 ? "it" : "them"} first.`
      : null;
  if (error.code === "name_taken")
    return "The name is taken: discard this, or delete the other first.";
  // A validation refusal names the body as wrong; the same body is refused again.
  if (error.field || error.status === 400 || error.status === 422)
    return "The same change would be refused again: fix it (Edit), or discard it.";
  return null;
}

/** The ways out of a write's current state: retry now, retry as new, discard, resolve a conflict. */
export function AttentionActions({
  id,
  state,
  error,
  profile,
  kind,
  name,
}: {
  id: number;
  state: OpState;
  error: WriteError | null;
  /** The write's control plane (the outbox lists every one); the active one when absent. */
  profile?: string;
  kind?: ResourceKind;
  name?: string;
}) {
  const [conflictOpen, setConflictOpen] = useState(false);
  const resolve = useResolve();
  const retryNow = useRetryNow();
  const notice = useSendNotice();
  const active = useActiveProfile();
  const mine = (profile ?? active) === active;
  const inUse = state === "needs_attention" && error?.code === "in_use" && mine && !!kind && !!name;
  // What the local copy says uses the resource now (the refusal's list may be out of date).
  const users = useDependants(kind ?? null, name ?? null, inUse);
  if (state === "done" || state === "discarded" || state === "superseded") return null;
  const conflict = error?.code === "version_mismatch";
  const repeat =
    state === "needs_attention" && !conflict
      ? retryWouldRepeat(
          error,
          inUse ? (users.data ?? error?.used_by ?? []) : (error?.used_by ?? []),
        )
      : null;
  return (
    <Group gap="xs" wrap="nowrap">
      {state === "pending" && (
        <Button
          size="compact-xs"
          variant="light"
          onClick={() => {
            retryNow.mutate(id);
            notice(profile);
          }}
          data-testid="retry-now"
        >
          Retry now
        </Button>
      )}
      {state === "needs_attention" && conflict && (
        <Button
          size="compact-xs"
          color="orange"
          onClick={() => setConflictOpen(true)}
          data-testid="open-conflict"
        >
          Resolve conflict
        </Button>
      )}
      {state === "needs_attention" && !conflict && !repeat && (
        <Button
          size="compact-xs"
          variant="light"
          onClick={() => resolve.mutate({ id, resolution: "retry_as_new", profile })}
          data-testid="retry-as-new"
        >
          Retry as new
        </Button>
      )}
      {repeat && (
        <Text size="xs" c="dimmed" data-testid="retry-would-repeat">
          {repeat}
        </Text>
      )}
      {state !== "sending" && (
        <Button
          size="compact-xs"
          variant="subtle"
          color="red"
          onClick={() => resolve.mutate({ id, resolution: "discard", profile })}
          data-testid="discard"
        >
          Discard
        </Button>
      )}
      <Modal
        opened={conflictOpen}
        onClose={() => setConflictOpen(false)}
        title="Version conflict"
        size="90%"
      >
        {conflictOpen && <ConflictPanel id={id} onDone={() => setConflictOpen(false)} />}
      </Modal>
    </Group>
  );
}
