import { Alert, Button, Group, List, Stack, Text, Textarea } from "@mantine/core";
import { useState } from "react";
import type { IpcError, JsonValue, ResourceKind, ResourceView } from "../ipc/bindings";
import { isIpcError } from "../ipc/client";
import { useLive, useQueueWrite } from "../ipc/queries";
import { diffLines, hasChanges, pretty } from "../lib/diff";
import { specProblems } from "../lib/validate";
import { ErrorAlert } from "./ErrorAlert";
import { JsonDiff } from "./JsonDiff";

/** Parses the editor text; the error names the line and column when it is not JSON. */
export function parseSpec(text: string): { spec: JsonValue } | { error: string } {
  try {
    const spec = JSON.parse(text) as JsonValue;
    if (!spec || typeof spec !== "object" || Array.isArray(spec)) {
      return { error: "The spec must be a JSON object ({ … })." };
    }
    return { spec };
  } catch (e) {
    return { error: `Not valid JSON: ${(e as Error).message}` };
  }
}

/**
 * Apply (declarative upsert) from a JSON editor. Before anything is queued it shows the diff
 * against the live resource (fetched from the control plane; the cached copy when offline).
 */
export function ApplyEditor({
  kind,
  resource,
  onDone,
}: {
  kind: ResourceKind;
  resource: ResourceView;
  onDone: () => void;
}) {
  const [text, setText] = useState(pretty(resource.spec));
  const [reviewing, setReviewing] = useState(false);
  const [error, setError] = useState<IpcError | null>(null);
  const live = useLive(kind, resource.name, reviewing);
  const queue = useQueueWrite();
  const parsed = parseSpec(text);
  const problems = "spec" in parsed ? specProblems(kind, parsed.spec) : [];
  // A refusal answers the text it was sent with: a new text or a new review starts clean.
  const edit = (next: string) => {
    setText(next);
    setError(null);
  };
  const liveSpec = live.data ? live.data.spec : resource.spec;
  const changed = "spec" in parsed && hasChanges(diffLines(pretty(liveSpec), pretty(parsed.spec)));

  const apply = async () => {
    if (!("spec" in parsed)) return;
    try {
      await queue.mutateAsync({
        kind,
        name: resource.name,
        operation: "apply",
        spec: parsed.spec,
        base_version: live.data?.version ?? resource.version,
      });
      onDone();
    } catch (e) {
      setError(isIpcError(e) ? e : { code: "internal", message: String(e), problem: null });
    }
  };

  if (!reviewing) {
    return (
      <Stack gap="sm">
        <Textarea
          label="Desired spec (JSON)"
          autosize
          minRows={10}
          maxRows={22}
          value={text}
          onChange={(e) => edit(e.currentTarget.value)}
          styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)" } }}
          error={"error" in parsed ? parsed.error : undefined}
          data-testid="apply-editor"
        />
        {problems.length > 0 && (
          <Alert
            color="red"
            title={
              problems.length === 1 ? "1 field needs a fix" : `${problems.length} fields need a fix`
            }
            data-testid="apply-problems"
          >
            <List size="sm">
              {problems.map((p) => (
                <List.Item key={p}>{p}</List.Item>
              ))}
            </List>
          </Alert>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={onDone}>
            Cancel
          </Button>
          <Button
            disabled={"error" in parsed || problems.length > 0}
            onClick={() => {
              setError(null);
              setReviewing(true);
            }}
            data-testid="apply-review"
          >
            Review changes
          </Button>
        </Group>
      </Stack>
    );
  }

  return (
    <Stack gap="sm">
      <Text size="sm">
        {live.isLoading
          ? "Fetching the live version…"
          : live.data
            ? `Against the live version ${live.data.version} on the control plane:`
            : "The control plane cannot be reached: this is the diff against the cached copy."}
      </Text>
      {live.isError && (
        <Alert color="yellow">Working offline; the apply is queued and sent when it is back.</Alert>
      )}
      {"spec" in parsed && <JsonDiff before={liveSpec} after={parsed.spec} height={320} />}
      <ErrorAlert error={error} />
      <Group justify="flex-end">
        <Button variant="default" onClick={() => setReviewing(false)}>
          Back to editor
        </Button>
        <Button
          onClick={apply}
          disabled={!changed}
          loading={queue.isPending}
          data-testid="apply-queue"
        >
          Queue apply
        </Button>
      </Group>
    </Stack>
  );
}
