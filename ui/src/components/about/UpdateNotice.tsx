import { Badge, Button, Group, Popover, Stack, Text } from "@mantine/core";
import { useSaveUpdateSettings, useUpdateSettings, useUpdateStatus } from "./queries";

/**
 * In the header: the first launch's opt-in question (no feed is asked anything before a
 * person says yes), and "version X available" once a check found one.
 */
export function UpdateNotice() {
  const settings = useUpdateSettings();
  const status = useUpdateStatus();
  const save = useSaveUpdateSettings();
  const s = settings.data;
  if (!s) return null;
  const st = status.data;
  if (st?.state === "available" || st?.state === "ready") {
    return (
      <Badge color="teal" variant="light" data-testid="update-badge">
        {st.state === "ready"
          ? `${st.version} ready: restart in About`
          : `Version ${st.version} available`}
      </Badge>
    );
  }
  if (s.auto_check !== null || !s.signed_updates) return null;
  return (
    <Popover width={320} position="bottom-end" withArrow defaultOpened={false}>
      <Popover.Target>
        <Button size="xs" variant="light" data-testid="update-optin">
          Updates?
        </Button>
      </Popover.Target>
      <Popover.Dropdown>
        <Stack gap="xs">
          <Text size="sm">
            Check the update feed for new signed versions once a day? Switchyard asks no server on
            its own until you say yes; you can change this in About → Updates.
          </Text>
          <Group justify="flex-end">
            <Button
              size="xs"
              variant="default"
              onClick={() => save.mutate({ feed_url: s.feed_url, auto_check: false })}
              data-testid="update-optin-no"
            >
              Not now
            </Button>
            <Button
              size="xs"
              onClick={() => save.mutate({ feed_url: s.feed_url, auto_check: true })}
              data-testid="update-optin-yes"
            >
              Check daily
            </Button>
          </Group>
        </Stack>
      </Popover.Dropdown>
    </Popover>
  );
}
