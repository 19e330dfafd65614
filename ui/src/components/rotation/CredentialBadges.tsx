// A target's credential warnings by its name in the target list: an open signing-secret
// overlap, a client certificate expiring within 30 days (ui/src/lib/rotation.ts).
import { Badge, Tooltip } from "@mantine/core";
import type { ResourceView } from "../../ipc/bindings";
import { credentialWarnings } from "../../lib/rotation";

export function CredentialBadges({ resource }: { resource: ResourceView }) {
  const warnings = credentialWarnings(resource, Date.now());
  return warnings.map((w) => (
    <Tooltip key={w.label} label={w.detail} multiline w={320} withinPortal>
      <Badge
        size="xs"
        variant="light"
        color={w.color}
        style={{ flexShrink: 1, minWidth: 0 }}
        data-testid={`credential-warning-${resource.name}`}
      >
        {w.label}
      </Badge>
    </Tooltip>
  ));
}
