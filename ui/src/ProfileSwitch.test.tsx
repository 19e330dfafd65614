// Switching control planes: no page may show the previous control plane's data under the new
// name, and data of the same control plane that could not be refreshed says how old it is.
import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { App } from "./App";
import type {
  DlqEntryView,
  IpcError,
  Overview,
  ReplaySessionView,
  ResourceView,
  SyncStatus,
} from "./ipc/bindings";
import { mockCommands, renderUi, resource, sandboxProfile } from "./test/render";

const offline: IpcError = {
  code: "offline",
  message: 'cannot reach the control plane of profile "offline-cp": connection refused',
  problem: null,
};

const entry = (i: number): DlqEntryView => ({
  delivery_id: `dlv_sandbox_${i}`,
  event_id: `evt_${i}`,
  event_type: "payment.failed",
  endpoint: "payments",
  flow: "payments-to-erp",
  target: "legacy-erp",
  error_class: "http_5xx",
  last_status_code: 500,
  attempts: 5,
  dead_at: Date.now() - i * 1000,
  replay_session: null,
});

const session: ReplaySessionView = {
  id: "rpl_sandbox_trial",
  status: "completed",
  selection: "10 selected deliveries",
  rate_per_s: 1,
  created_at: Date.now() - 60_000,
  cancelled_at: null,
  counts: { total: 10, succeeded: 0, failed: 10, pending: 0, cancelled: 0, skipped: 0 },
  items: [],
};

const overviewOf = (profile: string, endpoints: number): Overview => ({
  profile,
  endpoints,
  targets: endpoints,
  flows: endpoints,
  disabled_endpoints: 0,
  refreshed_at: 1_700_000_000_000,
  pending: 0,
  needs_attention: 0,
  recent: [],
});

/**
 * Two control planes behind the mocked core: `sandbox` answers (unless `sandboxDown`), and
 * `offline-cp` never does. A command answers for the profile it names — or, as a command that
 * names none would, for whichever profile the core has active.
 */
function twoPlanes() {
  const world = { active: "sandbox", sandboxDown: false };
  const who = (args: { profile?: string | null }) => args.profile ?? world.active;
  const server = <T,>(args: { profile?: string | null }, answer: () => T): T => {
    if (who(args) === "offline-cp" || world.sandboxDown) throw offline;
    return answer();
  };
  const status = (): SyncStatus => ({
    profile: world.active,
    online: world.active === "sandbox",
    last_sync_at: world.active === "sandbox" ? Date.now() - 1000 : null,
    pending: 0,
    needs_attention: 0,
    syncing: false,
    round_done: 0,
    round_total: 0,
    offline_reason: world.active === "sandbox" ? null : "connection refused",
  });
  const endpoints: ResourceView[] = [resource({ name: "payments" })];
  const profiles = () => [
    sandboxProfile({ active: world.active === "sandbox" }),
    sandboxProfile({
      name: "offline-cp",
      url: "http://127.0.0.1:9",
      sandbox: false,
      active: world.active === "offline-cp",
    }),
  ];
  const calls = mockCommands({
    list_profiles: profiles,
    activate_profile: ({ name }) => {
      world.active = name;
      return sandboxProfile({ name, sandbox: name === "sandbox", active: true });
    },
    sync_status: status,
    ui_ready: () => 1,
    check_health: (args) => ({
      ok: who(args) === "sandbox",
      latency_ms: 1,
      server_version: "0.1.0",
      role: null,
      error: who(args) === "sandbox" ? null : "connection refused",
    }),
    overview: (args) => overviewOf(who(args), who(args) === "sandbox" ? 3 : 0),
    list_resources: (args) => (who(args) === "sandbox" ? endpoints : []),
    list_outbox: () => [],
    list_audit: () => [],
    dlq_stats: (args) => server(args, () => ({ total: 98, groups: [] })),
    dlq_page: (args) => server(args, () => ({ items: [1, 2, 3].map(entry), next_cursor: null })),
    list_replays: (args) => server(args, () => [session]),
    list_replay_writes: (args) => server(args, () => []),
  });
  return { world, calls, profiles };
}

const switchTo = async (name: string) => {
  fireEvent.click(screen.getByTestId("profile-switcher"));
  fireEvent.click(await screen.findByTestId(`profile-${name}`));
  await waitFor(() => expect(screen.getByTestId("profile-switcher")).toHaveTextContent(name));
};

describe("switching control planes", () => {
  it("shows no page of the previous control plane's data under an unreachable one's name", async () => {
    window.history.replaceState(null, "", "#");
    localStorage.clear();
    const { profiles } = twoPlanes();
    renderUi(<App />, profiles());
    fireEvent.click(screen.getByTestId("nav-dlq"));
    // The DLQ page's script loads on first use (router.tsx): its first import here is slow.
    await waitFor(() => expect(screen.getAllByTestId("dlq-row")).toHaveLength(3), {
      timeout: 5000,
    });
    expect(screen.getByTestId("dlq-total")).toHaveTextContent("98");
    fireEvent.click(screen.getByTestId("nav-replays"));
    expect(await screen.findByText("rpl_sandbox_trial")).toBeInTheDocument();

    await switchTo("offline-cp");

    // Replays: the sandbox's session is gone; the page says the control plane does not answer.
    await waitFor(() => expect(screen.queryByText("rpl_sandbox_trial")).toBeNull());
    expect(await screen.findByTestId("replays-error")).toHaveTextContent("offline-cp");
    // DLQ: no sandbox rows or count, and replaying says why it waits.
    fireEvent.click(screen.getByTestId("nav-dlq"));
    await waitFor(() => expect(screen.queryAllByTestId("dlq-row")).toHaveLength(0));
    expect(await screen.findByTestId("dlq-error")).toHaveTextContent("offline-cp");
    expect(screen.getByTestId("dlq-total")).not.toHaveTextContent("98");
    expect(screen.getByTestId("replay-filter")).toBeDisabled();
    expect(screen.getByTestId("replay-waits")).toHaveTextContent("Waits for offline-cp");
    // Overview and endpoints: the offline profile's own (empty) cache, not the sandbox's.
    fireEvent.click(screen.getByTestId("nav-overview"));
    await waitFor(() => expect(screen.getByTestId("stat-endpoints")).toHaveTextContent("0"));
    fireEvent.click(screen.getByTestId("nav-endpoint"));
    await waitFor(() => expect(screen.getByTestId("table-count")).toHaveTextContent("0 total"));
    expect(screen.queryByTestId("row-payments")).toBeNull();
    expect(document.body.textContent).not.toContain("legacy-erp");
  }, 20_000);

  it("marks the same control plane's data as last fetched when a refresh fails", async () => {
    window.history.replaceState(null, "", "#");
    localStorage.clear();
    const { world, profiles } = twoPlanes();
    renderUi(<App />, profiles());
    fireEvent.click(screen.getByTestId("nav-dlq"));
    // The DLQ page's script loads on first use (router.tsx): its first import here is slow.
    await waitFor(() => expect(screen.getAllByTestId("dlq-row")).toHaveLength(3), {
      timeout: 5000,
    });
    expect(screen.queryByTestId("stale-note")).toBeNull();

    world.sandboxDown = true;
    fireEvent.click(screen.getByTestId("dlq-refresh"));
    const note = await screen.findByTestId("stale-note");
    expect(note).toHaveTextContent(/Last fetched .* from sandbox; refreshing failed/);
    // The rows are the sandbox's own, kept; replaying them waits for an answer.
    expect(screen.getAllByTestId("dlq-row")).toHaveLength(3);
    expect(within(screen.getByTestId("dlq-scroll")).getAllByText("legacy-erp")).toHaveLength(3);
    expect(screen.getByTestId("replay-filter")).toBeDisabled();
  }, 20_000);
});
