// The DLQ explorer: filters kept in the URL (the /dlq route's search params, ui/src/router.tsx),
// a virtualized table over cursor pages fetched as you scroll (DlqTable), a "by cause" matrix,
// charts, entry detail, event lookup, and replay.
import { Alert, Badge, Button, Group, Stack, Table, Tabs, Text, Title } from "@mantine/core";
import { useNavigate, useSearch } from "@tanstack/react-router";
import { type CSSProperties, useCallback, useEffect, useMemo, useRef, useState } from "react";
import { DlqCharts } from "../components/dlq/Charts";
import { DeliveryDetail } from "../components/dlq/DeliveryDetail";
import { DlqTable } from "../components/dlq/DlqTable";
import { EventLookup } from "../components/dlq/EventLookup";
import { emptyReason, FilterBar, useKnownNames } from "../components/dlq/FilterBar";
import { ReplayDialog } from "../components/dlq/ReplayDialog";
import { answered, StaleNote, serverWait, Waiting } from "../components/StaleNote";
import type { DlqFilterInput, ErrorClass, ReplaySelectionInput } from "../ipc/bindings";
import {
  useDlqCauses,
  useDlqNewer,
  useDlqPages,
  useDlqStats,
  useSchedule,
} from "../ipc/dlqQueries";
import { useActiveProfile } from "../ipc/queries";
import {
  causeMatrix,
  DLQ_VIEW_KEY,
  type DlqView,
  isFilterEmpty,
  matchesText,
  searchToQuery,
  searchToView,
  validateDlqSearch,
  viewToQuery,
  viewToSearch,
} from "../lib/dlq";
import { windowRows } from "../lib/dlqWindow";

/**
 * The view, kept in the route's search params. The page holds it in state (a field being typed
 * in cannot wait for the router: the text would lose keys or its caret) and writes it to the
 * URL; a URL it did not write itself (a link followed while the page is open) replaces it.
 */
function useUrlView(): [DlqView, (view: DlqView) => void] {
  // Validated again: the router's search for a route also holds the params it does not know.
  const search = validateDlqSearch(useSearch({ from: "/dlq" }));
  const navigate = useNavigate();
  const [view, setView] = useState<DlqView>(() => searchToView(search));
  // The queries written and not yet seen back in `search`, oldest first.
  const written = useRef<string[]>([]);
  const seen = searchToQuery(search);
  const last = useRef(seen);
  useEffect(() => {
    if (seen === last.current) return;
    last.current = seen;
    const mine = written.current.indexOf(seen);
    if (mine >= 0) written.current = written.current.slice(mine + 1);
    else if (seen !== viewToQuery(view)) setView(searchToView(search));
  }, [seen, search, view]);
  useEffect(() => {
    const q = viewToQuery(view);
    localStorage.setItem(DLQ_VIEW_KEY, q);
    if (q === (written.current.at(-1) ?? last.current)) return;
    written.current.push(q);
    // Replace, not push: a filter change is not a page to go back to.
    navigate({ to: "/dlq", search: viewToSearch(view), replace: true });
  }, [view, navigate]);
  return [view, setView];
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

/** The rows ticked for a replay; kept by the app so they survive leaving the page. */
export type DlqSelection = {
  selected: Set<string>;
  setSelected: (update: (current: Set<string>) => Set<string>) => void;
};

function useLocalSelection(): DlqSelection {
  const [selected, set] = useState<Set<string>>(new Set());
  return { selected, setSelected: set };
}

/** Where the "N new" and "changed" notices sit: over the right end of the tab row. */
const notices: CSSProperties = {
  position: "absolute",
  right: 0,
  top: 0,
  bottom: 0,
  alignItems: "center",
};

export function DlqPage({
  onReplayStarted,
  selection,
}: {
  onReplayStarted?: (id: string) => void;
  selection?: DlqSelection;
}) {
  const [view, setView] = useUrlView();
  const [tab, setTab] = useState<string | null>("entries");
  const [open, setOpen] = useState<string | null>(null);
  const local = useLocalSelection();
  const { selected, setSelected } = selection ?? local;
  const [replay, setReplay] = useState<ReplaySelectionInput | null>(null);
  const profile = useActiveProfile();
  const total = useDlqStats("error_class", 5000);
  // The server's exact count for the filter (the whole DLQ's when there is none).
  const filtered = isFilterEmpty(view.filter) ? null : view.filter;
  const matching = useDlqStats("error_class", 5000, filtered);
  const pages = useDlqPages(view.filter);
  // Replaying needs the control plane (a dry-run count, then the session): say why it waits.
  // (Every count it acts on must have arrived: a pending query waits as a failed one does.)
  const waits = serverWait(profile, pages, total, ...(filtered ? [matching] : []));
  const known = {
    endpoint: useKnownNames("endpoint"),
    target: useKnownNames("target"),
    flow: useKnownNames("flow"),
  };

  // A changed filter is another set of rows: the ticks on the old ones go. (Not on mount: the
  // ticks survive a visit to Replays and back.)
  const shown = useRef(viewToQuery(view));
  useEffect(() => {
    const q = viewToQuery(view);
    if (q !== shown.current) setSelected(() => new Set());
    shown.current = q;
  }, [view, setSelected]);

  // The pages kept in memory (at most MAX_PAGES) and the rows dropped above them.
  const kept = useMemo(() => windowRows(pages.data?.pages), [pages.data]);
  const loaded = kept.rows;
  const texted = view.text.trim() !== "";
  const rows = useMemo(
    () => (texted ? loaded.filter((e) => matchesText(e, view.text)) : loaded),
    [loaded, texted, view.text],
  );
  // With free text, the rows dropped above are one placeholder (how many match is unknown).
  const before = texted ? (kept.firstIndex > 0 ? 1 : 0) : kept.before;
  // Every row the list has been through, kept or dropped above.
  const loadedTotal = kept.before + loaded.length;
  const toggle = useCallback(
    (id: string) =>
      setSelected((s) => {
        const n = new Set(s);
        if (n.has(id)) n.delete(id);
        else n.add(id);
        return n;
      }),
    [setSelected],
  );
  const oldestFirst = useMemo(() => [...rows].reverse().map((r) => r.delivery_id), [rows]);
  const matchCount = matching.data?.total;
  // The newest row the list has shown for this view (kept when the window moves down and
  // the top page is dropped): dead deliveries after it are new.
  const viewKey = viewToQuery(view);
  const top = pages.data?.pages[0];
  const [newest, setNewest] = useState<{ view: string; at: number | null } | null>(null);
  const topAt = top && top.index === 0 ? (top.items[0]?.dead_at ?? null) : undefined;
  useEffect(() => {
    if (topAt !== undefined) setNewest({ view: viewKey, at: topAt });
  }, [topAt, viewKey]);
  const newer = useDlqNewer(view.filter, newest?.view === viewKey ? newest.at : undefined);
  const newCount = newer.data?.total ?? 0;
  const schedule = useSchedule();
  // The list is a snapshot; the count is live. Say when they differ (new dead deliveries, or
  // some replayed away) instead of showing two numbers that disagree.
  const changed =
    matchCount !== undefined && !pages.hasNextPage && pages.data && matchCount !== loadedTotal;
  const nothing = matchCount === 0 || (pages.data && !pages.hasNextPage && loadedTotal === 0);

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
          disabled={waits !== null || !!nothing}
          data-testid="replay-filter"
          onClick={() => setReplay({ by: "filter", filter: view.filter })}
        >
          {isFilterEmpty(view.filter)
            ? "Replay the whole DLQ…"
            : "Replay everything matching this filter…"}
        </Button>
        <Button
          variant="default"
          onClick={() => pages.reload()}
          loading={pages.isRefetching}
          data-testid="dlq-refresh"
        >
          Refresh
        </Button>
        <Text size="sm" c="dimmed" data-testid="dlq-loaded">
          {!answered(pages)
            ? ""
            : texted
              ? `${rows.length} shown of the ${loaded.length} in memory${pages.hasNextPage || before ? " (more as you scroll)" : ""}`
              : `${loadedTotal} shown${pages.hasNextPage ? ` of ${loadedTotal}+ loaded (more as you scroll)` : ""}`}
          {matchCount !== undefined && filtered ? ` · ${matchCount} match the filter` : ""}
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
        {/* "N new" sits over the free end of the tab row, out of the flow: its coming and
            going moves nothing under the pointer (in the button row it wrapped the row and
            pushed the tabs and the table down). */}
        <div style={{ position: "relative" }} data-testid="dlq-tabs-row">
          <Tabs.List>
            <Tabs.Tab value="entries">Entries</Tabs.Tab>
            <Tabs.Tab value="causes" data-testid="tab-causes">
              By cause
            </Tabs.Tab>
            <Tabs.Tab value="charts" data-testid="tab-charts">
              Charts
            </Tabs.Tab>
          </Tabs.List>
          <Group gap="xs" wrap="nowrap" style={notices} data-testid="dlq-notices">
            {newCount > 0 && (
              <Button
                size="xs"
                variant="light"
                color="orange"
                onClick={() => pages.reload()}
                loading={pages.isRefetching}
                data-testid="dlq-new"
              >
                {newCount} new — show them
              </Button>
            )}
            {changed && newCount === 0 && (
              <Button
                size="xs"
                variant="light"
                color="orange"
                onClick={() => pages.reload()}
                data-testid="dlq-changed"
              >
                The DLQ changed: {matchCount} now {filtered ? "match" : "in it"} — load them
              </Button>
            )}
          </Group>
        </div>
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
            key={pages.generation}
            viewKey={viewToQuery(view)}
            rows={rows}
            before={before}
            hasNextPage={pages.hasNextPage}
            isFetchingNextPage={pages.isFetchingNextPage}
            fetchNextPage={pages.fetchNextPage}
            hasPreviousPage={pages.hasPreviousPage}
            fetchPreviousPage={pages.fetchPreviousPage}
            isFetching={pages.isFetching}
            selected={selected}
            onToggle={toggle}
            onOpen={setOpen}
            empty={
              pages.isError && !answered(pages) ? (
                `Not loaded: ${profile ?? "the control plane"} has not answered.`
              ) : answered(pages) ? (
                emptyReason(view.filter, known, profile, schedule.data?.length)
              ) : (
                <Waiting query={pages} profile={profile} what="the DLQ" testid="dlq-waiting" />
              )
            }
          />
        </Tabs.Panel>
        <Tabs.Panel value="causes">
          {tab === "causes" && (
            <CauseMatrixView
              filter={view.filter}
              onPick={(c, t) => {
                setView({
                  ...view,
                  filter: { ...view.filter, error_class: c as ErrorClass, target: t },
                });
                setTab("entries");
              }}
            />
          )}
        </Tabs.Panel>
        <Tabs.Panel value="charts">
          {tab === "charts" && (
            <DlqCharts
              filter={filtered}
              text={view.text}
              onPick={(pick) => {
                setView({ ...view, filter: { ...view.filter, ...pick } });
                setTab("entries");
              }}
            />
          )}
        </Tabs.Panel>
      </Tabs>
      <DeliveryDetail id={open} onClose={() => setOpen(null)} />
      {replay && (
        <ReplayDialog
          opened={!!replay}
          onClose={() => setReplay(null)}
          selection={replay}
          trialCandidates={replay.by === "filter" ? oldestFirst : []}
          onStarted={(id) => {
            // The ticked deliveries are being replayed: ticks left on them counted them again in
            // the next "Replay selected (N)" although they had left the list.
            if (replay.by === "ids") setSelected(() => new Set());
            onReplayStarted?.(id);
          }}
        />
      )}
    </Stack>
  );
}
