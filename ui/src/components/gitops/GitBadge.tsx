import { Badge, Tooltip } from "@mantine/core";
import { IconBrandGit } from "@tabler/icons-react";
import type { ManagedResource } from "../../ipc/bindings";

/** Next to a resource managed by Git: "Git", or "drifted" when it differs from what Git applied. */
export function GitBadge({ managed }: { managed: ManagedResource | undefined }) {
  if (!managed) return null;
  const drifted = managed.state === "drifted" || managed.state === "missing";
  const label = drifted ? "drifted" : "Git";
  const tip = drifted
    ? `Changed outside Git (${managed.changes.map((c) => c.field).join(", ") || "deleted"})${
        managed.changed_by ? ` by ${managed.changed_by}` : ""
      }. Managed by ${managed.source} at ${managed.commit.slice(0, 12)}.`
    : `Managed by Git: ${managed.source}, ${managed.path} at ${managed.commit.slice(0, 12)}`;
  return (
    <Tooltip label={tip} multiline w={320}>
      <Badge
        size="xs"
        variant={drifted ? "filled" : "light"}
        color={drifted ? "orange" : "teal"}
        leftSection={<IconBrandGit size={10} />}
        data-testid="git-badge"
        data-state={managed.state}
        style={{ flexShrink: 0, overflow: "visible" }}
      >
        {label}
      </Badge>
    </Tooltip>
  );
}
