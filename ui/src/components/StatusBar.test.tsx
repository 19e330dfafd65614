import { emit } from "@tauri-apps/api/event";
import { act, screen, waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { SyncStatus } from "../ipc/bindings";
import { CORE_EVENT } from "../ipc/bindings";
import { useCoreEvents } from "../lib/events";
import { mockCommands, renderUi, sandboxProfile, unanswered } from "../test/render";
import { StatusBar } from "./StatusBar";

const status: SyncStatus = {
  profile: "prod",
  online: true,
  last_sync_at: Date.now() - 3_000,
  pending: 0,
  needs_attention: 0,
  syncing: false,
  round_done: 0,
  round_total: 0,
  offline_reason: null,
};

function Live() {
  useCoreEvents();
  return <StatusBar onOutbox={() => {}} />;
}

describe("StatusBar", () => {
  it("follows the core's events: offline with queued writes, then syncing with progress", async () => {
    mockCommands({
      sync_status: () => status,
      check_health: () => ({
        ok: true,
        latency_ms: 1,
        server_version: "0.1.0",
        role: null,
        error: null,
      }),
      overview: () => null as never,
      list_profiles: () => [sandboxProfile({ name: "prod", sandbox: false })],
    });
    renderUi(<Live />, [sandboxProfile({ name: "prod", sandbox: false })]);
    expect(await screen.findByText("Online")).toBeInTheDocument();
    await act(() =>
      emit(CORE_EVENT, {
        type: "sync",
        ...status,
        online: false,
        pending: 2,
        offline_reason: "connection refused",
      }),
    );
    expect(await screen.findByText(/Offline — working from the local copy/)).toBeInTheDocument();
    expect(screen.getByTestId("status-pending")).toHaveTextContent("2 pending for prod");
    await act(() =>
      emit(CORE_EVENT, {
        type: "sync",
        ...status,
        pending: 1,
        syncing: true,
        round_done: 1,
        round_total: 2,
      }),
    );
    expect(await screen.findByText("Syncing 1/2")).toBeInTheDocument();
    expect(screen.getByTestId("status-online")).toHaveAttribute("data-online", "true");
  });

  // The first sync ran while the first screen loaded, before the UI listened for its event:
  // "Last sync: never" stayed until something else re-read the status.
  it("re-reads the status once it listens, so a sync announced earlier is not missed", async () => {
    let reads = 0;
    mockCommands({
      sync_status: () => {
        reads += 1;
        return { ...status, last_sync_at: reads === 1 ? null : Date.now() - 4_000 };
      },
      check_health: () => ({
        ok: true,
        latency_ms: 1,
        server_version: "0.1.0",
        role: null,
        error: null,
      }),
      list_profiles: () => [sandboxProfile({ name: "prod", sandbox: false })],
    });
    renderUi(<Live />, [sandboxProfile({ name: "prod", sandbox: false })]);
    await waitFor(() =>
      expect(screen.getByTestId("status-last-sync")).toHaveTextContent("4 s ago"),
    );
  });
});

describe("StatusBar before the status arrives", () => {
  it("counts nothing as 0 while its status has not answered", async () => {
    mockCommands({ sync_status: () => unanswered() });
    renderUi(<StatusBar onOutbox={() => {}} />);
    await waitFor(() => expect(screen.getByTestId("status-pending")).toHaveTextContent("…"));
    expect(screen.getByTestId("status-pending")).not.toHaveTextContent("0 pending");
    expect(screen.getByTestId("status-last-sync")).toHaveTextContent("Last sync: …");
  });
});
