import { Badge, Box, Group, Text, TextInput, UnstyledButton } from "@mantine/core";
import { IconChevronDown, IconChevronUp, IconSearch } from "@tabler/icons-react";
import { useVirtualizer } from "@tanstack/react-virtual";
import { useMemo, useRef, useState } from "react";
import type {
  HealthGroupView,
  ManagedResource,
  MetricsWindow,
  ResourceKind,
  ResourceView,
  RetirementState,
} from "../ipc/bindings";
import { relativeTime } from "../lib/format";
import { enabled, summary } from "../lib/kinds";
import { credentialWarnings } from "../lib/rotation";
import { RowSparkline } from "./charts/lazy";
import { GitBadge } from "./gitops/GitBadge";
import { PendingBadge } from "./PendingBadge";
import { RetiringBadge, retirementOf } from "./recovery/RetiringBadge";
import { CredentialBadges } from "./rotation/CredentialBadges";

type SortKey = "name" | "summary" | "version" | "updated";
type Sort = { key: SortKey; desc: boolean };

type Column = { key: SortKey | null; label: string; width: string; kinds?: ResourceKind[] };

// Minimum widths add up to what fits at 1024 px (the main area is ~780 px there), so the Write
// badge ("Confirmed · enable") is never cut; the State column exists for endpoints only. The
// Health column (64 px: its bold header) holds a 48 px sparkline (the Spec column gave up 20 px
// of its minimum).
const allColumns: Column[] = [
  { key: "name", label: "Name", width: "minmax(120px, 1.2fr)" },
  { key: "summary", label: "Spec", width: "minmax(100px, 2fr)" },
  { key: null, label: "Health", width: "64px" },
  { key: null, label: "State", width: "96px", kinds: ["endpoint"] },
  { key: "version", label: "Version", width: "76px" },
  { key: "updated", label: "Updated", width: "92px" },
  { key: null, label: "Write", width: "minmax(196px, 1.2fr)" },
];
const columnsOf = (kind: ResourceKind) =>
  allColumns.filter((c) => !c.kinds || c.kinds.includes(kind));
const ROW_HEIGHT = 40;

function compare(a: ResourceView, b: ResourceView, key: SortKey): number {
  switch (key) {
    case "name":
      return a.name.localeCompare(b.name);
    case "summary":
      return summary(a).localeCompare(summary(b));
    case "version":
      return a.version - b.version;
    case "updated":
      return (a.updated_at ?? 0) - (b.updated_at ?? 0);
  }
}

/** Keeps the rows whose name or spec contains every word of the filter. */
export function filterResources(items: ResourceView[], filter: string): ResourceView[] {
  const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return items;
  return items.filter((item) => {
    const haystack = `${item.name} ${JSON.stringify(item.spec)}`.toLowerCase();
    return words.every((word) => haystack.includes(word));
  });
}

/** The name and its badges. In a narrow column (1024 px) the badges go to a second line under
 * the name and shrink there (their tooltip says it all): the name is never squeezed to nothing. */
function NameCell({
  resource,
  managed,
  retiring,
}: {
  resource: ResourceView;
  managed: Record<string, ManagedResource>;
  retiring?: RetirementState;
}) {
  const git = managed[`${resource.kind}/${resource.name}`];
  const badges =
    !!git || retirementOf(resource) !== null || credentialWarnings(resource, Date.now()).length > 0;
  return (
    <Group
      gap={0}
      wrap="wrap"
      style={{ minWidth: 0, columnGap: 6, rowGap: 0, lineHeight: 1.2 }}
      data-testid={`name-${resource.name}`}
    >
      <Text size="sm" fw={500} truncate style={{ maxWidth: "100%" }}>
        {resource.name}
      </Text>
      {badges && (
        <Group gap={4} wrap="nowrap" style={{ minWidth: 0, maxWidth: "100%" }}>
          <GitBadge managed={git} />
          <RetiringBadge resource={resource} state={retiring} />
          <CredentialBadges resource={resource} />
        </Group>
      )}
    </Group>
  );
}

export function ResourceTable({
  kind = "endpoint",
  items,
  onOpen,
  filterRef,
  emptyText = "Nothing here yet.",
  managed = {},
  health,
  window = "1h",
  healthStale = false,
  retirements,
}: {
  kind?: ResourceKind;
  items: ResourceView[];
  onOpen: (resource: ResourceView) => void;
  filterRef?: React.Ref<HTMLInputElement>;
  /** What an empty list means: none on the control plane, or not loaded yet. */
  emptyText?: string;
  /** Resources managed by Git, by `kind/name`: a Git (or drifted) badge by the name. */
  managed?: Record<string, ManagedResource>;
  /** Delivery health by name over `window` (one metrics call for the table); absent: not known. */
  health?: Map<string, HealthGroupView>;
  window?: MetricsWindow;
  /** `health` is the last answer, kept while the control plane does not answer. */
  healthStale?: boolean;
  /** The state of each open retirement holding one of these rows, by name. */
  retirements?: Record<string, RetirementState>;
}) {
  const columns = columnsOf(kind);
  const template = columns.map((c) => c.width).join(" ");
  const [filter, setFilter] = useState("");
  const [sort, setSort] = useState<Sort>({ key: "name", desc: false });
  const rows = useMemo(() => {
    const filtered = filterResources(items, filter);
    const sorted = [...filtered].sort((a, b) => compare(a, b, sort.key));
    return sort.desc ? sorted.reverse() : sorted;
  }, [items, filter, sort]);

  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
    initialRect: { width: 1000, height: 600 },
  });

  const toggleSort = (key: SortKey) =>
    setSort((current) => ({ key, desc: current.key === key ? !current.desc : false }));

  return (
    <Box style={{ display: "flex", flexDirection: "column", flex: 1, minHeight: 0 }}>
      <Group justify="space-between" mb="xs">
        <TextInput
          ref={filterRef}
          placeholder="Filter by name or spec (press /)"
          leftSection={<IconSearch size={16} />}
          value={filter}
          onChange={(event) => setFilter(event.currentTarget.value)}
          w={360}
          aria-label="Filter"
          data-testid="table-filter"
        />
        <Text size="sm" c="dimmed" data-testid="table-count">
          {rows.length === items.length
            ? `${items.length} total`
            : `${rows.length} of ${items.length}`}
        </Text>
      </Group>
      <Box
        role="row"
        style={{
          display: "grid",
          gridTemplateColumns: template,
          borderBottom: "1px solid var(--mantine-color-default-border)",
          padding: "6px 8px",
        }}
      >
        {columns.map((column) =>
          column.key ? (
            <UnstyledButton
              key={column.label}
              onClick={() => column.key && toggleSort(column.key)}
              role="columnheader"
              aria-sort={
                sort.key === column.key ? (sort.desc ? "descending" : "ascending") : "none"
              }
            >
              <Group gap={4} wrap="nowrap">
                <Text size="sm" fw={600}>
                  {column.label}
                </Text>
                {sort.key === column.key &&
                  (sort.desc ? <IconChevronDown size={14} /> : <IconChevronUp size={14} />)}
              </Group>
            </UnstyledButton>
          ) : (
            <Text key={column.label} size="sm" fw={600} role="columnheader">
              {column.label}
            </Text>
          ),
        )}
      </Box>
      <div
        ref={scrollRef}
        style={{ flex: 1, minHeight: 200, overflow: "auto" }}
        data-testid="resource-rows"
      >
        {rows.length === 0 && (
          <Text c="dimmed" p="md" data-testid="table-empty">
            {items.length === 0 ? emptyText : "No rows match the filter."}
          </Text>
        )}
        <div style={{ height: virtualizer.getTotalSize(), position: "relative" }}>
          {virtualizer.getVirtualItems().map((virtual) => {
            const resource = rows[virtual.index];
            const on = enabled(resource);
            return (
              <UnstyledButton
                key={resource.name}
                role="row"
                data-testid={`row-${resource.name}`}
                onClick={() => onOpen(resource)}
                className="resource-row"
                style={{
                  position: "absolute",
                  top: 0,
                  left: 0,
                  right: 0,
                  height: ROW_HEIGHT,
                  transform: `translateY(${virtual.start}px)`,
                  display: "grid",
                  gridTemplateColumns: template,
                  alignItems: "center",
                  padding: "0 8px",
                  borderBottom: "1px solid var(--mantine-color-default-border)",
                }}
              >
                <NameCell
                  resource={resource}
                  managed={managed}
                  retiring={retirements?.[resource.name]}
                />
                <Text size="sm" c="dimmed" truncate>
                  {summary(resource)}
                </Text>
                <div>
                  {health && (
                    <RowSparkline
                      group={health.get(resource.name)}
                      window={window}
                      stale={healthStale}
                    />
                  )}
                </div>
                {kind === "endpoint" && (
                  <div>
                    {on === null ? null : (
                      <Badge size="sm" variant="dot" color={on ? "green" : "gray"}>
                        {on ? "enabled" : "disabled"}
                      </Badge>
                    )}
                  </div>
                )}
                <Text size="sm">{resource.version || "—"}</Text>
                <Text size="sm" c="dimmed">
                  {resource.updated_at ? relativeTime(resource.updated_at) : "—"}
                </Text>
                <div>
                  <PendingBadge pending={resource.pending} />
                </div>
              </UnstyledButton>
            );
          })}
        </div>
      </div>
    </Box>
  );
}
