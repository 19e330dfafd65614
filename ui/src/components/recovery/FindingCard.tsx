// One finding: what is wrong, the evidence it rests on, and its fixes. Each fix shows the exact
// request it will make before it is run; a destructive one asks for confirmation. A fix is a
// write like any other: saved locally → sent → confirmed, or needs attention. A test webhook
// shows what the receiver answered; a replay opens the DLQ page's replay dialog.
import { Badge, Button, Card, Code, Group, List, Modal, Stack, Text, Tooltip } from "@mantine/core";
import { notifications } from "@mantine/notifications";
import { useState } from "react";
import type { Finding, FixAction, IpcError, RecoveryWriteView } from "../../ipc/bindings";
import { useTrialCandidates } from "../../ipc/dlqQueries";
import { useRunFix } from "../../ipc/recoveryQueries";
import { relativeTime } from "../../lib/format";
import {
  classLabels,
  consoleClasses,
  fixKind,
  replayingWords,
  requestText,
  severityWords,
} from "../../lib/recovery";
import { ReplayDialog, stateWords, WriteBadge } from "../dlq/ReplayDialog";
import { ErrorAlert } from "../ErrorAlert";
import { TestWebhook } from "../health/TestWebhook";

function Evidence({ f, now }: { f: Finding; now: number }) {
  const e = f.evidence;
  const lines: string[] = [];
  if (e.count != null) lines.push(`${e.count} affected`);
  if (e.since)
    lines.push(
      `since ${new Date(e.since).toLocaleString()} (${relativeTime(Date.parse(e.since), now)})`,
    );
  if (e.until)
    lines.push(
      `until ${new Date(e.until).toLocaleString()} (${relativeTime(Date.parse(e.until), now)})`,
    );
  if (e.last_error) lines.push(`last error: ${e.last_error}`);
  if (e.expected != null && e.actual != null)
    lines.push(`counted ${e.actual}, rows say ${e.expected}`);
  const replaying = replayingWords(f);
  if (replaying) lines.push(replaying);
  if (lines.length === 0 && (e.delivery_ids ?? []).length === 0) return null;
  return (
    <Stack gap={4} data-testid={`evidence-${f.id}`}>
      {lines.map((l) => (
        <Text key={l} size="sm">
          {l}
        </Text>
      ))}
      {(e.delivery_ids ?? []).length > 0 && (
        <Text size="xs" c="dimmed">
          Deliveries: {(e.delivery_ids ?? []).join(", ")}
        </Text>
      )}
    </Stack>
  );
}

/** The exact request a fix makes, under its button. */
function Request({ testid, action }: { testid: string; action: FixAction }) {
  return (
    <Code block data-testid={`${testid}-request`} style={{ fontSize: 11 }}>
      {requestText(action)}
    </Code>
  );
}

function FixButton({
  f,
  action,
  index,
  write,
  resolved,
}: {
  f: Finding;
  action: FixAction;
  index: number;
  write: RecoveryWriteView | undefined;
  resolved: boolean;
}) {
  const run = useRunFix();
  const message = run.data?.message;
  const [confirming, setConfirming] = useState(false);
  // The finding may be gone at the next check (fixed): the outcome also goes to a notification.
  const go = () =>
    run.mutate(
      { findingId: f.id, action: index },
      {
        onSuccess: (o) =>
          notifications.show({ title: action.label, message: o.message, color: "blue" }),
      },
    );
  const busy = write && (write.state === "saved_locally" || write.state === "sent");
  const testid = `fix-${f.id}-${index}`;
  return (
    <Stack gap={4}>
      <Group gap="xs" wrap="nowrap">
        <Button
          size="xs"
          color={action.destructive ? "red" : undefined}
          variant={index === 0 ? "filled" : "light"}
          loading={run.isPending}
          disabled={!!busy || resolved}
          onClick={() => (action.destructive ? setConfirming(true) : go())}
          data-testid={testid}
        >
          {action.label}
        </Button>
        {write && (
          <Tooltip label={write.error ?? stateWords[write.state].label} disabled={!write.error}>
            <Badge color={stateWords[write.state].color} data-testid={`${testid}-state`}>
              {stateWords[write.state].label}
            </Badge>
          </Tooltip>
        )}
      </Group>
      <Request testid={testid} action={action} />
      {write?.error && (
        <Text size="xs" c="red">
          {write.error}
        </Text>
      )}
      {message && !write && (
        <Text size="xs" data-testid={`${testid}-outcome`}>
          {message}
        </Text>
      )}
      {run.error && <ErrorAlert error={run.error as unknown as IpcError} />}
      <Modal
        opened={confirming}
        onClose={() => setConfirming(false)}
        title={`${action.label}?`}
        data-testid={`${testid}-confirm`}
      >
        <Stack>
          <Text size="sm">This cannot be undone. It sends:</Text>
          <Code block>{requestText(action)}</Code>
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setConfirming(false)}>
              Keep it
            </Button>
            <Button
              color="red"
              onClick={() => {
                setConfirming(false);
                go();
              }}
              data-testid={`${testid}-confirm-button`}
            >
              {action.label}
            </Button>
          </Group>
        </Stack>
      </Modal>
    </Stack>
  );
}

/** A test webhook fix: sent and shown as the drawer's Health tab does, with the receiver's
 * answer ("Receiver did not accept it: HTTP 500 in 2 ms"), not only the write's state. */
function TestFix({ f, action, index }: { f: Finding; action: FixAction; index: number }) {
  const kind = fixKind(action);
  if (kind.kind !== "test") return null;
  return (
    <Stack gap={4} data-testid={`fix-${f.id}-${index}`}>
      <TestWebhook target={kind.target} />
      <Request testid={`fix-${f.id}-${index}`} action={action} />
    </Stack>
  );
}

/** A replay fix: the DLQ page's replay dialog (dry-run count, rate, trial batch), never a
 * bulk re-send in one click. */
function ReplayFix({
  f,
  action,
  index,
  resolved,
}: {
  f: Finding;
  action: FixAction;
  index: number;
  resolved: boolean;
}) {
  const [open, setOpen] = useState(false);
  const [started, setStarted] = useState<string | null>(null);
  const kind = fixKind(action);
  const selection = kind.kind === "replay" ? kind.selection : null;
  const filter = selection?.by === "filter" ? selection.filter : null;
  const candidates = useTrialCandidates(filter, open);
  if (!selection) return null;
  const testid = `fix-${f.id}-${index}`;
  return (
    <Stack gap={4}>
      <Group gap="xs" wrap="nowrap">
        <Button
          size="xs"
          variant={index === 0 ? "filled" : "light"}
          disabled={resolved}
          onClick={() => setOpen(true)}
          data-testid={testid}
        >
          {action.label}…
        </Button>
        {started && <WriteBadge sessionId={started} />}
      </Group>
      <Request testid={testid} action={action} />
      {started && (
        <Text size="xs" data-testid={`${testid}-outcome`}>
          Replay session {started} started: see Replays for its progress.
        </Text>
      )}
      {open && (
        <ReplayDialog
          opened
          onClose={() => setOpen(false)}
          selection={selection}
          trialCandidates={candidates.data ?? []}
          onStarted={(id) => {
            setStarted(id);
            setOpen(false);
          }}
        />
      )}
    </Stack>
  );
}

function Fix(props: {
  f: Finding;
  action: FixAction;
  index: number;
  write: RecoveryWriteView | undefined;
  resolved: boolean;
}) {
  switch (fixKind(props.action).kind) {
    case "test":
      return <TestFix f={props.f} action={props.action} index={props.index} />;
    case "replay":
      return <ReplayFix {...props} />;
    default:
      return <FixButton {...props} />;
  }
}

export function FindingCard({
  f,
  writes,
  now,
  resolved = false,
}: {
  f: Finding;
  /** The fixes queued for this finding, newest first. */
  writes: RecoveryWriteView[];
  now: number;
  /** No longer reported since a fix ran: shown with the fix's outcome, not to run again. */
  resolved?: boolean;
}) {
  const s = resolved ? { color: "green", label: "No longer reported" } : severityWords[f.severity];
  return (
    <Card
      withBorder
      padding="sm"
      data-testid={resolved ? `resolved-${f.id}` : `finding-${f.id}`}
      opacity={resolved ? 0.85 : 1}
    >
      <Stack gap="xs">
        <Group justify="space-between" wrap="nowrap">
          <Group gap="xs" wrap="nowrap">
            <Badge color={s.color}>{s.label}</Badge>
            <Text fw={600}>{classLabels[f.class]}</Text>
            <Text c="dimmed" size="sm">
              {f.subject.kind} {f.subject.id}
            </Text>
          </Group>
          <Badge variant="outline" color="gray">
            {consoleClasses.has(f.class) ? "this console" : "control plane"}
          </Badge>
        </Group>
        <Text size="sm">{f.detail}</Text>
        <Evidence f={f} now={now} />
        {f.actions.length === 0 ? (
          <Text size="sm" c="dimmed">
            No automatic fix: this needs a person (see docs/recovery.md for what to check).
          </Text>
        ) : (
          <List spacing="xs" listStyleType="none">
            {f.actions.map((a, i) => (
              <List.Item key={`${a.method} ${a.path} ${a.label}`}>
                <Fix
                  f={f}
                  action={a}
                  index={i}
                  resolved={resolved}
                  write={writes.find(
                    (w) => w.method === a.method && w.path === a.path && w.label === a.label,
                  )}
                />
              </List.Item>
            ))}
          </List>
        )}
      </Stack>
    </Card>
  );
}
