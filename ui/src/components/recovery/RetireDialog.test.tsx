import { screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import type { RetirementItemView } from "../../ipc/bindings";
import { mockCommands, renderUi } from "../../test/render";
import { RetireDialog } from "./RetireDialog";

describe("RetireDialog", () => {
  it("previews the impact, takes options, needs the typed name, then follows the progress", async () => {
    let started: RetirementItemView | null = null;
    const calls = mockCommands({
      preview_retirement: ({ cascadeFlows }) => ({
        id: "dry",
        dry_run: true,
        would_start: cascadeFlows ? "draining" : "blocked",
        blockers: cascadeFlows ? [] : [{ kind: "flow", name: "orders-to-crm" }],
        impact: { flows: ["orders-to-crm"], pending_deliveries: 4, dlq_depth: 9, open_replays: [] },
      }),
      new_retirement_id: () => "ret_abc",
      start_retirement: ({ input }) => {
        started = {
          id: input.id,
          kind: input.kind,
          name: input.name,
          start: null,
          cancel: null,
          offline: null,
          server: {
            id: input.id,
            kind: "target",
            name: "crm",
            state: "draining",
            grace_seconds: 600,
            cascade_flows: true,
            dlq: "keep",
            blockers: [],
            impact: { flows: [], pending_deliveries: 4, dlq_depth: 9, open_replays: [] },
            cascaded_flows: ["orders-to-crm"],
            created_at: new Date().toISOString(),
            updated_at: new Date().toISOString(),
            history: [{ state: "draining", at: new Date().toISOString() }],
          },
        };
        return started;
      },
      get_retirement: () => started as RetirementItemView,
    });
    renderUi(<RetireDialog kind="target" name="crm" onClose={() => {}} />);
    expect(await screen.findByTestId("retire-impact")).toHaveTextContent("orders-to-crm");
    expect(screen.getByText("It would stop at blocked")).toBeInTheDocument();
    await userEvent.click(screen.getByTestId("retire-next"));
    await userEvent.click(screen.getByTestId("retire-cascade"));
    await userEvent.clear(screen.getByTestId("retire-grace"));
    await userEvent.type(screen.getByTestId("retire-grace"), "10m");
    await userEvent.click(screen.getByTestId("retire-next"));
    const go = screen.getByTestId("retire-start");
    expect(go).toBeDisabled();
    await userEvent.type(screen.getByTestId("retire-typed"), "crm");
    expect(go).toBeEnabled();
    await userEvent.click(go);
    expect(await screen.findByTestId("retirement-state-ret_abc")).toHaveTextContent("Draining");
    expect(screen.getByTestId("retirement-next-ret_abc")).toHaveTextContent(
      "Waiting for 4 pending deliveries",
    );
    const start = calls.find(([c]) => c === "start_retirement");
    expect(start?.[1]).toMatchObject({
      input: {
        id: "ret_abc",
        kind: "target",
        name: "crm",
        grace: "10m",
        cascade_flows: true,
        dlq: "keep",
      },
    });
    await waitFor(() => expect(calls.filter(([c]) => c === "start_retirement")).toHaveLength(1));
  });
});
