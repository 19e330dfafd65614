import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { mockCommands, outboxEntry, renderUi } from "../test/render";
import { nextTry, OutboxPage, triesWords, waitingSummary } from "./OutboxPage";

describe("OutboxPage", () => {
  it("lists state, key, attempts and the countdown; retry now and discard reach the core", async () => {
    const now = Date.now();
    const waiting = outboxEntry({
      id: 1,
      state: "pending",
      attempts: 2,
      next_attempt_at: now + 30_500,
      error: {
        status: null,
        code: null,
        message: "connection refused",
        transient: true,
        field: null,
        used_by: [],
        current_version: null,
      },
    });
    const refused = outboxEntry({
      id: 2,
      name: "payments",
      operation: "delete",
      state: "needs_attention",
      idempotency_key: "key-two",
      error: {
        status: 409,
        code: "in_use",
        message: "endpoint payments is used by flows",
        transient: false,
        field: null,
        used_by: ["payments-to-erp"],
        current_version: null,
      },
    });
    const calls = mockCommands({
      list_outbox: () => [waiting, refused],
      retry_now: () => null,
      resolve: () => null,
    });
    renderUi(<OutboxPage />);
    const first = await screen.findByTestId("outbox-1");
    expect(within(first).getByTestId("op-state")).toHaveTextContent("Saved locally");
    expect(first).toHaveTextContent(waiting.idempotency_key);
    expect(first).toHaveTextContent("connection refused");
    expect(within(first).getByTestId("next-try")).toHaveTextContent(/in 3\d s/);
    fireEvent.click(within(first).getByTestId("retry-now"));
    const second = screen.getByTestId("outbox-2");
    expect(within(second).getByTestId("op-state")).toHaveTextContent("Needs attention");
    fireEvent.click(within(second).getByTestId("discard"));
    await screen.findByTestId("outbox-2");
    expect(calls.filter(([cmd]) => cmd === "retry_now")).toEqual([["retry_now", { id: 1 }]]);
    expect(calls.filter(([cmd]) => cmd === "resolve")).toEqual([
      ["resolve", { id: 2, resolution: "discard" }],
    ]);
  });

  it("says when nothing waits", async () => {
    mockCommands({ list_outbox: () => [outboxEntry({ state: "done" })] });
    renderUi(<OutboxPage />);
    await waitFor(() =>
      expect(screen.getByTestId("outbox-summary")).toHaveTextContent(
        "Nothing waiting for sandbox: every change is confirmed.",
      ),
    );
  });

  // The outbox used to list the active profile's writes only and said "every change is
  // confirmed" while two waited for another control plane.
  it("shows the writes waiting for every control plane, with a Control plane column", async () => {
    mockCommands({
      list_outbox: () => [
        outboxEntry({ id: 7, profile: "offline-cp", name: "offline-ep", operation: "create" }),
        outboxEntry({ id: 8, profile: "offline-cp", name: "offline-ep", operation: "disable" }),
        outboxEntry({ id: 9, profile: "sandbox", state: "done" }),
      ],
    });
    renderUi(<OutboxPage />);
    await waitFor(() =>
      expect(screen.getByTestId("outbox-summary")).toHaveTextContent(
        "Nothing waiting for sandbox; 2 waiting for offline-cp.",
      ),
    );
    for (const id of [7, 8]) {
      const row = screen.getByTestId(`outbox-${id}`);
      expect(within(row).getByTestId("outbox-profile")).toHaveTextContent("offline-cp");
      expect(within(row).getByTestId("next-try")).toHaveTextContent("when offline-cp is active");
    }
  });

  it("says why Retry now does not send while the control plane is unreachable", async () => {
    mockCommands({
      list_outbox: () => [outboxEntry({ id: 3, attempts: 0 })],
      sync_status: () => ({
        profile: "sandbox",
        online: false,
        last_sync_at: null,
        pending: 1,
        needs_attention: 0,
        syncing: false,
        round_done: 0,
        round_total: 0,
        offline_reason: "connection refused",
      }),
      retry_now: () => null,
    });
    renderUi(<OutboxPage />);
    const row = await screen.findByTestId("outbox-3");
    await waitFor(() =>
      expect(within(row).getByTestId("next-try")).toHaveTextContent("when sandbox answers"),
    );
    fireEvent.click(within(row).getByTestId("retry-now"));
    expect(await screen.findByText("sandbox is unreachable")).toBeInTheDocument();
    expect(screen.getByText(/connection refused\. Nothing is lost/)).toBeInTheDocument();
  });
});

describe("nextTry", () => {
  it("counts down to the next attempt", () => {
    const now = 1_000_000;
    expect(nextTry(outboxEntry({ state: "pending", next_attempt_at: now + 90_000 }), now)).toBe(
      "in 1 min",
    );
    expect(nextTry(outboxEntry({ state: "pending", next_attempt_at: now - 1 }), now)).toBe(
      "due now",
    );
    expect(nextTry(outboxEntry({ state: "sending" }), now)).toBe("sending now");
  });
});

describe("waitingSummary", () => {
  const waiting = (profile: string, id: number) => outboxEntry({ id, profile });
  it("never says every change is confirmed while this plane's writes wait", () => {
    expect(waitingSummary([waiting("offline-cp", 1), waiting("offline-cp", 2)], "offline-cp")).toBe(
      "2 waiting for offline-cp.",
    );
  });
  it("names what waits elsewhere, and says confirmed only when nothing waits anywhere", () => {
    expect(waitingSummary([waiting("prod", 1)], "sandbox")).toBe(
      "Nothing waiting for sandbox; 1 waiting for prod.",
    );
    expect(waitingSummary([waiting("sandbox", 1), waiting("prod", 2)], "sandbox")).toBe(
      "1 waiting for sandbox; 1 waiting for prod.",
    );
    expect(waitingSummary([outboxEntry({ state: "done" })], "sandbox")).toBe(
      "Nothing waiting for sandbox: every change is confirmed.",
    );
  });
});

describe("triesWords", () => {
  it("says what the tries were, so connection failures do not read as requests received", () => {
    expect(triesWords({ attempts: 0, error: null })).toBe("not tried yet");
    expect(triesWords({ attempts: 17, error: { status: null } })).toBe(
      "17 tries; the last got no answer",
    );
    expect(triesWords({ attempts: 1, error: { status: 503 } })).toBe(
      "1 try; the last answered HTTP 503",
    );
  });
});
