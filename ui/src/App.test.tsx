import { spotlight } from "@mantine/spotlight";
import { act, fireEvent, screen, waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { App } from "./App";
import { mockCommands, onlineStatus, overviewOf, renderUi } from "./test/render";

const status = onlineStatus();

const overview = overviewOf({ endpoints: 10_004, targets: 5, flows: 5, disabled_endpoints: 1 });

/** What the shell asks for at launch. */
const shell = {
  sync_status: () => status,
  overview: () => overview,
  check_health: () => ({
    ok: true,
    latency_ms: 1,
    server_version: "0.1.0",
    role: null,
    error: null,
  }),
  ui_ready: () => 1,
};

describe("App", () => {
  it("launches without loading every resource, and the palette searches the cache as you type", async () => {
    const calls = mockCommands({
      ...shell,
      search_resources: ({ query }) =>
        ["orders", "orders-eu", "billing"]
          .filter((name) => name.includes(query))
          .map((name) => ({ kind: "endpoint" as const, name })),
    });
    renderUi(<App />);
    await waitFor(() => expect(screen.getByTestId("stat-endpoints")).toHaveTextContent("10004"));
    await waitFor(() => expect(calls.some(([cmd]) => cmd === "ui_ready")).toBe(true));
    expect(calls.some(([cmd]) => cmd === "list_resources")).toBe(false);

    fireEvent.click(screen.getByTestId("palette-button"));
    const search = await screen.findByPlaceholderText("Jump to a page, resource or action…");
    fireEvent.change(search, { target: { value: "orders" } });
    // Labels are split by the query highlight, so read the text as a person would.
    await waitFor(() => expect(document.body.textContent).toContain("orders-eu"));
    expect(document.body.textContent).not.toContain("billing");
    expect(calls).toContainEqual([
      "search_resources",
      { profile: "sandbox", query: "orders", limit: 30 },
    ]);
  });

  // Ctrl+2 inside the DLQ's target filter did nothing: Mantine's hotkeys skip text fields by
  // default. Ctrl shortcuts now work from anywhere; the bare "/" still types a slash there.
  it("Ctrl shortcuts work from inside a text field", async () => {
    mockCommands({
      ...shell,
      list_resources: () => [],
      list_outbox: () => [],
      list_audit: () => [],
      dlq_stats: () => ({ total: 0, groups: [] }),
    });
    renderUi(<App />);
    fireEvent.click(screen.getByTestId("nav-activity"));
    const field = await screen.findByLabelText("Filter activity");
    field.focus();
    fireEvent.keyDown(field, { key: "2", code: "Digit2", ctrlKey: true });
    await waitFor(() => expect(screen.getByTestId("nav-endpoint")).toHaveAttribute("data-active"));
  });

  // "/" with a modal open moved focus to the filter behind the overlay: typing went there and
  // the list then said "No rows match".
  it("/ leaves the page filter alone while a modal is open", async () => {
    mockCommands({
      ...shell,
      list_resources: () => [],
      gitops_managed: () => [],
    });
    // The palette is a global store: an earlier test left it open.
    act(() => spotlight.close());
    renderUi(<App />);
    fireEvent.click(screen.getByTestId("nav-endpoint"));
    const filter = await screen.findByTestId("table-filter");
    fireEvent.keyDown(document.body, { key: "/", code: "Slash" });
    await waitFor(() => expect(document.activeElement).toBe(filter));
    filter.blur();
    fireEvent.click(screen.getByTestId("new-resource"));
    const dialog = await screen.findByRole("dialog");
    fireEvent.keyDown(dialog, { key: "/", code: "Slash" });
    await new Promise((r) => setTimeout(r, 50));
    expect(document.activeElement).not.toBe(filter);
  });
});
