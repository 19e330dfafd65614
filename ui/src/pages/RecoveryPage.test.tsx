import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import type { Finding, RecoveryView, RecoveryWriteView } from "../ipc/bindings";
import { mockCommands, renderUi } from "../test/render";
import { RecoveryPage } from "./RecoveryPage";

const stuck: Finding = {
  id: "stuck_delivery:delivery:dlv_1",
  class: "stuck_delivery",
  severity: "critical",
  subject: { kind: "delivery", id: "dlv_1" },
  detail: "In flight for 12 min past its lease; no worker holds it.",
  evidence: { count: 1, delivery_ids: ["dlv_1"], since: new Date().toISOString() },
  actions: [
    {
      label: "Requeue the delivery",
      method: "POST",
      path: "/v1/deliveries/dlv_1/requeue",
      body: { attempt: 2 },
      destructive: false,
    },
  ],
};
const stalled: Finding = {
  id: "stalled_replay:replay:rpl_1",
  class: "stalled_replay",
  severity: "warning",
  subject: { kind: "replay", id: "rpl_1" },
  detail: "Running with no progress for 20 min.",
  evidence: {},
  actions: [
    {
      label: "Cancel the replay",
      method: "POST",
      path: "/v1/replays/rpl_1/cancel",
      destructive: true,
    },
  ],
};

const view = (findings: Finding[], over: Partial<RecoveryView> = {}): RecoveryView => ({
  findings,
  server_checked_at: new Date().toISOString(),
  server_unavailable: null,
  unchecked: [],
  ...over,
});

describe("RecoveryPage", () => {
  it("groups findings by severity with their evidence and the exact request of each fix, and runs one through the outbox", async () => {
    const writes: RecoveryWriteView[] = [];
    const calls = mockCommands({
      recovery_findings: () => view([stalled, stuck]),
      list_retirements: () => [],
      list_recovery_writes: () => writes,
      run_fix: ({ findingId, action, key }) => {
        const w: RecoveryWriteView = {
          id: 1,
          subject: findingId,
          action: "fix",
          label: stuck.actions[action].label,
          method: "POST",
          path: stuck.actions[action].path,
          idempotency_key: key,
          state: "confirmed",
          attempts: 1,
          error: null,
          created_at: Date.now(),
        };
        writes.push(w);
        return { message: "the control plane confirmed it", write: w };
      },
    });
    renderUi(<RecoveryPage />);
    const critical = await screen.findByTestId("recovery-group-critical");
    expect(within(critical).getByText("Stuck delivery")).toBeInTheDocument();
    expect(screen.getByTestId("recovery-group-warning")).toHaveTextContent("Stalled replay");
    // Critical before warning on the page.
    const groups = screen.getAllByTestId(/^recovery-group-/).map((g) => g.dataset.testid);
    expect(groups).toEqual(["recovery-group-critical", "recovery-group-warning"]);
    expect(screen.getByTestId(`evidence-${stuck.id}`)).toHaveTextContent("1 affected");
    expect(screen.getByTestId(`fix-${stuck.id}-0-request`)).toHaveTextContent(
      'POST /v1/deliveries/dlv_1/requeue { "attempt": 2 }',
    );

    await userEvent.click(screen.getByTestId(`fix-${stuck.id}-0`));
    expect(await screen.findByTestId(`fix-${stuck.id}-0-state`)).toHaveTextContent("Confirmed");
    const run = calls.filter(([c]) => c === "run_fix");
    expect(run).toHaveLength(1);
    expect(run[0][1]).toMatchObject({ findingId: stuck.id, action: 0 });

    // The filter narrows to what matches.
    await userEvent.type(screen.getByTestId("recovery-filter"), "replay");
    await waitFor(() =>
      expect(screen.queryByTestId("recovery-group-critical")).not.toBeInTheDocument(),
    );
    expect(screen.getByTestId("recovery-group-warning")).toBeInTheDocument();
  });

  it("keeps a fixed finding on screen with its outcome once the next check no longer reports it", async () => {
    let fixed = false;
    const write: RecoveryWriteView = {
      id: 1,
      subject: stuck.id,
      action: "fix",
      label: stuck.actions[0].label,
      method: "POST",
      path: stuck.actions[0].path,
      idempotency_key: "k1",
      state: "confirmed",
      attempts: 1,
      error: null,
      created_at: Date.now(),
    };
    mockCommands({
      recovery_findings: () => view(fixed ? [stalled] : [stalled, stuck]),
      list_retirements: () => [],
      list_recovery_writes: () => (fixed ? [write] : []),
      run_fix: () => {
        fixed = true;
        return { message: "the control plane confirmed it", write };
      },
    });
    renderUi(<RecoveryPage />);
    await userEvent.click(await screen.findByTestId(`fix-${stuck.id}-0`));
    const card = await screen.findByTestId(`resolved-${stuck.id}`);
    expect(screen.queryByTestId(`finding-${stuck.id}`)).not.toBeInTheDocument();
    expect(card).toHaveTextContent("No longer reported");
    expect(within(card).getByTestId(`fix-${stuck.id}-0-state`)).toHaveTextContent("Confirmed");
    expect(within(card).getByTestId(`fix-${stuck.id}-0`)).toBeDisabled();
    // A finding without a fix of this console that goes away is simply gone.
    expect(screen.queryByTestId(`resolved-${stalled.id}`)).not.toBeInTheDocument();
  });

  it("asks before a destructive fix and sends nothing when the person keeps it", async () => {
    const calls = mockCommands({
      recovery_findings: () => view([stalled]),
      list_retirements: () => [],
      list_recovery_writes: () => [],
    });
    renderUi(<RecoveryPage />);
    await userEvent.click(await screen.findByTestId(`fix-${stalled.id}-0`));
    expect(await screen.findByText("This cannot be undone. It sends:")).toBeInTheDocument();
    await userEvent.click(screen.getByText("Keep it"));
    expect(calls.some(([c]) => c === "run_fix")).toBe(false);
  });

  it("never shows a control plane it could not check as clean", async () => {
    mockCommands({
      recovery_findings: () =>
        view([], {
          server_checked_at: null,
          server_unavailable:
            "The control plane does not answer (connection refused); it has not been checked yet.",
        }),
      list_retirements: () => [],
      list_recovery_writes: () => [],
    });
    renderUi(<RecoveryPage />);
    expect(await screen.findByTestId("recovery-server-missing")).toHaveTextContent(
      "connection refused",
    );
    expect(screen.queryByTestId("recovery-clean")).not.toBeInTheDocument();
  });
});
