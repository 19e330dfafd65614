import { fireEvent, screen, waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { ReplayStartInput, ReplayWriteView } from "../../ipc/bindings";
import { mockCommands, renderUi } from "../../test/render";
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
    expect(await screen.findByText(/42 dead deliveries would be replayed/)).toBeInTheDocument();
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

  it("runs a trial batch of the first N, then the rest by filter, with the rate limit", async () => {
    const started: ReplayStartInput[] = [];
    mockCommands({
      new_replay_id: () => "rpl_x",
      replay_dry_run: () => 5,
      start_replay: ({ input }) => {
        started.push(input);
        return write(input, "confirmed");
      },
      list_replay_writes: () => [],
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
        onStarted={() => {}}
      />,
    );
    await screen.findByText(/5 dead deliveries/);
    fireEvent.click(screen.getByTestId("replay-trial"));
    fireEvent.change(screen.getByLabelText("Trial size"), { target: { value: "2" } });
    fireEvent.change(screen.getByTestId("replay-rate"), { target: { value: "3" } });
    const trial = await screen.findByTestId("replay-start-trial");
    await waitFor(() => expect(trial).not.toBeDisabled());
    fireEvent.click(trial);
    const rest = await screen.findByTestId("replay-start");
    expect(rest).toHaveTextContent("Replay the rest");
    fireEvent.click(rest);
    await waitFor(() => expect(started).toHaveLength(2));
    expect(started[0]).toEqual({
      session_id: "rpl_x-trial",
      selection: { by: "ids", delivery_ids: ["dlv_a", "dlv_b"] },
      rate_per_s: 3,
    });
    expect(started[1]).toEqual({
      session_id: "rpl_x",
      selection: { by: "filter", filter },
      rate_per_s: 3,
    });
  });
});
