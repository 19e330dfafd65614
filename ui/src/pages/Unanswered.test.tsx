// Every page against a control plane that accepts the connection and never answers: no page
// says "empty", "0" or "nothing" before an answer, no action that acts on a count is enabled,
// and after a few seconds the page says how long it has waited.
import { act, screen, waitFor } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SILENT_AFTER_MS } from "../components/StaleNote";
import { mockCommands, overviewOf, renderUi, sandboxProfile, unanswered } from "../test/render";
import { renderAt } from "../test/router";
import { OverviewPage } from "./OverviewPage";
import { RecoveryPage } from "./RecoveryPage";
import { ReplaysPage } from "./ReplaysPage";

const hung = sandboxProfile({ name: "hung-cp", sandbox: false });

/** Moves the clock on by `ms` (timers stay real: the pages' one-second ticks run). */
async function waitedFor(ms: number) {
  await act(async () => {
    vi.setSystemTime(Date.now() + ms);
    await new Promise((resolve) => setTimeout(resolve, 1_200));
  });
}

beforeEach(() => {
  localStorage.clear();
  vi.useFakeTimers({ toFake: ["Date"] });
});
afterEach(() => vi.useRealTimers());

describe("a control plane that never answers", () => {
  it("the DLQ says it waits, never that it is empty, and replay stays disabled", async () => {
    mockCommands({
      dlq_page: () => unanswered(),
      dlq_stats: () => unanswered(),
      dlq_causes: () => unanswered(),
      retry_schedule: () => unanswered(),
      list_resources: () => [],
    });
    await renderAt("/dlq", [hung]);
    // (The page's script loads on first use: its first render can take seconds.)
    expect(await screen.findByTestId("dlq-waiting", {}, { timeout: 10_000 })).toHaveTextContent(
      "Asking hung-cp…",
    );
    expect(screen.queryByTestId("dlq-empty")).toBeNull();
    expect(screen.queryByText(/is empty/)).toBeNull();
    expect(screen.getByTestId("replay-filter")).toBeDisabled();
    expect(screen.getByTestId("replay-selected")).toBeDisabled();
    expect(screen.getByTestId("replay-waits")).toHaveTextContent("Waits for hung-cp to answer");
    expect(screen.getByTestId("dlq-total")).toHaveTextContent("…");
    expect(screen.getByTestId("dlq-loaded")).not.toHaveTextContent("shown");
    await waitedFor(12_000);
    expect(screen.getByTestId("dlq-waiting")).toHaveTextContent(
      "hung-cp has not answered for 12 s",
    );
    expect(screen.queryByTestId("dlq-empty")).toBeNull();
    expect(screen.getByTestId("replay-filter")).toBeDisabled();
  }, 30_000);

  it("the DLQ badge keeps its count when everything is refreshed while the list waits", async () => {
    mockCommands({
      dlq_page: () => unanswered(),
      dlq_stats: () => ({ total: 7, groups: [] }),
      dlq_causes: () => unanswered(),
      retry_schedule: () => unanswered(),
      list_resources: () => [],
    });
    const { client } = await renderAt("/dlq", [hung]);
    const badge = await screen.findByTestId("dlq-total", {}, { timeout: 10_000 });
    await waitFor(() => expect(badge).toHaveTextContent("7"));
    // What a core event or a write's invalidation does: every query of the profile again.
    // (Not awaited: the list's refetch never ends.)
    await act(async () => {
      void client.invalidateQueries({ queryKey: ["p", "hung-cp"] });
      await new Promise((resolve) => setTimeout(resolve, 300));
    });
    expect(badge).toHaveTextContent("7");
    expect(badge.getAttribute("title")).not.toMatch(/Missing queryFn/);
    expect(screen.queryByText(/Missing queryFn/)).toBeNull();
  }, 30_000);

  it("Replays says it waits instead of a blank list or 'no sessions'", async () => {
    mockCommands({ list_replays: () => unanswered(), list_replay_writes: () => [] });
    renderUi(<ReplaysPage selected={null} onSelect={() => {}} />, [hung]);
    expect(await screen.findByTestId("waiting")).toHaveTextContent("Asking hung-cp…");
    expect(screen.queryByText(/No replay sessions/)).toBeNull();
    await waitedFor(SILENT_AFTER_MS + 1_000);
    expect(screen.getByTestId("waiting")).toHaveTextContent("hung-cp has not answered for 6 s");
  });

  it("Recovery never says nothing needs attention, nor that there are no retirements", async () => {
    mockCommands({
      recovery_findings: () => unanswered(),
      list_recovery_writes: () => [],
      list_retirements: () => unanswered(),
    });
    renderUi(<RecoveryPage />, [hung]);
    await waitFor(() => expect(screen.getAllByTestId("waiting")).toHaveLength(2));
    expect(screen.queryByTestId("recovery-clean")).toBeNull();
    expect(screen.queryByText(/None\. Retire/)).toBeNull();
  });

  it("Recovery says its retirements failed to load, never that there are none", async () => {
    mockCommands({
      recovery_findings: () => unanswered(),
      list_recovery_writes: () => [],
      list_retirements: () => {
        throw { code: "offline", message: "cannot reach hung-cp", problem: null };
      },
    });
    renderUi(<RecoveryPage />, [hung]);
    expect(await screen.findByTestId("retirements-error")).toHaveTextContent(
      "Not loaded: cannot reach hung-cp",
    );
    expect(screen.queryByText(/None\. Retire/)).toBeNull();
  });

  it("the Overview of a plane whose cache was never filled shows no resource counts", async () => {
    mockCommands({
      overview: () =>
        overviewOf({ profile: "hung-cp", endpoints: 0, targets: 0, flows: 0, refreshed_at: null }),
      dlq_stats: () => unanswered(),
      delivery_metrics: () => unanswered(),
      recovery_findings: () => unanswered(),
    });
    renderUi(<OverviewPage />, [hung]);
    await waitFor(() => expect(screen.getByTestId("stat-endpoints-value")).toHaveTextContent("—"));
    expect(screen.getByTestId("stat-endpoints-hint")).toHaveTextContent(
      "not loaded yet: hung-cp has not answered",
    );
    expect(screen.queryByText("all enabled")).toBeNull();
    expect(screen.getByTestId("stat-targets-value")).toHaveTextContent("—");
    expect(screen.getByTestId("stat-flows-value")).toHaveTextContent("—");
    expect(screen.getByTestId("stat-dlq-value")).toHaveTextContent("…");
    // The console's own outbox is known without the control plane.
    expect(screen.getByTestId("stat-pending-value")).toHaveTextContent("0");
  });

  it("the Overview waits while its own answer has not come", async () => {
    mockCommands({
      overview: () => unanswered(),
      dlq_stats: () => unanswered(),
      delivery_metrics: () => unanswered(),
      recovery_findings: () => unanswered(),
    });
    renderUi(<OverviewPage />, [hung]);
    await waitFor(() => expect(screen.getByTestId("stat-endpoints-value")).toHaveTextContent("…"));
    expect(screen.queryByText("all enabled")).toBeNull();
    expect(screen.getByTestId("stat-pending-value")).toHaveTextContent("…");
  });
});
