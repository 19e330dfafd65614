import { emit } from "@tauri-apps/api/event";
import { act, screen, waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { ReplayWriteState, ReplayWriteView } from "../../ipc/bindings";
import { CORE_EVENT } from "../../ipc/bindings";
import { useCoreEvents } from "../../lib/events";
import { mockCommands, renderUi } from "../../test/render";
import { WriteBadge } from "./ReplayDialog";

function Live({ sessionId }: { sessionId: string }) {
  useCoreEvents();
  return <WriteBadge sessionId={sessionId} />;
}

describe("WriteBadge", () => {
  // The badge used to wait for its poll (and the start's own refetch raced the background
  // send), so it said "Saved locally" while the session already ran on the server. The core
  // now announces every move of the replay outbox row and the badge follows at once.
  it("follows the replay write as the core announces it: saved locally → sent → confirmed", async () => {
    let state: ReplayWriteState = "saved_locally";
    const row = (): ReplayWriteView => ({
      id: 7,
      action: "start",
      session_id: "rpl_live",
      state,
      attempts: state === "saved_locally" ? 0 : 1,
      error: null,
      created_at: Date.now(),
    });
    mockCommands({ list_replay_writes: () => [row()] });
    renderUi(<Live sessionId="rpl_live" />);
    expect(await screen.findByText("Saved locally")).toBeInTheDocument();

    // Well inside the fallback poll's interval: only the announcement can update it.
    for (const [next, label] of [
      ["sent", "Sent"],
      ["confirmed", "Confirmed"],
    ] as const) {
      state = next;
      await act(() =>
        emit(CORE_EVENT, {
          type: "replay_write",
          profile: "sandbox",
          session_id: "rpl_live",
          state: next,
        }),
      );
      await waitFor(
        () => expect(screen.getByTestId("write-state-rpl_live")).toHaveTextContent(label),
        {
          timeout: 500,
        },
      );
    }
  });
});
