import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { QueuedKind, QueuedWork } from "../ipc/bindings";
import { mockCommands, outboxEntry, renderUi, sandboxProfile } from "../test/render";
import { ProfileSwitcher } from "./ProfileSwitcher";

const profiles = () => [
  sandboxProfile(),
  sandboxProfile({ name: "offline-cp", sandbox: false, active: false, pending: 2 }),
];

describe("ProfileSwitcher", () => {
  it("shows each control plane's unsent writes next to it", async () => {
    mockCommands({
      check_health: () => ({
        ok: true,
        latency_ms: 1,
        server_version: "0.1.0",
        role: null,
        error: null,
      }),
    });
    renderUi(<ProfileSwitcher />, profiles());
    fireEvent.click(screen.getByTestId("profile-switcher"));
    expect(await screen.findByTestId("pending-offline-cp")).toHaveTextContent("2 pending");
    expect(screen.queryByTestId("pending-sandbox")).toBeNull();
  });

  it("says the token's role beside the health once the control plane answered", async () => {
    mockCommands({
      check_health: () => ({
        ok: true,
        latency_ms: 4,
        server_version: "0.1.0",
        role: "viewer",
        error: null,
      }),
    });
    renderUi(<ProfileSwitcher />, profiles());
    await waitFor(() =>
      expect(screen.getByTestId("health")).toHaveTextContent("healthy · 4 ms · viewer"),
    );
  });

  it("names no role for a control plane that has none", async () => {
    mockCommands({
      check_health: () => ({
        ok: true,
        latency_ms: 4,
        server_version: "0.1.0",
        role: null,
        error: null,
      }),
    });
    renderUi(<ProfileSwitcher />, profiles());
    await waitFor(() => expect(screen.getByTestId("health")).toHaveTextContent(/^healthy · 4 ms$/));
  });

  it("removing a control plane names every kind of queued work lost, with the menu closed", async () => {
    const cp = queuedPlane(
      work([
        ["write", 2, "2 writes"],
        ["rotation", 1, "1 rotation in progress"],
        ["replay", 1, "1 replay"],
      ]),
    );
    const calls = mockCommands({
      check_health: () => ({
        ok: true,
        latency_ms: 1,
        server_version: "0.1.0",
        role: null,
        error: null,
      }),
      list_outbox: () => [
        outboxEntry({ id: 1, profile: "offline-cp", name: "offline-ep", operation: "create" }),
        outboxEntry({ id: 2, profile: "offline-cp", name: "offline-ep", operation: "disable" }),
        outboxEntry({ id: 3, profile: "sandbox", name: "orders" }),
      ],
      ...cp.handlers,
    });
    renderUi(<ProfileSwitcher />, profiles());
    fireEvent.click(screen.getByTestId("profile-switcher"));
    fireEvent.click(await screen.findByTestId("remove-offline-cp"));
    const dialog = await screen.findByTestId("remove-profile");
    // The menu is closed: it covered half of the dialog's Remove button.
    await waitFor(() => expect(screen.queryByTestId("profile-offline-cp")).toBeNull());
    const unsent = await within(dialog).findByTestId("remove-unsent");
    expect(unsent).toHaveTextContent("Lost with it: 2 writes, 1 rotation in progress, 1 replay");
    expect(within(dialog).getByTestId("remove-kinds")).toHaveTextContent(
      "2 writes1 rotation in progress1 replay",
    );
    await waitFor(() => expect(dialog).toHaveTextContent("create endpoint offline-ep"));
    expect(dialog).toHaveTextContent("disable endpoint offline-ep");
    expect(dialog).not.toHaveTextContent("orders");
    const confirm = within(dialog).getByTestId("confirm-remove-profile");
    expect(confirm).toHaveTextContent("Remove, losing 4");
    fireEvent.click(confirm);
    // The core's rule, not a mock that accepts anything: only a removal that discards what
    // was shown goes through.
    await waitFor(() => expect(cp.removed()).toBe(true));
    expect(calls.filter(([c]) => c === "remove_profile")).toEqual([
      ["remove_profile", { name: "offline-cp", discard: cp.shown[0] }],
    ]);
    await waitFor(() => expect(screen.queryByTestId("remove-profile")).toBeNull());
  });

  it("work queued while the dialog was open is counted again before anything is lost", async () => {
    const cp = queuedPlane(work([["write", 1, "1 write"]]));
    const dialog = await openRemoveDialog(cp.handlers);
    await within(dialog).findByText("Lost with it: 1 write");
    // An agent queues a test webhook meanwhile.
    cp.set(
      work([
        ["write", 1, "1 write"],
        ["test_webhook", 1, "1 test webhook"],
      ]),
    );
    fireEvent.click(within(dialog).getByTestId("confirm-remove-profile"));
    expect(await within(dialog).findByText("Not removed")).toBeInTheDocument();
    expect(cp.removed()).toBe(false);
    await within(dialog).findByText("Lost with it: 1 write, 1 test webhook");
    const confirm = within(dialog).getByTestId("confirm-remove-profile");
    expect(confirm).toHaveTextContent("Remove, losing 2");
    fireEvent.click(confirm);
    await waitFor(() => expect(cp.removed()).toBe(true));
  });

  it("says it is counting, with Remove disabled, until the count has come back", async () => {
    const dialog = await openRemoveDialog({
      queued_work: () => new Promise<never>(() => {}) as unknown as QueuedWork,
    });
    expect(within(dialog).getByTestId("remove-counting")).toBeInTheDocument();
    expect(within(dialog).queryByText(/Nothing is queued/)).toBeNull();
    expect(within(dialog).getByTestId("confirm-remove-profile")).toBeDisabled();
  });

  it("with nothing queued, says so and removes", async () => {
    const cp = queuedPlane(work([]));
    const dialog = await openRemoveDialog(cp.handlers);
    expect(await within(dialog).findByTestId("remove-nothing-queued")).toBeInTheDocument();
    const confirm = within(dialog).getByTestId("confirm-remove-profile");
    expect(confirm).toHaveTextContent(/^Remove$/);
    fireEvent.click(confirm);
    await waitFor(() => expect(cp.removed()).toBe(true));
  });
});

/** Opens the remove dialog of offline-cp, with no writes listed and these commands mocked. */
async function openRemoveDialog(handlers: Parameters<typeof mockCommands>[0]) {
  mockCommands({
    check_health: () => ({
      ok: true,
      latency_ms: 1,
      server_version: "0.1.0",
      role: null,
      error: null,
    }),
    list_outbox: () => [],
    ...handlers,
  });
  renderUi(<ProfileSwitcher />, profiles());
  fireEvent.click(screen.getByTestId("profile-switcher"));
  fireEvent.click(await screen.findByTestId("remove-offline-cp"));
  return screen.findByTestId("remove-profile");
}

/** Queued work as the core counts it: `[kind, count, label]` per kind. */
function work(kinds: [QueuedKind, number, string][]): QueuedWork {
  return {
    total: kinds.reduce((n, [, count]) => n + count, 0),
    kinds: kinds.map(([kind, count, label]) => ({ kind, count, needs_attention: 0, label })),
    summary: kinds.length ? kinds.map(([, , label]) => label).join(", ") : "nothing",
  };
}

/**
 * `queued_work` and `remove_profile` as the core answers them (crates/core/src/queued.rs):
 * the removal is refused (`queued_work`) unless `discard` covers every kind queued now.
 */
function queuedPlane(initial: QueuedWork) {
  let current = initial;
  let removed = false;
  const shown: (QueuedWork | null)[] = [];
  const covers = (d: QueuedWork | null) =>
    current.kinds.every((k) => k.count <= (d?.kinds.find((s) => s.kind === k.kind)?.count ?? 0));
  return {
    shown,
    removed: () => removed,
    set: (next: QueuedWork) => {
      current = next;
    },
    handlers: {
      queued_work: () => current,
      remove_profile: ({ discard }: { name: string; discard: QueuedWork | null }) => {
        shown.push(discard);
        if (!covers(discard)) {
          throw {
            code: "conflict",
            message: `profile "offline-cp" still has unsent work: ${current.summary}; nothing was removed`,
            problem: null,
          };
        }
        removed = true;
        return current;
      },
    },
  };
}
