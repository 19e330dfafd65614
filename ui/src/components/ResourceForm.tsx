import {
  Alert,
  Button,
  Group,
  NumberInput,
  Select,
  Stack,
  TagsInput,
  Text,
  Textarea,
  TextInput,
} from "@mantine/core";
import { useForm } from "@mantine/form";
import { useEffect, useMemo, useRef, useState } from "react";
import type { IpcError, JsonValue, OutboxEntry, ResourceKind, ResourceView } from "../ipc/bindings";
import { isIpcError } from "../ipc/client";
import { useGitopsManaged } from "../ipc/gitopsQueries";
import { useOutbox, useQueueWrite, useResolve, useResources } from "../ipc/queries";
import { mergePatch } from "../lib/diff";
import { kindLabels } from "../lib/format";
import { emptySpec } from "../lib/kinds";
import { type FormValues, formValues, parseHeaders, validate } from "../lib/validate";
import { ErrorAlert } from "./ErrorAlert";
import { StateBadge } from "./PendingBadge";

type Values = FormValues;

/** The spec the form describes. Header lines are `Name: value`. */
export function toSpec(kind: ResourceKind, v: Values): JsonValue {
  switch (kind) {
    case "endpoint":
      return { description: v.description, event_types: v.event_types };
    case "target":
      return { url: v.url, timeout_ms: v.timeout_ms, headers: parseHeaders(v.headers).headers };
    case "flow": {
      const spec: { [key: string]: JsonValue } = {
        endpoint: v.endpoint,
        target: v.target,
        event_types: v.event_types,
        mode: v.mode,
      };
      if (v.mode === "async_relay") spec.edge = v.edge;
      return spec;
    }
  }
}

/** Maps a problem's JSON path (`spec.url`, `spec.event_types[1]`, `name`) to a form field. */
export function fieldOf(path: string | null | undefined): keyof Values | null {
  if (!path) return null;
  const key = path.replace(/^spec\./, "").split(/[.[]/)[0];
  const known: (keyof Values)[] = [
    "name",
    "description",
    "event_types",
    "url",
    "timeout_ms",
    "headers",
    "endpoint",
    "target",
    "mode",
    "edge",
  ];
  return known.includes(key as keyof Values) ? (key as keyof Values) : null;
}

/**
 * Create or edit a resource. The write is queued (it works offline); while the form is open it
 * follows the write and shows the control plane's answer, field by field when it refuses.
 */
export function ResourceForm({
  kind,
  resource,
  onDone,
}: {
  kind: ResourceKind;
  resource: ResourceView | null;
  onDone: () => void;
}) {
  const initial = useMemo(
    () => formValues(resource?.name ?? "", resource?.spec ?? emptySpec[kind]),
    [resource, kind],
  );
  // Every field's error, local (lib/validate.ts, all at once on submit) or from the control
  // plane (set under the field its problem names); editing a field clears its own.
  const form = useForm<Values>({
    initialValues: initial,
    validate: (values) => validate(kind, values, !resource),
    clearInputErrorOnChange: true,
  });
  const values = form.getValues();
  const [error, setError] = useState<IpcError | null>(null);
  const [opId, setOpId] = useState<number | null>(null);
  const queue = useQueueWrite();
  const resolve = useResolve();
  const outbox = useOutbox();
  const endpoints = useResources("endpoint");
  const targets = useResources("target");
  const op: OutboxEntry | undefined = outbox.data?.find((entry) => entry.id === opId);
  const gitManaged = useGitopsManaged(kind, !!resource)[`${kind}/${resource?.name}`];

  useEffect(() => {
    if (op?.state === "done") onDone();
  }, [op?.state, onDone]);

  const problem = op?.state === "needs_attention" ? op.error : (error?.problem ?? null);
  const problemField = fieldOf(problem?.field);
  // (The form's setter changes with its errors: the effect must not run again when they do.)
  const setFieldError = useRef(form.setFieldError);
  setFieldError.current = form.setFieldError;
  // Set once per refusal (not on every re-read of the outbox, which would bring back an error
  // the person already fixed).
  const refusal =
    problem && problemField
      ? JSON.stringify([op?.id ?? null, problemField, problem.message])
      : null;
  useEffect(() => {
    if (!refusal) return;
    const [, field, message] = JSON.parse(refusal) as [unknown, keyof Values, string];
    setFieldError.current(field, message);
  }, [refusal]);
  const errors = form.errors;
  const fieldError = (field: keyof Values) => errors[field];
  // The fields whose input gives another type than the value (a number field's text, a
  // select's null) set the value themselves; the others use `form.getInputProps`.
  const set = <K extends keyof Values>(key: K, value: Values[K]) =>
    form.setFieldValue(key, value as Parameters<typeof form.setFieldValue<K>>[1]);

  const submit = async () => {
    setError(null);
    // Replaces every error (the control plane's too) with what the form's checks find now.
    if (form.validate().hasErrors) return;
    const spec = toSpec(kind, values);
    try {
      // A corrected form replaces the refused write instead of leaving it behind.
      if (op?.state === "needs_attention") {
        await resolve.mutateAsync({ id: op.id, resolution: "discard" });
      }
      const entry = await queue.mutateAsync(
        resource
          ? {
              kind,
              name: resource.name,
              operation: "update",
              spec: mergePatch(resource.spec, spec),
              base_version: resource.version,
            }
          : { kind, name: values.name, operation: "create", spec, base_version: null },
      );
      setOpId(entry.id);
    } catch (e) {
      setError(isIpcError(e) ? e : { code: "internal", message: String(e), problem: null });
    }
  };

  const names = (items: ResourceView[] | undefined) => (items ?? []).map((r) => r.name);
  const busy = op !== undefined && op.state !== "needs_attention";

  return (
    <Stack gap="sm" data-testid="resource-form">
      {gitManaged && (
        <Alert color="orange" title="Managed by Git" data-testid="git-managed-warning">
          {resource?.name} comes from {gitManaged.path} in {gitManaged.source}. An edit made here
          drifts from Git: GitOps status reports it, and an apply with self-heal sets it back. To
          keep it, change the manifest in Git instead.
        </Alert>
      )}
      <TextInput
        label="Name"
        description="1–63 characters: lowercase letters, digits and hyphens"
        {...form.getInputProps("name")}
        disabled={!!resource}
        data-autofocus
        data-testid="field-name"
      />
      {kind === "endpoint" && (
        <>
          <TextInput
            label="Description"
            {...form.getInputProps("description")}
            data-testid="field-description"
          />
          <TagsInput
            label="Event types"
            description="Empty accepts any type. Press Enter after each."
            {...form.getInputProps("event_types")}
            data-testid="field-event-types"
          />
        </>
      )}
      {kind === "target" && (
        <>
          <TextInput label="URL" {...form.getInputProps("url")} data-testid="field-url" />
          <NumberInput
            label="Timeout (ms)"
            data-testid="field-timeout"
            value={values.timeout_ms}
            onChange={(v) => set("timeout_ms", typeof v === "number" ? v : Number(v) || 0)}
            error={fieldError("timeout_ms")}
          />
          <Textarea
            label="Headers"
            data-testid="field-headers"
            description="One per line: Name: value"
            autosize
            minRows={2}
            {...form.getInputProps("headers")}
          />
        </>
      )}
      {kind === "flow" && (
        <>
          <Select
            label="Endpoint"
            data-testid="field-endpoint"
            data={names(endpoints.data)}
            value={values.endpoint || null}
            onChange={(v) => set("endpoint", v ?? "")}
            searchable
            selectFirstOptionOnChange
            error={fieldError("endpoint")}
          />
          <Select
            label="Target"
            data-testid="field-target"
            data={names(targets.data)}
            value={values.target || null}
            onChange={(v) => set("target", v ?? "")}
            searchable
            selectFirstOptionOnChange
            error={fieldError("target")}
          />
          <TagsInput
            label="Event types"
            description="Empty routes every type."
            {...form.getInputProps("event_types")}
          />
          <Select
            label="Mode"
            data={["async_inline", "async_relay", "sync"]}
            value={values.mode}
            onChange={(v) => set("mode", v ?? "async_inline")}
            allowDeselect={false}
            error={fieldError("mode")}
          />
          {values.mode === "async_relay" && (
            <TextInput label="Edge plane" {...form.getInputProps("edge")} />
          )}
        </>
      )}
      {problem && !problemField && <ErrorAlert error={problem} />}
      {Object.keys(errors).length > 1 && (
        <Text size="sm" c="red" data-testid="form-error-count">
          {Object.keys(errors).length} fields need a fix.
        </Text>
      )}
      {error && !error.problem && <ErrorAlert error={error} />}
      {op && (
        <Group gap="xs" data-testid="form-op-state">
          <StateBadge state={op.state} />
          <Text size="sm" c="dimmed">
            {op.state === "pending" &&
              "Saved locally. It is sent as soon as the control plane answers; you can close this."}
            {op.state === "sending" && "Sending to the control plane…"}
            {op.state === "needs_attention" &&
              "The control plane refused it. Fix the form and save again."}
          </Text>
        </Group>
      )}
      <Group justify="flex-end">
        <Button variant="default" onClick={onDone} data-testid="form-close">
          {op ? "Close" : "Cancel"}
        </Button>
        {/* Once queued, the write is safe: the button says so instead of spinning while the
            control plane is away (the state line above says what happens next). */}
        <Button
          onClick={submit}
          loading={queue.isPending}
          disabled={busy}
          data-testid="form-submit"
        >
          {op?.state === "pending"
            ? "Queued"
            : op?.state === "sending"
              ? "Sending…"
              : resource
                ? "Save changes"
                : `Create ${kindLabels[kind].one.toLowerCase()}`}
        </Button>
      </Group>
    </Stack>
  );
}
