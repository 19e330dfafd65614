// Where a retirement stands: the states it walks (draining → disabled → scheduled → deleted),
// what happens next and when, and Cancel while it is still cancellable.
import { Badge, Button, Group, Stack, Stepper, Text } from "@mantine/core";
import type { IpcError, Retirement } from "../../ipc/bindings";
import { useCancelRetirement } from "../../ipc/recoveryQueries";
import {
  isFinal,
  retirementNext,
  retirementPath,
  retirementStep,
  retirementWords,
} from "../../lib/recovery";
import { ErrorAlert } from "../ErrorAlert";

export function RetirementProgress({ r, now }: { r: Retirement; now: number }) {
  const cancel = useCancelRetirement();
  const w = retirementWords[r.state];
  const entered = (state: string) => r.history.find((h) => h.state === state)?.at;
  return (
    <Stack gap="xs" data-testid={`retirement-${r.id}`}>
      <Group justify="space-between" wrap="nowrap">
        <Group gap="xs">
          <Text fw={600}>
            {r.kind} {r.name}
          </Text>
          <Badge color={w.color} data-testid={`retirement-state-${r.id}`}>
            {w.label}
          </Badge>
          {r.cascaded_flows.length > 0 && (
            <Text size="xs" c="dimmed">
              flows retired first: {r.cascaded_flows.join(", ")}
            </Text>
          )}
        </Group>
        {!isFinal(r.state) && (
          <Button
            size="xs"
            variant="default"
            loading={cancel.isPending}
            onClick={() => cancel.mutate(r.id)}
            data-testid={`retirement-cancel-${r.id}`}
          >
            Cancel retirement
          </Button>
        )}
      </Group>
      {r.state !== "cancelled" && (
        <Stepper
          active={retirementStep(r.state)}
          size="xs"
          color={r.state === "blocked" ? "red" : undefined}
        >
          {retirementPath.map((state) => {
            const at = entered(state);
            return (
              <Stepper.Step
                key={state}
                label={retirementWords[state].label}
                description={at ? new Date(at).toLocaleTimeString() : undefined}
              />
            );
          })}
        </Stepper>
      )}
      <Text size="sm" data-testid={`retirement-next-${r.id}`}>
        {retirementNext(r, now)}
      </Text>
      {cancel.error && (
        <ErrorAlert error={cancel.error as unknown as IpcError} title="Not cancelled" />
      )}
    </Stack>
  );
}
