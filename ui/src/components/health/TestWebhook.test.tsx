import { fireEvent, screen, waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { TargetTestInput, TargetTestView } from "../../ipc/bindings";
import { mockCommands, renderUi } from "../../test/render";
import { TestWebhook } from "./TestWebhook";

const queued = (id: number, key: string): TargetTestView => ({
  id,
  target: "crm",
  key,
  state: "saved_locally",
  attempts: 0,
  error: null,
  error_code: null,
  result: null,
  created_at: Date.now(),
});

describe("Send test webhook", () => {
  it("queues one test with its own key, shows it saved locally, then what the receiver answered", async () => {
    const tests: TargetTestView[] = [];
    let lists = 0;
    const calls = mockCommands({
      list_target_tests: () => {
        lists += 1;
        // The second look after queuing finds it answered.
        const first = tests[0];
        if (first && lists > 2) {
          tests[0] = {
            ...first,
            state: "confirmed",
            attempts: 1,
            result: {
              ok: false,
              status_code: 503,
              error_class: "http_5xx",
              error: "HTTP 503 Service Unavailable",
              duration_ms: 12,
              webhook_id: first.key,
              tested_at: new Date().toISOString(),
            },
          };
        }
        return [...tests];
      },
      test_target: ({ input }: { input: TargetTestInput }) => {
        const t = queued(tests.length + 1, input.key);
        tests.unshift(t);
        return t;
      },
    });
    renderUi(<TestWebhook target="crm" />);
    expect(await screen.findByTestId("test-webhook-none")).toHaveTextContent(
      "No test sent from this console yet.",
    );
    fireEvent.click(screen.getByTestId("test-webhook-send"));
    await waitFor(() =>
      expect(screen.getByTestId("test-webhook-state")).toHaveTextContent("Saved locally"),
    );
    await waitFor(
      () => expect(screen.getByTestId("test-webhook-state")).toHaveTextContent("Confirmed"),
      { timeout: 4000 },
    );
    expect(screen.getByTestId("test-webhook-verdict")).toHaveTextContent(
      "Receiver did not accept it: HTTP 503 (HTTP 5xx) in 12 ms",
    );
    const sent = calls
      .filter(([c]) => c === "test_target")
      .map(([, a]) => a as { profile: string; input: TargetTestInput });
    expect(sent).toHaveLength(1);
    expect(sent[0].profile).toBe("sandbox");
    expect(sent[0].input.target).toBe("crm");
    expect(sent[0].input.key).toMatch(/^[0-9a-f-]{36}$/);
    // Settled: the list is no longer polled.
    const settled = lists;
    await new Promise((r) => setTimeout(r, 1500));
    expect(lists).toBe(settled);
  });

  it("a test the control plane refused says why", async () => {
    mockCommands({
      list_target_tests: () => [
        {
          ...queued(3, "k"),
          state: "needs_attention",
          attempts: 1,
          error: 'HTTP 404: target "crm" not found',
          error_code: "not_found",
        },
      ],
    });
    renderUi(<TestWebhook target="crm" />);
    await waitFor(() =>
      expect(screen.getByTestId("test-webhook-state")).toHaveTextContent("Needs attention"),
    );
    expect(screen.getByTestId("test-webhook-verdict")).toHaveTextContent('target "crm" not found');
  });
});
