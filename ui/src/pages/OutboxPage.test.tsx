import { fireEvent, screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { mockCommands, outboxEntry, renderUi } from "../test/render";
import { nextTry, OutboxPage } from "./OutboxPage";

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
    expect(await screen.findByTestId("outbox-empty")).toHaveTextContent(
      "every change is confirmed",
    );
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
