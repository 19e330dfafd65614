import { Text } from "@mantine/core";
import type { Origin } from "../ipc/bindings";

/** Who queued a write, when it was not a person at the console: "via MCP: claude-desktop 1.2". */
export function OriginNote({ origin }: { origin: Origin }) {
  if (origin.via === "console") return null;
  const label =
    origin.via === "mcp"
      ? `via MCP: ${origin.client}`
      : `via GitOps: ${origin.commit.slice(0, 12)} ${origin.path}`;
  return (
    <Text size="xs" c="violet" data-testid="origin-note">
      {label}
    </Text>
  );
}
