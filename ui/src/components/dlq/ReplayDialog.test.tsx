import { fireEvent, screen, waitFor } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import type { ReplayStartInput, ReplayWriteView } from "../../ipc/bindings";
import { mockCommands, renderUi } from "../../test/render";
import { failedItem } from "../../test/replay";
import { ReplayDialog } from "./ReplayDialog";

const write = (input: ReplayStartInput, state: ReplayWriteView["state"]): ReplayWriteView => ({
  id: 1,
  action: "start",
  session_id: input.session_id,
  state,
  attempts: state === "saved_locally" ? 0 : 1,
  error: null,
  created_at: Date.now(),
  origin: { via: "console" },
});

describe("ReplayDialog", () => {
  it("counts first, and a double click sends one session id (one session)", async () => {
    const writes: ReplayWriteView[] = [];
    const calls = mockCommands({
      new_replay_id: () => "rpl_draft1",
      replay_dry_run: () => 42,
      start_replay: ({ input }) => {
        const w = write(input, "saved_locally");
        if (!writes.some((x) => x.session_id === w.session_id)) writes.push(w);
        return w;
      },
      list_replay_writes: () => writes,
      dlq_causes: () => [{ error_class: "http_5xx", target: "crm", count: 42 }],
    });
    renderUi(
      <ReplayDialog
        opened
        onClose={() => {}}
        selection={{
          by: "filter",
          filter: {
            endpoint: null,
            target: "crm",
            flow: null,
            error_class: null,
            since: null,
            until: null,
          },
        }}
        trialCandidates={[]}
        onStarted={() => {}}
      />,
    );
    expect(
      await screen.findByText(/42 dead deliveries match target = crm; they would be replayed/),
    ).toBeInTheDocument();
    expect(await screen.findByTestId("replay-breakdown")).toHaveTextContent("crm");
    const button = await screen.findByTestId("replay-start");
    await waitFor(() => expect(button).not.toBeDisabled());
    fireEvent.click(button);
    fireEvent.click(button);
    await waitFor(() =>
      expect(calls.filter(([c]) => c === "start_replay").length).toBeGreaterThanOrEqual(1),
    );
    const ids = calls
      .filter(([c]) => c === "start_replay")
      .map(([, a]) => (a as { input: ReplayStartInput }).input.session_id);
    expect(new Set(ids)).toEqual(new Set(["rpl_draft1"]));
    expect(writes).toHaveLength(1);
    expect(await screen.findByTestId("write-state-rpl_draft1")).toHaveTextContent("Saved locally");
    const dry = calls.find(([c]) => c === "replay_dry_run")?.[1] as { selection: unknown };
    expect(dry.selection).toEqual({
      by: "filter",
      filter: expect.objectContaining({ target: "crm" }),
    });
  });

  // The trial used to navigate away at once, losing the dialog and its "Replay the rest".
  it("runs a trial batch of the first N, stays open, then replays the rest of the filter", async () => {
    const started: ReplayStartInput[] = [];
    const trialCreated = Date.now() - 30_000;
    const onStarted = vi.fn();
    mockCommands({
      new_replay_id: () => "rpl_x",
      replay_dry_run: () => 5,
      dlq_causes: () => [],
      start_replay: ({ input }) => {
        started.push(input);
        return write(input, "confirmed");
      },
      list_replay_writes: () => [],
      get_replay: ({ id }) => ({
        id,
        status: "completed",
        selection: "2 selected deliveries",
        rate_per_s: 3,
        created_at: trialCreated,
        cancelled_at: null,
        counts: { total: 2, succeeded: 2, failed: 0, pending: 0, cancelled: 0, skipped: 0 },
        items: [],
      }),
    });
    const filter = {
      endpoint: null,
      target: null,
      flow: null,
      error_class: "timeout" as const,
      since: null,
      until: null,
    };
    renderUi(
      <ReplayDialog
        opened
        onClose={() => {}}
        selection={{ by: "filter", filter }}
        trialCandidates={["dlv_a", "dlv_b", "dlv_c", "dlv_d", "dlv_e"]}
        onStarted={onStarted}
      />,
    );
    await screen.findByText(/5 dead deliveries/);
    fireEvent.click(screen.getByTestId("replay-trial"));
    fireEvent.change(screen.getByLabelText("Trial size"), { target: { value: "2" } });
    fireEvent.change(screen.getByTestId("replay-rate"), { target: { value: "3" } });
    const trial = await screen.findByTestId("replay-start-trial");
    await waitFor(() => expect(trial).not.toBeDisabled());
    fireEvent.click(trial);
    // The dialog stays, follows the trial, and offers the rest once it is done.
    expect(await screen.findByTestId("trial-status")).toHaveTextContent("completed");
    expect(onStarted).not.toHaveBeenCalled();
    const rest = await screen.findByTestId("replay-rest");
    await waitFor(() => expect(rest).toHaveTextContent("Replay the rest (5)"));
    fireEvent.click(rest);
    await waitFor(() => expect(started).toHaveLength(2));
    expect(started[0]).toEqual({
      session_id: "rpl_x-trial",
      selection: { by: "ids", delivery_ids: ["dlv_a", "dlv_b"] },
      rate_per_s: 3,
    });
    // The rest: the same filter, dead before the trial began (its own re-deliveries that die
    // again are not replayed twice).
    expect(started[1]).toEqual({
      session_id: "rpl_x",
      selection: { by: "filter", filter: { ...filter, until: trialCreated } },
      rate_per_s: 3,
    });
    await waitFor(() => expect(onStarted).toHaveBeenCalledWith("rpl_x"));
  });

  it("asks for a second yes before replaying the whole DLQ, and can be cancelled", async () => {
    const onClose = vi.fn();
    mockCommands({
      new_replay_id: () => "rpl_all",
      replay_dry_run: () => 64,
      dlq_causes: () => [
        { error_class: "timeout", target: "warehouse", count: 40 },
        { error_class: "http_5xx", target: "legacy-erp", count: 24 },
      ],
      list_replay_writes: () => [],
    });
    renderUi(
      <ReplayDialog
        opened
        onClose={onClose}
        selection={{
          by: "filter",
          filter: {
            endpoint: null,
            target: null,
            flow: null,
            error_class: null,
            since: null,
            until: null,
          },
        }}
        trialCandidates={[]}
        onStarted={() => {}}
      />,
    );
    expect(
      await screen.findByText(
        "Every dead delivery in the DLQ would be replayed, oldest first: 64.",
      ),
    ).toBeInTheDocument();
    expect(await screen.findByTestId("replay-breakdown")).toHaveTextContent("warehouse");
    const startButton = screen.getByTestId("replay-start");
    expect(startButton).toBeDisabled();
    fireEvent.click(screen.getByTestId("replay-confirm-all"));
    await waitFor(() => expect(startButton).not.toBeDisabled());
    fireEvent.click(screen.getByTestId("replay-cancel-dialog"));
    expect(onClose).toHaveBeenCalled();
  });

  // "Replay the rest (519) anyway" used to start 519 re-deliveries to a target the dialog
  // said still fails, in one click; its breakdown (read again every 10 s) said 520.
  it("asks before replaying the rest to a target the trial shows still fails, with one count", async () => {
    const started: ReplayStartInput[] = [];
    const trialCreated = Date.now() - 30_000;
    mockCommands({
      new_replay_id: () => "rpl_r",
      replay_dry_run: ({ selection }) =>
        selection.by === "filter" && selection.filter.until !== null ? 519 : 529,
      dlq_causes: ({ filter }) => [
        { error_class: "http_5xx", target: "legacy-erp", count: filter.until !== null ? 519 : 529 },
      ],
      start_replay: ({ input }) => {
        started.push(input);
        return write(input, "confirmed");
      },
      list_replay_writes: () => [],
      get_replay: ({ id }) => ({
        id,
        status: "completed",
        selection: "10 selected deliveries",
        rate_per_s: 10,
        created_at: trialCreated,
        cancelled_at: null,
        counts: { total: 10, succeeded: 0, failed: 10, pending: 0, cancelled: 0, skipped: 0 },
        items: Array.from({ length: 10 }, (_, n) => failedItem(n)),
      }),
    });
    const filter = {
      endpoint: null,
      target: "legacy-erp",
      flow: null,
      error_class: null,
      since: null,
      until: null,
    };
    renderUi(
      <ReplayDialog
        opened
        onClose={() => {}}
        selection={{ by: "filter", filter }}
        trialCandidates={Array.from({ length: 20 }, (_, n) => `dlv_o${n}`)}
        onStarted={() => {}}
      />,
    );
    await screen.findByText(/529 dead deliveries/);
    fireEvent.click(screen.getByTestId("replay-trial"));
    const trial = await screen.findByTestId("replay-start-trial");
    await waitFor(() => expect(trial).not.toBeDisabled());
    fireEvent.click(trial);
    expect(await screen.findByTestId("trial-failures")).toHaveTextContent("legacy-erp still fails");
    const rest = await screen.findByTestId("replay-rest");
    await waitFor(() => expect(rest).toHaveTextContent("Replay the rest (519) anyway…"));
    // The rest's breakdown is read with its count: the same 519.
    expect(screen.getByTestId("replay-breakdown")).toHaveTextContent("519");
    expect(screen.getByTestId("replay-breakdown")).not.toHaveTextContent("529");
    fireEvent.click(rest);
    expect(started).toHaveLength(1);
    const confirm = await screen.findByTestId("replay-rest-confirm");
    expect(confirm).toHaveTextContent("519 deliveries go to legacy-erp, which the trial shows");
    expect(confirm).toHaveTextContent("still fails");
    fireEvent.click(screen.getByText("Keep them in the DLQ"));
    expect(started).toHaveLength(1);
    fireEvent.click(await screen.findByTestId("replay-rest"));
    fireEvent.click(await screen.findByTestId("replay-rest-confirm-button"));
    await waitFor(() => expect(started).toHaveLength(2));
    expect(started[1]).toMatchObject({
      session_id: "rpl_r",
      selection: { by: "filter", filter: { ...filter, until: trialCreated } },
    });
  });
});
