// The DLQ explorer: filters kept in the URL, a virtualized table over cursor pages fetched as
// you scroll (DlqTable), a "by cause" matrix, charts, entry detail, event lookup, and replay.
import {
  Alert,
  Badge,
  Button,
  Group,
  Select,
  Stack,
  Table,
  Tabs,
  Text,
  TextInput,
  Title,
} from "@mantine/core";
import { useCallback, useEffect, useMemo, useState } from "react";
import { DlqCharts } from "../components/dlq/Charts";
import { DeliveryDetail } from "../components/dlq/DeliveryDetail";
import { DlqTable } from "../components/dlq/DlqTable";
import { EventLookup } from "../components/dlq/EventLookup";
import { ReplayDialog } from "../components/dlq/ReplayDialog";
import { StaleNote, serverWait } from "../components/StaleNote";
import type { DlqFilterInput, FailureClass, ReplaySelectionInput } from "../ipc/bindings";
import { useDlqCauses, useDlqPages, useDlqStats } from "../ipc/dlqQueries";
import { useActiveProfile } from "../ipc/queries";
import {
  causeMatrix,
  type DlqView,
  failureClasses,
  isFilterEmpty,
  matchesText,
  queryToView,
  viewToQuery,
} from "../lib/dlq";

const HASH = "#dlq?";

function initialView(): DlqView {
  if (window.location.hash.startsWith(HASH))
    return queryToView(window.location.hash.slice(HASH.length));
  return queryToView(localStorage.getItem("dlq-view") ?? "");
}

const toMs = (local: string) => (local ? Date.parse(local) : Number.NaN);
const toLocal = (ms: number | null) =>
  ms === null
    ? ""
    : new Date(ms - new Date(ms).getTimezoneOffset() * 60_000).toISOString().slice(0, 16);

export function FilterBar({ view, onChange }: { view: DlqView; onChange: (v: DlqView) => void }) {
  const set = (patch: Partial<DlqFilterInput>) =>
    onChange({ ...view, filter: { ...view.filter, ...patch } });
  const text = (key: "endpoint" | "target" | "flow") => (
    <TextInput
      w={130}
      placeholder={key}
      aria-label={key}
      value={view.filter[key] ?? ""}
      onChange={(e) => set({ [key]: e.currentTarget.value || null })}
      data-testid={`filter-${key}`}
    />
  );
  return (
    <Group gap="xs" wrap="wrap">
      {text("endpoint")}
      {text("target")}
      {text("flow")}
      <Select
        w={130}
        placeholder="error class"
        aria-label="error class"
        clearable
        data={failureClasses}
        value={view.filter.error_class}
        onChange={(v) => set({ error_class: (v as FailureClass) ?? null })}
        data-testid="filter-error-class"
      />
      <TextInput
        type="datetime-local"
        aria-label="since"
        value={toLocal(view.filter.since)}
        onChange={(e) => {
          const ms = toMs(e.currentTarget.value);
          set({ since: Number.isNaN(ms) ? null : ms });
        }}
      />
      <TextInput
        type="datetime-local"
        aria-label="until"
        value={toLocal(view.filter.until)}
        onChange={(e) => {
          const ms = toMs(e.currentTarget.value);
          set({ until: Number.isNaN(ms) ? null : ms });
        }}
      />
      <TextInput
        w={200}
        placeholder="event type / id (loaded rows)"
        aria-label="text"
        value={view.text}
        onChange={(e) => onChange({ ...view, text: e.currentTarget.value })}
        data-testid="filter-text"
      />
    </Group>
  );
}

export function CauseMatrixView({
  filter,
  onPick,
}: {
  filter: DlqFilterInput;
  onPick: (cls: string, target: string) => void;
}) {
  const causes = useDlqCauses(filter);
  if (causes.isError) return <Alert color="red">{causes.error.message}</Alert>;
  const m = causeMatrix(causes.data ?? []);
  return (
    <Table withTableBorder withColumnBorders data-testid="cause-matrix">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>error class \ target</Table.Th>
          {m.targets.map((t) => (
            <Table.Th key={t}>{t}</Table.Th>
          ))}
          <Table.Th>total</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {m.classes.map((c) => (
          <Table.Tr key={c}>
            <Table.Td fw={500}>{c}</Table.Td>
            {m.targets.map((t) => (
              <Table.Td
                key={t}
                style={{ cursor: m.count(c, t) ? "pointer" : undefined }}
                onClick={() => m.count(c, t) && onPick(c, t)}
                data-testid={`cause-${c}-${t}`}
              >
                {m.count(c, t) || ""}
              </Table.Td>
            ))}
            <Table.Td fw={500}>{m.classTotal[c]}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

export function DlqPage({ onReplayStarted }: { onReplayStarted?: (id: string) => void }) {
  const [view, setView] = useState<DlqView>(initialView);
  const [tab, setTab] = useState<string | null>("entries");
  const [open, setOpen] = useState<string | null>(null);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [replay, setReplay] = useState<ReplaySelectionInput | null>(null);
  const profile = useActiveProfile();
  const total = useDlqStats("error_class", 5000);
  const pages = useDlqPages(view.filter);
  // Replaying needs the control plane (a dry-run count, then the session): say why it waits.
  const waits = serverWait(profile, pages, total);

  useEffect(() => {
    const q = viewToQuery(view);
    localStorage.setItem("dlq-view", q);
    window.history.replaceState(null, "", `${HASH}${q}`);
    setSelected(new Set());
  }, [view]);

  const loaded = useMemo(() => pages.data?.pages.flatMap((p) => p.items) ?? [], [pages.data]);
  const rows = useMemo(() => loaded.filter((e) => matchesText(e, view.text)), [loaded, view.text]);
  const toggle = useCallback(
    (id: string) =>
      setSelected((s) => {
        const n = new Set(s);
        if (n.has(id)) n.delete(id);
        else n.add(id);
        return n;
      }),
    [],
  );
  const oldestFirst = useMemo(() => [...rows].reverse().map((r) => r.delivery_id), [rows]);

  return (
    <Stack style={{ flex: 1, minHeight: 0 }} gap="sm">
      <Group justify="space-between">
        <Group gap="xs">
          <Title order={3}>Dead-letter queue</Title>
          <Badge
            size="lg"
            color={total.data ? "red" : "gray"}
            data-testid="dlq-total"
            title={total.isError ? total.error.message : "dead deliveries, exact (server count)"}
          >
            {total.data?.total ?? (total.isError ? "—" : "…")}
          </Badge>
        </Group>
        <EventLookup onDelivery={setOpen} />
      </Group>
      <FilterBar view={view} onChange={setView} />
      <Group gap="xs">
        <Button
          disabled={selected.size === 0 || waits !== null}
          data-testid="replay-selected"
          onClick={() => setReplay({ by: "ids", delivery_ids: [...selected] })}
        >
          Replay selected ({selected.size})
        </Button>
        <Button
          variant="light"
          disabled={waits !== null}
          data-testid="replay-filter"
          onClick={() => setReplay({ by: "filter", filter: view.filter })}
        >
          {isFilterEmpty(view.filter)
            ? "Replay the whole DLQ…"
            : "Replay everything matching this filter…"}
        </Button>
        <Button
          variant="default"
          onClick={() => pages.refetch()}
          loading={pages.isRefetching}
          data-testid="dlq-refresh"
        >
          Refresh
        </Button>
        <Text size="sm" c="dimmed" data-testid="dlq-loaded">
          {rows.length} shown
          {pages.hasNextPage ? ` of ${loaded.length}+ loaded (more as you scroll)` : ""}
        </Text>
      </Group>
      {waits && (
        <Text size="sm" c="dimmed" data-testid="replay-waits">
          Replay: {waits}
        </Text>
      )}
      <Tabs
        value={tab}
        onChange={setTab}
        style={{ flex: 1, minHeight: 0, display: "flex", flexDirection: "column" }}
      >
        <Tabs.List>
          <Tabs.Tab value="entries">Entries</Tabs.Tab>
          <Tabs.Tab value="causes" data-testid="tab-causes">
            By cause
          </Tabs.Tab>
          <Tabs.Tab value="charts" data-testid="tab-charts">
            Charts
          </Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel
          value="entries"
          style={{ flex: 1, minHeight: 0, display: "flex", flexDirection: "column" }}
        >
          <StaleNote query={pages} profile={profile} />
          {pages.isError && pages.data === undefined && (
            <Alert color="red" data-testid="dlq-error">
              {pages.error.message}
            </Alert>
          )}
          <DlqTable
            rows={rows}
            hasNextPage={pages.hasNextPage}
            isFetchingNextPage={pages.isFetchingNextPage}
            fetchNextPage={pages.fetchNextPage}
            selected={selected}
            onToggle={toggle}
            onOpen={setOpen}
          />
        </Tabs.Panel>
        <Tabs.Panel value="causes">
          {tab === "causes" && (
            <CauseMatrixView
              filter={view.filter}
              onPick={(c, t) => {
                setView({
                  ...view,
                  filter: { ...view.filter, error_class: c as FailureClass, target: t },
                });
                setTab("entries");
              }}
            />
          )}
        </Tabs.Panel>
        <Tabs.Panel value="charts">{tab === "charts" && <DlqCharts />}</Tabs.Panel>
      </Tabs>
      <DeliveryDetail id={open} onClose={() => setOpen(null)} />
      {replay && (
        <ReplayDialog
          opened={!!replay}
          onClose={() => setReplay(null)}
          selection={replay}
          trialCandidates={replay.by === "filter" ? oldestFirst : []}
          onStarted={(id) => onReplayStarted?.(id)}
        />
      )}
    </Stack>
  );
}
