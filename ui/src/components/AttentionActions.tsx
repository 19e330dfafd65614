import { Button, Group, Modal } from "@mantine/core";
import { useState } from "react";
import type { OpState, WriteError } from "../ipc/bindings";
import { useResolve, useRetryNow } from "../ipc/queries";
import { ConflictPanel } from "./ConflictView";

/** The ways out of a write's current state: retry now, retry as new, discard, resolve a conflict. */
export function AttentionActions({
  id,
  state,
  error,
}: {
  id: number;
  state: OpState;
  error: WriteError | null;
}) {
  const [conflictOpen, setConflictOpen] = useState(false);
  const resolve = useResolve();
  const retryNow = useRetryNow();
  if (state === "done" || state === "discarded" || state === "superseded") return null;
  const conflict = error?.code === "version_mismatch";
  return (
    <Group gap="xs" wrap="nowrap">
      {state === "pending" && (
        <Button
          size="compact-xs"
          variant="light"
          onClick={() => retryNow.mutate(id)}
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
      {state === "needs_attention" && !conflict && (
        <Button
          size="compact-xs"
          variant="light"
          onClick={() => resolve.mutate({ id, resolution: "retry_as_new" })}
          data-testid="retry-as-new"
        >
          Retry as new
        </Button>
      )}
      {state !== "sending" && (
        <Button
          size="compact-xs"
          variant="subtle"
          color="red"
          onClick={() => resolve.mutate({ id, resolution: "discard" })}
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
