import { Card, Text } from "@mantine/core";
import type { ReactNode } from "react";

/** One figure of the overview: a label, the value, and a line saying what it counts. */
export function Stat({
  label,
  value,
  hint,
  testid,
  color,
  title,
  children,
}: {
  label: string;
  value: ReactNode;
  hint?: ReactNode;
  testid: string;
  color?: string;
  /** Why the value is what it is (shown on hover), e.g. why a figure is absent. */
  title?: string;
  /** Drawn below the hint (a trend). */
  children?: ReactNode;
}) {
  return (
    <Card withBorder padding="md" data-testid={testid} title={title}>
      <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
        {label}
      </Text>
      <Text size="xl" fw={700} mt={4} c={color} data-testid={`${testid}-value`}>
        {value}
      </Text>
      {hint && (
        <Text size="xs" c="dimmed" mt={2} data-testid={`${testid}-hint`}>
          {hint}
        </Text>
      )}
      {children}
    </Card>
  );
}
