import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { ReplaySessionView } from "../ipc/bindings";
import { saveTrial } from "../lib/replay";
import { mockCommands, renderUi } from "../test/render";
import { failedItem } from "../test/replay";
import { ReplaysPage } from "./ReplaysPage";

const allFailed: ReplaySessionView = {
  id: "rpl_all_failed",
  status: "completed",
  selection: "2 selected deliveries",
  rate_per_s: 1,
  created_at: Date.now() - 60_000,
  cancelled_at: null,
  counts: { total: 2, succeeded: 0, failed: 2, pending: 0, cancelled: 0, skipped: 0 },
  items: [1, 2].map((n) => failedItem(n)),
};

describe("ReplaysPage", () => {
  it("shows a replay whose re-deliveries all failed in red, with why", async () => {
    mockCommands({
      list_replays: () => [allFailed],
      list_replay_writes: () => [],
      get_replay: () => allFailed,
      dlq_stats: () => ({ total: 2, groups: [] }),
    });
    renderUi(<ReplaysPage selected="rpl_all_failed" onSelect={() => {}} />);
    const status = await screen.findByTestId("replay-status");
    expect(status).toHaveTextContent("completed: 2 failed");
    expect(status.getAttribute("style")).toMatch(/red/);
    expect(screen.getByTestId("bar-failed").getAttribute("style")).toMatch(/red/);
    expect(screen.getByTestId("replay-failures")).toHaveTextContent(
      "All re-deliveries failed (legacy-erp: HTTP 500 ×2): legacy-erp still fails.",
    );
    const results = screen.getAllByTestId("replay-item-result");
    expect(results).toHaveLength(2);
    for (const r of results) {
      expect(r).toHaveTextContent("failed: HTTP 500 after 5 attempts");
      expect(r.getAttribute("style")).toMatch(/red/);
    }
    // The list says the same, not a bare "completed".
    await waitFor(() =>
      expect(
        within(screen.getByTestId("replay-list")).getByText("completed: 2 failed"),
      ).toBeTruthy(),
    );
  });

  it("says what a cancelled session ran and withdrew, that the rest was cancelled, what the trial was of, and a missing rate", async () => {
    const trial: ReplaySessionView = {
      ...allFailed,
      id: "rpl_t-trial",
      rate_per_s: null,
      counts: { total: 2, succeeded: 0, failed: 2, pending: 0, cancelled: 0, skipped: 0 },
    };
    const rest: ReplaySessionView = {
      ...allFailed,
      id: "rpl_t",
      status: "cancelled",
      selection: "target=legacy-erp",
      rate_per_s: null,
      cancelled_at: Date.now(),
      counts: { total: 519, succeeded: 3, failed: 9, pending: 0, cancelled: 507, skipped: 0 },
      items: [],
    };
    saveTrial("sandbox", "rpl_t-trial", {
      restSessionId: "rpl_t",
      filter: {
        endpoint: null,
        target: "legacy-erp",
        flow: null,
        error_class: null,
        since: null,
        until: null,
      },
      rate: null,
    });
    mockCommands({
      list_replays: () => [rest, trial],
      list_replay_writes: () => [],
      get_replay: ({ id }) => (id === "rpl_t" ? rest : trial),
      dlq_stats: () => ({ total: 2, groups: [] }),
    });
    renderUi(<ReplaysPage selected="rpl_t-trial" onSelect={() => {}} />);
    const rows = await screen.findAllByTestId("replay-row-progress");
    expect(rows[0]).toHaveTextContent("12 ran, 507 cancelled of 519");
    expect(rows[0]).not.toHaveTextContent("519/519");
    expect(
      within(screen.getByTestId("replay-list")).getAllByText(
        "trial batch: the first 2 of target = legacy-erp",
      ),
    ).toHaveLength(1);
    expect(await screen.findByTestId("replay-selection")).toHaveTextContent(
      "trial batch: the first 2 of target = legacy-erp, no rate limit",
    );
    expect(await screen.findByTestId("rest-cancelled")).toHaveTextContent(
      "The rest was started as rpl_t and cancelled: 12 ran, 507 cancelled of 519.",
    );
    expect(screen.queryByTestId("rest-started")).toBeNull();
    expect(screen.getByTestId("open-replay-rest")).toHaveTextContent("Replay the rest again…");
  });
});
