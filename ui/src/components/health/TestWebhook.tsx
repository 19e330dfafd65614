// "Send test webhook" on a target: one signed test webhook through the control plane, queued
// like every write (saved locally → sent → confirmed, or needs attention), then what the
// receiver answered.
import { Badge, Button, Code, Group, Stack, Text } from "@mantine/core";
import type { ReplayWriteState, TargetTestView } from "../../ipc/bindings";
import { toIpcError } from "../../ipc/client";
import { unsettled, useSendTestWebhook, useTargetTests } from "../../ipc/targetTestQueries";
import { relativeTime, shortTime } from "../../lib/format";
import { classLabels } from "../../lib/health";
import { useNow } from "../../lib/useNow";
import { ErrorAlert } from "../ErrorAlert";

const stateWords: Record<ReplayWriteState, { label: string; color: string; hint: string }> = {
  saved_locally: {
    label: "Saved locally",
    color: "gray",
    hint: "queued in this console; it is sent when the control plane answers",
  },
  sent: { label: "Sent", color: "blue", hint: "the control plane is calling the receiver" },
  confirmed: { label: "Confirmed", color: "green", hint: "the control plane reported the answer" },
  needs_attention: {
    label: "Needs attention",
    color: "red",
    hint: "the control plane refused the test",
  },
};

function Verdict({ test, now }: { test: TargetTestView; now: number }) {
  const r = test.result;
  if (test.state === "needs_attention") {
    return (
      <Text size="sm" c="red" data-testid="test-webhook-verdict">
        {test.error ?? "refused"}
      </Text>
    );
  }
  if (!r) {
    return (
      <Text size="sm" c="dimmed" data-testid="test-webhook-verdict">
        {unsettled(test) && test.error ? `retrying: ${test.error}` : stateWords[test.state].hint}
      </Text>
    );
  }
  const answer =
    r.status_code !== null ? `HTTP ${r.status_code}` : (r.error ?? "no answer from the receiver");
  const cls = r.error_class ? ` (${classLabels[r.error_class]})` : "";
  return (
    <Stack gap={2}>
      <Text size="sm" c={r.ok ? "teal" : "red"} fw={600} data-testid="test-webhook-verdict">
        {r.ok ? "Receiver accepted it" : "Receiver did not accept it"}: {answer}
        {cls} in {r.duration_ms} ms
      </Text>
      {!r.ok && r.status_code !== null && r.error && (
        <Text size="xs" c="dimmed" lineClamp={2} title={r.error}>
          {r.error}
        </Text>
      )}
      <Text size="xs" c="dimmed">
        <span title={shortTime(Date.parse(r.tested_at))}>
          {relativeTime(Date.parse(r.tested_at), now)}
        </span>{" "}
        · webhook-id <Code>{r.webhook_id}</Code>
      </Text>
    </Stack>
  );
}

export function TestWebhook({ target }: { target: string }) {
  const tests = useTargetTests(target);
  const send = useSendTestWebhook(target);
  const now = useNow(5000);
  const latest = tests.data?.[0];
  const busy = send.isPending || unsettled(latest);
  const words = latest ? stateWords[latest.state] : null;
  return (
    <Stack gap={6} data-testid="test-webhook">
      <Group justify="space-between" align="center" wrap="nowrap">
        <Group gap="xs">
          <Text size="sm" fw={600}>
            Test webhook
          </Text>
          {latest && words && (
            <Badge color={words.color} title={words.hint} data-testid="test-webhook-state">
              {words.label}
            </Badge>
          )}
        </Group>
        <Button
          size="xs"
          variant="light"
          loading={busy}
          onClick={() => send.mutate()}
          data-testid="test-webhook-send"
        >
          Send test webhook
        </Button>
      </Group>
      <Text size="xs" c="dimmed">
        One signed <Code>switchyard.test</Code> webhook from the control plane to this target,
        queued like every write: a retry never sends it twice.
      </Text>
      {send.error && <ErrorAlert error={toIpcError(send.error)} title="Not queued" />}
      {latest ? (
        <Verdict test={latest} now={now} />
      ) : (
        tests.data && (
          <Text size="sm" c="dimmed" data-testid="test-webhook-none">
            No test sent from this console yet.
          </Text>
        )
      )}
    </Stack>
  );
}
