// A resource a retirement holds: the control plane marks its status with the retirement's id
// (`status.retirement`, crates/control-plane/src/retirement/advance.rs) from the start until it
// is deleted or the retirement is cancelled. The list shows a badge by the name (with the state
// when the retirements list has it); the drawer shows where the retirement stands.
import { Alert, Badge, Tooltip } from "@mantine/core";
import type { ResourceView, RetirementState } from "../../ipc/bindings";
import { useRetirement } from "../../ipc/recoveryQueries";
import { useNow } from "../../lib/useNow";
import { RetirementProgress } from "./RetirementProgress";

/** The id of the retirement holding `resource`, or null. */
export function retirementOf(resource: ResourceView): string | null {
  const s = resource.status;
  const id = s && typeof s === "object" && !Array.isArray(s) ? s.retirement : undefined;
  return typeof id === "string" ? id : null;
}

const labels: Partial<Record<RetirementState, string>> = {
  blocked: "Retirement blocked",
  draining: "Retiring: draining",
  disabled: "Retiring: disabled",
  scheduled: "Scheduled for deletion",
};

export function RetiringBadge({
  resource,
  state,
}: {
  resource: ResourceView;
  /** The retirement's state, when the retirements list has answered. */
  state?: RetirementState;
}) {
  const id = retirementOf(resource);
  if (!id) return null;
  return (
    <Tooltip
      label={`Retirement ${id} holds it: it is drained, disabled and then deleted. Cancel it on the Recovery page to keep it.`}
      multiline
      w={320}
      withinPortal
    >
      <Badge
        size="xs"
        variant="light"
        color={state === "scheduled" || state === "blocked" ? "red" : "orange"}
        style={{ flexShrink: 1, minWidth: 0 }}
        data-testid={`retiring-${resource.name}`}
      >
        {(state && labels[state]) ?? "Retiring"}
      </Badge>
    </Tooltip>
  );
}

/** In the drawer: where the retirement holding the resource stands, with Cancel. */
export function RetirementNotice({ resource }: { resource: ResourceView }) {
  const id = retirementOf(resource);
  const retirement = useRetirement(id);
  const now = useNow(5000);
  if (!id) return null;
  const server = retirement.data?.server;
  return (
    <Alert color="orange" title="Being retired" data-testid="drawer-retirement">
      {server ? (
        <RetirementProgress r={server} now={now} />
      ) : retirement.isError ? (
        `Retirement ${id} holds it; where it stands is not known (the control plane did not answer).`
      ) : (
        `Retirement ${id} holds it; asking the control plane where it stands…`
      )}
    </Alert>
  );
}
