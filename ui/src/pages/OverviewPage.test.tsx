import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { App } from "../App";
import type {
  DeliveryHealthView,
  HealthGroupView,
  MetricsWindow,
  Overview,
  SyncStatus,
} from "../ipc/bindings";
import { figures, group, NOW, report } from "../test/health";
import { mockCommands, renderUi, resource } from "../test/render";
import { OverviewPage } from "./OverviewPage";

const overview: Overview = {
  profile: "sandbox",
  endpoints: 3,
  targets: 5,
  flows: 5,
  disabled_endpoints: 0,
  refreshed_at: 1_700_000_000_000,
  pending: 2,
  needs_attention: 1,
  recent: [],
};

function metrics(
  window: MetricsWindow,
  groups: HealthGroupView[],
  totals: Partial<DeliveryHealthView["totals"]> = {},
): DeliveryHealthView {
  const base = report(window, "target", groups);
  return { ...base, totals: { ...base.totals, ...totals } };
}

// crm and erp share a success rate: erp has the longer run of failures, so it comes first.
const ranked = [
  group("healthy", 20, 0),
  group("crm", 10, 5, { consecutive_failures: 2 }),
  group("erp", 10, 5, { consecutive_failures: 7 }),
  group("legacy", 10, 9),
];

beforeEach(() => {
  localStorage.clear();
  window.history.replaceState(null, "", "#");
});

describe("OverviewPage", () => {
  it("the DLQ tile shows the control plane's own count", async () => {
    mockCommands({
      overview: () => overview,
      dlq_stats: ({ groupBy }) => ({
        total: 42,
        groups:
          groupBy === "hour"
            ? [
                { key: new Date(Math.floor(NOW / 3_600_000) * 3_600_000).toISOString(), count: 2 },
                {
                  key: new Date(Math.floor(NOW / 3_600_000 - 3) * 3_600_000).toISOString(),
                  count: 5,
                },
              ]
            : [],
      }),
      delivery_metrics: ({ window }) => metrics(window, []),
    });
    renderUi(<OverviewPage />);
    await waitFor(() => expect(screen.getByTestId("stat-dlq-value")).toHaveTextContent("42"));
    expect(screen.getByTestId("stat-dlq-hint")).toHaveTextContent("dead deliveries (exact)");
    // Its trend: the server's counts per hour.
    await waitFor(() =>
      // (Only the 24 h figure: "this hour" moves if the test runs across an hour's end.)
      expect(screen.getByTestId("stat-dlq-trend")).toHaveTextContent("7 died in the last 24 h"),
    );
    // The console's own outbox state stays on the overview.
    expect(screen.getByTestId("stat-pending-value")).toHaveTextContent("2");
    expect(screen.getByTestId("stat-attention-value")).toHaveTextContent("1");
  });

  it("shows the window's success rate, attempts, pending with the oldest's age, in flight, replays", async () => {
    mockCommands({
      overview: () => overview,
      dlq_stats: () => ({ total: 0, groups: [] }),
      delivery_metrics: ({ window }) => metrics(window, []),
    });
    renderUi(<OverviewPage />);
    await waitFor(() =>
      expect(screen.getByTestId("health-success-rate-value")).toHaveTextContent("75 %"),
    );
    expect(screen.getByTestId("health-success-rate-hint")).toHaveTextContent(
      "30 of 40 attempts succeeded",
    );
    expect(screen.getByTestId("health-attempts-value")).toHaveTextContent("40");
    expect(screen.getByTestId("health-attempts-hint")).toHaveTextContent("10 failed · p95 180 ms");
    expect(screen.getByTestId("health-pending-value")).toHaveTextContent("3");
    expect(screen.getByTestId("health-pending-hint")).toHaveTextContent("oldest created 4 min ago");
    expect(screen.getByTestId("health-in-flight-value")).toHaveTextContent("1");
    expect(screen.getByTestId("health-replays-value")).toHaveTextContent("1");
    expect(screen.getByTestId("health-chart")).toHaveTextContent(
      "Attempts and failures, the last hour (per 2 min)",
    );
    expect(screen.getByTestId("failing-empty")).toHaveTextContent(
      "No target failed in the last hour.",
    );
  });

  it("ranks the failing targets and links each to the DLQ filtered to it and to its drawer", async () => {
    mockCommands({
      overview: () => overview,
      dlq_stats: () => ({ total: 24, groups: [] }),
      delivery_metrics: ({ window }) => metrics(window, ranked),
    });
    const onOpenDlq = vi.fn();
    const onOpenTarget = vi.fn();
    renderUi(<OverviewPage onOpenDlq={onOpenDlq} onOpenTarget={onOpenTarget} />);
    const table = await screen.findByTestId("failing-table");
    const order = within(table)
      .getAllByRole("row")
      .slice(1)
      .map((row) => row.getAttribute("data-testid"));
    expect(order).toEqual(["failing-row-legacy", "failing-row-erp", "failing-row-crm"]);
    // A target without a failure in the window is not a failing target.
    expect(screen.queryByTestId("failing-row-healthy")).toBeNull();
    expect(screen.getByTestId("rate-legacy")).toHaveTextContent("10 %");
    expect(screen.getByTestId("streak-erp")).toHaveTextContent("7");
    expect(screen.getByTestId("since-erp")).toHaveTextContent("7 min ago");
    expect(screen.getByTestId("failing-row-erp")).toHaveTextContent("HTTP 5xx");
    expect(screen.getByTestId("failing-row-erp")).toHaveTextContent("503 Service Unavailable");

    fireEvent.click(screen.getByTestId("failing-dlq-erp"));
    expect(onOpenDlq).toHaveBeenCalledWith("erp");
    fireEvent.click(screen.getByTestId("failing-target-crm"));
    expect(onOpenTarget).toHaveBeenCalledWith("crm");

    // The table filters by name.
    fireEvent.change(screen.getByTestId("failing-filter"), { target: { value: "leg" } });
    expect(screen.queryByTestId("failing-row-erp")).toBeNull();
    expect(screen.getByTestId("failing-row-legacy")).toBeInTheDocument();
  });

  it("shows figures the server cannot compute as — with the reason, never as 0", async () => {
    const unknown = group("crm", 4, 4, {
      consecutive_failures: null,
      failing_since: null,
      figures: figures(4, 4, { success_rate: null }),
    });
    mockCommands({
      overview: () => overview,
      dlq_stats: () => ({ total: 0, groups: [] }),
      delivery_metrics: ({ window }) =>
        metrics(window, [unknown], {
          figures: figures(0, 0),
          deliveries_pending: 3,
          oldest_pending_at: null,
        }),
    });
    renderUi(<OverviewPage />);
    await waitFor(() =>
      expect(screen.getByTestId("health-success-rate-value")).toHaveTextContent("—"),
    );
    expect(screen.getByTestId("health-success-rate-value")).not.toHaveTextContent("0");
    expect(screen.getByTestId("health-success-rate-hint")).toHaveTextContent(
      "no attempts in the last hour",
    );
    expect(screen.getByTestId("health-attempts-hint")).toHaveTextContent("p95 —");
    expect(screen.getByTestId("health-pending-hint")).toHaveTextContent("oldest: — (not reported)");
    expect(screen.getByTestId("rate-crm")).toHaveTextContent(/^—$/);
    expect(screen.getByTestId("streak-crm")).toHaveTextContent(/^—$/);
    expect(screen.getByTestId("streak-crm")).toHaveAttribute(
      "aria-label",
      expect.stringContaining("no attempt recorded"),
    );
    expect(screen.getByTestId("since-crm")).toHaveTextContent(/^—$/);
    expect(screen.getByTestId("health-chart-empty")).toHaveTextContent("No delivery attempt");
  });

  it("keeps the last figures, marked stale, when the control plane stops answering", async () => {
    let answering = true;
    mockCommands({
      overview: () => overview,
      dlq_stats: () => ({ total: 5, groups: [] }),
      delivery_metrics: ({ window }) => {
        if (!answering) throw { code: "offline", message: "connection refused", problem: null };
        return metrics(window, ranked);
      },
    });
    const { client } = renderUi(<OverviewPage />);
    await waitFor(() =>
      expect(screen.getByTestId("health-attempts-value")).toHaveTextContent("40"),
    );
    expect(screen.getByTestId("health-freshness")).toHaveAttribute("data-state", "fresh");
    expect(screen.getByTestId("health-freshness")).toHaveTextContent(
      /updated (just now|\d+ s ago)/,
    );

    answering = false;
    await client.refetchQueries({ queryKey: ["p", "sandbox", "metrics"] });
    await waitFor(() =>
      expect(screen.getByTestId("health-freshness")).toHaveAttribute("data-state", "stale"),
    );
    expect(screen.getByTestId("health-freshness")).toHaveTextContent(
      /Last fetched .*; sandbox does not answer \(connection refused\)/,
    );
    // The last figures stay, with the failing targets.
    expect(screen.getByTestId("health-attempts-value")).toHaveTextContent("40");
    expect(screen.getByTestId("failing-row-legacy")).toBeInTheDocument();
  });

  it("says why there are no figures when the control plane never answered", async () => {
    mockCommands({
      overview: () => overview,
      dlq_stats: () => ({ total: 5, groups: [] }),
      delivery_metrics: () => {
        throw { code: "offline", message: "connection refused", problem: null };
      },
    });
    renderUi(<OverviewPage />);
    await waitFor(() =>
      expect(screen.getByTestId("health-freshness")).toHaveAttribute("data-state", "missing"),
    );
    expect(screen.getByTestId("health-freshness")).toHaveTextContent(
      "Not loaded: sandbox does not answer (connection refused)",
    );
    expect(screen.getByTestId("health-attempts-value")).toHaveTextContent("—");
  });

  it("the window picker asks for that window, and the empty state names it", async () => {
    const calls = mockCommands({
      overview: () => overview,
      dlq_stats: () => ({ total: 0, groups: [] }),
      delivery_metrics: ({ window }) => metrics(window, window === "1h" ? ranked : []),
    });
    renderUi(<OverviewPage />);
    await screen.findByTestId("failing-table");
    expect(calls).toContainEqual([
      "delivery_metrics",
      { profile: "sandbox", window: "1h", groupBy: "target" },
    ]);
    fireEvent.click(screen.getByRole("radio", { name: "24 h" }));
    await waitFor(() =>
      expect(screen.getByTestId("failing-empty")).toHaveTextContent(
        "No target failed in the last 24 hours.",
      ),
    );
    expect(calls).toContainEqual([
      "delivery_metrics",
      { profile: "sandbox", window: "24h", groupBy: "target" },
    ]);
    expect(localStorage.getItem("overview-window")).toBe("24h");
  });

  it("never shows another profile's figures", async () => {
    const calls = mockCommands({
      overview: () => ({ ...overview, profile: "prod" }),
      dlq_stats: () => ({ total: 0, groups: [] }),
      delivery_metrics: ({ profile, window }) => metrics(window, profile === "prod" ? [] : ranked),
    });
    const { client } = renderUi(<OverviewPage />, [
      {
        name: "prod",
        url: "https://prod",
        sandbox: false,
        active: true,
        has_token: true,
        pending: 0,
        needs_attention: 0,
      },
    ]);
    // The sandbox's figures are in the cache, but the page asks for and shows prod's.
    client.setQueryData(
      ["p", "sandbox", "metrics", "deliveries", "1h", "target"],
      metrics("1h", ranked),
    );
    await waitFor(() =>
      expect(screen.getByTestId("failing-empty")).toHaveTextContent(
        "No target failed in the last hour.",
      ),
    );
    expect(calls.filter(([c]) => c === "delivery_metrics").map(([, a]) => a)).toEqual([
      { profile: "prod", window: "1h", groupBy: "target" },
    ]);
  });
});

describe("Overview in the app", () => {
  const status: SyncStatus = {
    profile: "sandbox",
    online: true,
    last_sync_at: NOW,
    pending: 0,
    needs_attention: 0,
    syncing: false,
    round_done: 0,
    round_total: 0,
    offline_reason: null,
  };

  it("a failing target's Target link opens its drawer on the Targets page", async () => {
    const calls = mockCommands({
      sync_status: () => status,
      overview: () => overview,
      check_health: () => ({
        ok: true,
        latency_ms: 1,
        server_version: "0.1.0",
        role: null,
        error: null,
      }),
      ui_ready: () => 1,
      dlq_stats: () => ({ total: 24, groups: [] }),
      delivery_metrics: ({ window }) => metrics(window, ranked),
      list_resources: () => [resource({ kind: "target", name: "crm" })],
      get_resource: ({ kind, name }) => resource({ kind, name }),
      resource_history: () => [],
      gitops_managed: () => [],
      dependants: () => [],
    });
    renderUi(<App />);
    fireEvent.click(await screen.findByTestId("failing-target-crm"));
    await waitFor(() => expect(document.body.textContent).toContain("Target crm"));
    expect(calls).toContainEqual([
      "get_resource",
      { profile: "sandbox", kind: "target", name: "crm" },
    ]);
  });

  it("a failing target's DLQ link opens the DLQ filtered to that target", async () => {
    const calls = mockCommands({
      sync_status: () => status,
      overview: () => overview,
      check_health: () => ({
        ok: true,
        latency_ms: 1,
        server_version: "0.1.0",
        role: null,
        error: null,
      }),
      ui_ready: () => 1,
      dlq_stats: () => ({ total: 24, groups: [] }),
      delivery_metrics: ({ window }) => metrics(window, ranked),
      dlq_page: () => ({ items: [], next_cursor: null }),
      list_resources: () => [],
      list_replay_writes: () => [],
    });
    renderUi(<App />);
    fireEvent.click(await screen.findByTestId("failing-dlq-erp"));
    await waitFor(() => expect(screen.getByTestId("filter-target")).toHaveValue("erp"));
    expect(window.location.hash).toBe("#/dlq?target=erp");
    await waitFor(() =>
      expect(
        calls.some(
          ([c, a]) =>
            c === "dlq_page" && (a as { filter: { target: string } }).filter.target === "erp",
        ),
      ).toBe(true),
    );
  });
});
