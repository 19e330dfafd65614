import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import type { Finding, RecoveryView, TargetTestInput, TargetTestView } from "../../ipc/bindings";
import { RecoveryPage } from "../../pages/RecoveryPage";
import { mockCommands, renderUi } from "../../test/render";

const since = "2026-12-07T08:00:00.000Z";

const failing = (over: Partial<Finding> = {}): Finding => ({
  id: "failing_target:target:legacy-erp",
  class: "failing_target",
  severity: "critical",
  subject: { kind: "target", id: "legacy-erp" },
  detail: "Target legacy-erp has failed its last 40 attempts.",
  evidence: { count: 40, since, last_error: "http_5xx: receiver answered HTTP 500" },
  actions: [
    {
      label: "Send a test webhook to legacy-erp",
      method: "POST",
      path: "/v1/targets/legacy-erp/test",
      body: {},
      destructive: false,
    },
    {
      label: `Replay the 583 deliveries to legacy-erp that died since ${since}`,
      method: "PUT",
      path: "/v1/replays/diag-failing-target-legacy-erp-1",
      body: { selection: { filter: { target: "legacy-erp", since } }, rate_per_s: 10 },
      destructive: true,
    },
  ],
  ...over,
});

const view = (findings: Finding[]): RecoveryView => ({
  findings,
  server_checked_at: new Date().toISOString(),
  server_unavailable: null,
  unchecked: [],
});

describe("FindingCard of a failing target", () => {
  it("shows what the receiver answered to the test webhook, not only that the write was confirmed", async () => {
    const tests: TargetTestView[] = [];
    const calls = mockCommands({
      recovery_findings: () => view([failing()]),
      list_retirements: () => [],
      list_recovery_writes: () => [],
      list_target_tests: () => [...tests],
      test_target: ({ input }: { input: TargetTestInput }) => {
        const t: TargetTestView = {
          id: 1,
          target: input.target,
          key: input.key,
          state: "confirmed",
          attempts: 1,
          error: null,
          error_code: null,
          result: {
            ok: false,
            status_code: 500,
            error_class: "http_5xx",
            error: "receiver answered HTTP 500",
            duration_ms: 2,
            webhook_id: input.key,
            tested_at: new Date().toISOString(),
          },
          created_at: Date.now(),
        };
        tests.unshift(t);
        return t;
      },
    });
    renderUi(<RecoveryPage />);
    const card = await screen.findByTestId("finding-failing_target:target:legacy-erp");
    await userEvent.click(within(card).getByTestId("test-webhook-send"));
    await waitFor(() =>
      expect(within(card).getByTestId("test-webhook-verdict")).toHaveTextContent(
        "Receiver did not accept it: HTTP 500 (HTTP 5xx) in 2 ms",
      ),
    );
    expect(within(card).getByTestId("test-webhook-state")).toHaveTextContent("Confirmed");
    const sent = calls.filter(([c]) => c === "test_target");
    expect(sent).toHaveLength(1);
    expect((sent[0][1] as { input: TargetTestInput }).input.target).toBe("legacy-erp");
    expect(calls.some(([c]) => c === "run_fix")).toBe(false);
  });

  it("opens the replay dialog (dry-run count, rate, trial) instead of replaying 583 in one click", async () => {
    const calls = mockCommands({
      recovery_findings: () => view([failing()]),
      list_retirements: () => [],
      list_recovery_writes: () => [],
      list_target_tests: () => [],
      list_replay_writes: () => [],
      new_replay_id: () => "rpl_fix1",
      replay_dry_run: () => 583,
      dlq_causes: () => [{ error_class: "http_5xx", target: "legacy-erp", count: 583 }],
      dlq_page: () => ({
        items: ["dlv_b", "dlv_a"].map((id) => ({
          delivery_id: id,
          event_id: `evt_${id}`,
          event_type: "order.created",
          endpoint: "orders",
          flow: "orders-to-erp",
          target: "legacy-erp",
          error_class: "http_5xx",
          last_status_code: 500,
          attempts: 5,
          dead_at: Date.now(),
          replay_session: null,
        })),
        next_cursor: null,
      }),
      start_replay: ({ input }) => ({
        id: 1,
        action: "start",
        session_id: input.session_id,
        state: "saved_locally",
        attempts: 0,
        error: null,
        created_at: Date.now(),
        origin: { via: "console" },
      }),
    });
    renderUi(<RecoveryPage />);
    const id = "failing_target:target:legacy-erp";
    await userEvent.click(await screen.findByTestId(`fix-${id}-1`));
    expect(calls.some(([c]) => c === "start_replay" || c === "run_fix")).toBe(false);
    expect(await screen.findByTestId("dry-run-count")).toHaveTextContent(
      /583 dead deliveries match target = legacy-erp, dead since/,
    );
    expect(screen.getByTestId("replay-breakdown")).toHaveTextContent("583");
    expect(screen.getByTestId("replay-rate")).toHaveValue("10");
    expect(await screen.findByTestId("replay-trial")).toBeInTheDocument();
    const dry = calls.find(([c]) => c === "replay_dry_run")?.[1] as {
      selection: { by: string; filter: { target: string; since: number } };
    };
    expect(dry.selection.by).toBe("filter");
    expect(dry.selection.filter.target).toBe("legacy-erp");
    expect(dry.selection.filter.since).toBe(Date.parse(since));
    const start = screen.getByTestId("replay-start");
    await waitFor(() => expect(start).not.toBeDisabled());
    await userEvent.click(start);
    await waitFor(() => expect(calls.filter(([c]) => c === "start_replay")).toHaveLength(1));
    const [, args] = calls.filter(([c]) => c === "start_replay")[0];
    expect((args as { input: unknown }).input).toMatchObject({
      session_id: "rpl_fix1",
      rate_per_s: 10,
    });
    expect(await screen.findByTestId(`fix-${id}-1-outcome`)).toHaveTextContent(
      "Replay session rpl_fix1 started",
    );
    // Many clicks through a modal: slow on a loaded machine.
  }, 20_000);

  it("says how many a replay holds, with its session, rather than that nothing has died", async () => {
    mockCommands({
      recovery_findings: () =>
        view([
          failing({
            evidence: {
              count: 40,
              since,
              replaying: 583,
              replay_sessions: ["rpl_fix1"],
            },
            actions: failing().actions.slice(0, 1),
          }),
        ]),
      list_retirements: () => [],
      list_recovery_writes: () => [],
      list_target_tests: () => [],
    });
    renderUi(<RecoveryPage />);
    expect(
      await screen.findByTestId("evidence-failing_target:target:legacy-erp"),
    ).toHaveTextContent("583 are being replayed (session rpl_fix1)");
  });
});
