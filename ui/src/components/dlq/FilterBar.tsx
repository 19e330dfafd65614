// The DLQ explorer's filters. Endpoint, target and flow offer the names the local copy knows
// (the server matches exact names); the dates are labelled, look empty when unset, and have
// quick ranges. Flow and the dates sit in a second row that opens on request.
import { Autocomplete, Button, Group, Select, Stack, TextInput } from "@mantine/core";
import { useEffect, useState } from "react";
import type { DlqFilterInput, ErrorClass, ResourceKind } from "../../ipc/bindings";
import { useResources } from "../../ipc/queries";
import { type DlqView, failureClasses } from "../../lib/dlq";

const toMs = (local: string) => (local ? Date.parse(local) : Number.NaN);
const toLocal = (ms: number | null) =>
  ms === null
    ? ""
    : new Date(ms - new Date(ms).getTimezoneOffset() * 60_000).toISOString().slice(0, 16);

/** The names of one kind in the local copy, for the filters' suggestions. */
export function useKnownNames(kind: ResourceKind): string[] {
  const resources = useResources(kind);
  return (resources.data ?? []).map((r) => r.name).sort();
}

/** A date-time field that shows its label and "any" when unset, not a greyed-out date. */
function DateField({
  label,
  value,
  onChange,
  testid,
}: {
  label: string;
  value: number | null;
  onChange: (ms: number | null) => void;
  testid: string;
}) {
  const [focused, setFocused] = useState(false);
  return (
    <TextInput
      w={200}
      size="xs"
      label={label}
      type={focused || value !== null ? "datetime-local" : "text"}
      placeholder="any"
      value={toLocal(value)}
      onFocus={() => setFocused(true)}
      onBlur={() => setFocused(false)}
      onChange={(e) => {
        const ms = toMs(e.currentTarget.value);
        onChange(Number.isNaN(ms) ? null : ms);
      }}
      data-testid={testid}
    />
  );
}

const ranges: { label: string; ms: number }[] = [
  { label: "15 min", ms: 15 * 60_000 },
  { label: "1 h", ms: 3_600_000 },
  { label: "24 h", ms: 24 * 3_600_000 },
];

/** How many of the second row's filters (flow, dates) are set. */
const moreSet = (f: DlqFilterInput) =>
  [f.flow, f.since, f.until].filter((v) => v !== null && v !== undefined && v !== "").length;

/** The filters in one row (endpoint, target, error class, text), the rest (flow, the dates and
 * their quick ranges) in a second row behind *More filters*: all in view took three rows at
 * 1024 px and left about four rows of the table at 1024×700. The second row opens by itself
 * when one of its filters is set (a link, a reopened view), and its button counts them. */
export function FilterBar({ view, onChange }: { view: DlqView; onChange: (v: DlqView) => void }) {
  const set = (patch: Partial<DlqFilterInput>) =>
    onChange({ ...view, filter: { ...view.filter, ...patch } });
  const hidden = moreSet(view.filter);
  const [more, setMore] = useState(hidden > 0);
  // One of them set from elsewhere (a chart, a link): the row opens to show it.
  useEffect(() => {
    if (hidden > 0) setMore(true);
  }, [hidden]);
  const names: Record<"endpoint" | "target" | "flow", string[]> = {
    endpoint: useKnownNames("endpoint"),
    target: useKnownNames("target"),
    flow: useKnownNames("flow"),
  };
  const text = (key: "endpoint" | "target" | "flow") => (
    <Autocomplete
      w={140}
      size="xs"
      label={key[0].toUpperCase() + key.slice(1)}
      placeholder="any"
      aria-label={key}
      data={names[key]}
      limit={20}
      value={view.filter[key] ?? ""}
      onChange={(v) => set({ [key]: v.trim() || null })}
      clearable
      data-testid={`filter-${key}`}
    />
  );
  return (
    <Stack gap={6} data-testid="dlq-filters">
      <Group gap="xs" wrap="wrap" align="end">
        {text("endpoint")}
        {text("target")}
        <Select
          w={130}
          size="xs"
          label="Error class"
          placeholder="any"
          aria-label="error class"
          clearable
          data={failureClasses}
          value={view.filter.error_class}
          onChange={(v) => set({ error_class: (v as ErrorClass) ?? null })}
          data-testid="filter-error-class"
        />
        <TextInput
          w={170}
          size="xs"
          label="Event type or id"
          placeholder="in the loaded rows"
          aria-label="text"
          value={view.text}
          onChange={(e) => onChange({ ...view, text: e.currentTarget.value })}
          data-testid="filter-text"
        />
        <Button
          size="xs"
          variant="subtle"
          aria-expanded={more}
          onClick={() => setMore((m) => !m)}
          data-testid="filter-more"
        >
          {more ? "Fewer filters" : "More filters"}
          {hidden > 0 ? ` (${hidden} set)` : ""}
        </Button>
      </Group>
      {more && (
        <Group gap="xs" wrap="wrap" align="end" data-testid="dlq-filters-more">
          {text("flow")}
          <DateField
            label="Dead since"
            value={view.filter.since}
            onChange={(since) => set({ since })}
            testid="filter-since"
          />
          <DateField
            label="Dead until"
            value={view.filter.until}
            onChange={(until) => set({ until })}
            testid="filter-until"
          />
          <Group gap={4} wrap="nowrap">
            {ranges.map((r) => (
              <Button
                key={r.label}
                size="xs"
                variant="default"
                onClick={() => set({ since: Date.now() - r.ms, until: null })}
                data-testid={`range-${r.label.replace(" ", "")}`}
              >
                {r.label}
              </Button>
            ))}
          </Group>
        </Group>
      )}
    </Stack>
  );
}

/**
 * Why a filtered DLQ view is empty, in words: names that no resource has are called out (the
 * server matches exact names), with the known names that contain what was typed.
 */
export function emptyReason(
  filter: DlqFilterInput,
  known: Record<"endpoint" | "target" | "flow", string[]>,
  profile: string | undefined,
  /** Attempts a delivery gets before it dies (the server's retry schedule), when known. */
  attempts?: number,
): string {
  const set = (["endpoint", "target", "flow"] as const).filter((k) => filter[k]);
  const unknown = set.filter((k) => known[k].length > 0 && !known[k].includes(filter[k] ?? ""));
  if (unknown.length) {
    const k = unknown[0];
    const typed = filter[k] ?? "";
    const near = known[k].filter((n) => n.includes(typed)).slice(0, 3);
    return `No dead deliveries match ${k} = '${typed}': no ${k} has that exact name${
      near.length ? ` (did you mean ${near.join(", ")}?)` : ""
    }.`;
  }
  const any = set.length || filter.error_class || filter.since !== null || filter.until !== null;
  return any
    ? "No dead deliveries match this filter."
    : `The DLQ of ${profile ?? "this control plane"} is empty: deliveries that exhaust their ${
        attempts ?? ""
      }${attempts ? " " : ""}attempts land here. Every delivery so far succeeded or is still being retried.`;
}
