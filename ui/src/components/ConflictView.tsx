import { Alert, Button, Grid, Group, Stack, Text, Title } from "@mantine/core";
import type { ConflictView as Conflict } from "../ipc/bindings";
import { useConflict, useResolve } from "../ipc/queries";
import { JsonBlock, JsonDiff } from "./JsonDiff";

/**
 * The three sides of a version conflict: what the edit started from (base), what the operator
 * wants (mine) and what the control plane has now (theirs), each diffed against the base.
 */
export function ConflictPanel({ id, onDone }: { id: number; onDone: () => void }) {
  const conflict = useConflict(id);
  if (conflict.isLoading) return <Text>Loading the conflict…</Text>;
  if (conflict.isError || !conflict.data)
    return <Alert color="red">{conflict.error?.message ?? "No conflict data"}</Alert>;
  return <ThreeWay conflict={conflict.data} onDone={onDone} />;
}

export function ThreeWay({ conflict, onDone }: { conflict: Conflict; onDone: () => void }) {
  const resolve = useResolve();
  const settle = (resolution: "retry_as_new" | "discard") => async () => {
    await resolve.mutateAsync({ id: conflict.op_id, resolution });
    onDone();
  };
  return (
    <Stack gap="sm" data-testid="three-way">
      <Text size="sm">
        Someone else changed <b>{conflict.name}</b> after you started editing (your edit was based
        on version {conflict.base_version ?? "?"}; the control plane now has version{" "}
        {conflict.theirs_version ?? "?"}). Nothing was overwritten. Choose what should win.
      </Text>
      {conflict.theirs_from_cache && (
        <Alert color="yellow">
          The control plane cannot be reached: “theirs” is the cached copy.
        </Alert>
      )}
      {conflict.conflicting_fields.length > 0 && (
        <Text size="sm">
          Both sides changed: <b>{conflict.conflicting_fields.join(", ")}</b>. Keeping mine re-sends
          your change with a new idempotency key on top of their version.
        </Text>
      )}
      <Grid>
        <Grid.Col span={4} data-testid="side-base">
          <Title order={6}>Base (v{conflict.base_version ?? "?"})</Title>
          <JsonBlock value={conflict.base} height={300} />
        </Grid.Col>
        <Grid.Col span={4} data-testid="side-mine">
          <Title order={6}>Mine (base → mine)</Title>
          <JsonDiff before={conflict.base} after={conflict.mine} height={300} />
        </Grid.Col>
        <Grid.Col span={4} data-testid="side-theirs">
          <Title order={6}>Theirs (base → v{conflict.theirs_version ?? "?"})</Title>
          <JsonDiff before={conflict.base} after={conflict.theirs} height={300} />
        </Grid.Col>
      </Grid>
      <Group justify="flex-end">
        <Button
          variant="default"
          onClick={settle("discard")}
          loading={resolve.isPending}
          data-testid="take-theirs"
        >
          Keep theirs (discard mine)
        </Button>
        <Button
          onClick={settle("retry_as_new")}
          loading={resolve.isPending}
          data-testid="keep-mine"
        >
          Keep mine (re-send on top of v{conflict.theirs_version ?? "?"})
        </Button>
      </Group>
    </Stack>
  );
}
