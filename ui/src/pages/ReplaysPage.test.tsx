import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { ReplaySessionView } from "../ipc/bindings";
import { mockCommands, renderUi } from "../test/render";
import { ReplaysPage } from "./ReplaysPage";

const allFailed: ReplaySessionView = {
  id: "rpl_all_failed",
  status: "completed",
  selection: "2 selected deliveries",
  rate_per_s: 1,
  created_at: Date.now() - 60_000,
  cancelled_at: null,
  counts: { total: 2, succeeded: 0, failed: 2, pending: 0, cancelled: 0, skipped: 0 },
  items: [1, 2].map((n) => ({
    original_delivery_id: `dlv_o${n}`,
    delivery_id: `dlv_r${n}`,
    status: "failed",
    reason: null,
    redelivery: {
      target: "legacy-erp",
      attempts_made: 5,
      max_attempts: 5,
      next_attempt_at: null,
      error_class: "http_5xx",
      last_status_code: 500,
    },
  })),
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
});
