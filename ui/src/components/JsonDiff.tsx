import { Code, ScrollArea, Text } from "@mantine/core";
import type { JsonValue } from "../ipc/bindings";
import { diffLines, pretty } from "../lib/diff";

const colors = {
  same: undefined,
  add: "var(--mantine-color-green-light)",
  del: "var(--mantine-color-red-light)",
};
const marks = { same: " ", add: "+", del: "-" };

/** The change from `before` to `after`, line by line. */
export function JsonDiff({
  before,
  after,
  height = 260,
}: {
  before: JsonValue | null;
  after: JsonValue | null;
  height?: number;
}) {
  const lines = diffLines(pretty(before), pretty(after));
  if (!lines.some((l) => l.op !== "same")) {
    return (
      <Text size="sm" c="dimmed" data-testid="diff-none">
        No changes.
      </Text>
    );
  }
  return (
    <ScrollArea h={height} type="auto" data-testid="diff">
      <Code block p={0}>
        {lines.map((line, index) => (
          <div
            // biome-ignore lint/suspicious/noArrayIndexKey: lines of a diff have no identity
            key={index}
            data-op={line.op}
            style={{ background: colors[line.op], padding: "0 8px", whiteSpace: "pre" }}
          >
            {marks[line.op]} {line.text}
          </div>
        ))}
      </Code>
    </ScrollArea>
  );
}

export function JsonBlock({ value, height = 260 }: { value: JsonValue | null; height?: number }) {
  return (
    <ScrollArea h={height} type="auto">
      <Code block>{value === null ? "—" : pretty(value)}</Code>
    </ScrollArea>
  );
}
