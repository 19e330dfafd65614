// In a target's drawer: the rotation of its credentials that is still open (staged, verified,
// stopped…), read from console.db's rotations, with the way back into it. Without it the
// drawer showed only "Rotate credentials…", and a person who closed the wizard mid-procedure
// could not tell a rotation was waiting for them.
import { Alert, Button, Code, Group, Text } from "@mantine/core";
import type { RotationView } from "../../ipc/bindings";
import { useRotations } from "../../ipc/rotationQueries";
import { isFinished, stepWords } from "../../lib/rotation";

/** The target's unfinished rotation, once the list has answered. */
export function useOpenRotation(target: string, isTarget = true): RotationView | undefined {
  const rotations = useRotations(isTarget);
  return rotations.data?.find((r) => r.target === target && !isFinished(r.step));
}

/** What the open rotation is waiting for, in a sentence. */
function waitingFor(r: RotationView): string {
  const thing = r.credential === "certificate" ? "certificate" : "secret";
  switch (r.step) {
    case "staging":
      return `the new ${thing} is being sent to the control plane.`;
    case "staged":
      return r.credential === "certificate" || r.acknowledged
        ? `the new ${thing} is ${r.credential === "certificate" ? "uploaded" : "staged"}; test it next.`
        : "the new secret is staged; confirm it is stored on the receiver.";
    case "verifying":
      return "the test is waiting for the receiver's answer.";
    case "verified":
      return r.credential === "certificate"
        ? "tested; activate it next."
        : "verified; promote it next.";
    case "promoting":
    case "rolling_back":
      return "the step is being sent to the control plane.";
    default:
      return "";
  }
}

export function OpenRotationNotice({ target, onResume }: { target: string; onResume: () => void }) {
  const open = useOpenRotation(target);
  if (!open) return null;
  const what = open.credential === "certificate" ? "client certificate" : "signing secret";
  return (
    <Alert
      // Yellow's title is hard to read on its light background: an open overlap is orange here.
      color={stepWords[open.step].color === "yellow" ? "orange" : stepWords[open.step].color}
      title={`Rotation of the ${what} open: ${stepWords[open.step].label}`}
      data-testid="drawer-rotation"
    >
      <Group justify="space-between" gap="xs">
        <Text size="sm" style={{ flex: 1, minWidth: 200 }}>
          <Code>{open.id}</Code>: {waitingFor(open)}
        </Text>
        <Button size="xs" variant="light" onClick={onResume} data-testid="drawer-rotation-resume">
          Resume rotation…
        </Button>
      </Group>
    </Alert>
  );
}
