import { Badge, Tooltip } from "@mantine/core";
import type { OpState, PendingWrite } from "../ipc/bindings";
import { operationLabels, stateColors, stateLabels } from "../lib/format";

/** Where a write stands: saved locally → sending → confirmed, or needs attention. */
export function StateBadge({ state }: { state: OpState }) {
  return (
    <Badge
      color={stateColors[state]}
      variant="light"
      data-state={state}
      data-testid="op-state"
      style={{ flexShrink: 0, overflow: "visible" }}
      styles={{ label: { overflow: "visible" } }}
    >
      {stateLabels[state]}
    </Badge>
  );
}

/** The badge next to a resource with a write on it, with the operation and any error. */
export function PendingBadge({ pending }: { pending: PendingWrite | null }) {
  if (!pending) return null;
  const label = `${stateLabels[pending.state]} · ${operationLabels[pending.operation]}`;
  const badge = (
    <Badge
      color={stateColors[pending.state]}
      variant={pending.state === "needs_attention" ? "filled" : "light"}
      data-state={pending.state}
      data-testid="pending-badge"
      style={{ flexShrink: 0, overflow: "visible" }}
      styles={{ label: { overflow: "visible" } }}
    >
      {label}
    </Badge>
  );
  if (!pending.error) return badge;
  return (
    <Tooltip label={pending.error.message} multiline w={320}>
      {badge}
    </Tooltip>
  );
}
