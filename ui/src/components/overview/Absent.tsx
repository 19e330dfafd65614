import { Text, Tooltip } from "@mantine/core";
import { ABSENT } from "../../lib/health";

/** Tooltips open on hover and on keyboard focus. */
export const KEYBOARD = { hover: true, focus: true, touch: false };

/** A figure the server did not report: "—", with the reason on hover. */
export function Absent({ why, testid }: { why: string; testid?: string }) {
  return (
    <Tooltip label={why} withArrow events={KEYBOARD}>
      <Text
        span
        size="sm"
        c="dimmed"
        tabIndex={0}
        aria-label={`unknown: ${why}`}
        data-testid={testid}
      >
        {ABSENT}
      </Text>
    </Tooltip>
  );
}
