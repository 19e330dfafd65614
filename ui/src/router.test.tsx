// The pages as routes (`ui/src/router.tsx`): links into the DLQ with its filter, the filter
// written back to the URL, malformed params dropped, and the app opening on the route named.
import { fireEvent, screen, waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { App } from "./App";
import type { DlqFilterInput } from "./ipc/bindings";
import { validateDlqSearch } from "./lib/dlq";
import { mockCommands, onlineStatus, overviewOf, renderUi } from "./test/render";
import { renderAt } from "./test/router";

const dlq = () => ({
  dlq_stats: () => ({ total: 0, groups: [] }),
  dlq_page: () => ({ items: [], next_cursor: null }),
  list_resources: () => [],
});

const lastPageFilter = (calls: [string, unknown][]) =>
  (calls.filter(([c]) => c === "dlq_page").at(-1)?.[1] as { filter: DlqFilterInput } | undefined)
    ?.filter;

describe("the DLQ route", () => {
  it("opens filtered by its search params, and a changed filter updates the URL", async () => {
    localStorage.clear();
    const calls = mockCommands(dlq());
    await renderAt("/dlq?target=legacy-erp&error_class=timeout");
    // The DLQ page's script loads on first use (router.tsx): its first import here is slow.
    expect(await screen.findByTestId("filter-target", {}, { timeout: 5000 })).toHaveValue(
      "legacy-erp",
    );
    expect(screen.getByTestId("filter-error-class")).toHaveValue("timeout");
    await waitFor(() =>
      expect(lastPageFilter(calls)).toMatchObject({ target: "legacy-erp", error_class: "timeout" }),
    );
    fireEvent.change(screen.getByTestId("filter-target"), { target: { value: "crm" } });
    await waitFor(() => expect(window.location.hash).toBe("#/dlq?target=crm&error_class=timeout"));
    await waitFor(() => expect(lastPageFilter(calls)?.target).toBe("crm"));
  });

  it("drops an unknown error class and a malformed time instead of failing", async () => {
    localStorage.clear();
    const calls = mockCommands(dlq());
    await renderAt("/dlq?error_class=boom&since=yesterday&endpoint=orders");
    expect(await screen.findByTestId("filter-endpoint", {}, { timeout: 5000 })).toHaveValue(
      "orders",
    );
    expect(screen.getByTestId("filter-error-class")).toHaveValue("");
    fireEvent.click(screen.getByTestId("filter-more"));
    expect(screen.getByLabelText("Dead since")).toHaveValue("");
    await waitFor(() =>
      expect(lastPageFilter(calls)).toEqual({
        endpoint: "orders",
        target: null,
        flow: null,
        error_class: null,
        since: null,
        until: null,
      }),
    );
    expect(validateDlqSearch({ error_class: "boom", since: "yesterday", x: "1", q: "  " })).toEqual(
      {},
    );
    expect(validateDlqSearch({ since: "2031-01-02T03:04:00Z", error_class: "tls" })).toEqual({
      error_class: "tls",
      since: "2031-01-02T03:04:00.000Z",
    });
  });
});

const status = onlineStatus();

const overview = overviewOf();

const app = () => ({
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
  list_replay_writes: () => [],
  ...dlq(),
});

describe("the app's routes", () => {
  it("a link to #/dlq?target=… opens the DLQ page filtered", async () => {
    localStorage.clear();
    window.history.replaceState(null, "", "#/dlq?target=legacy-erp");
    mockCommands(app());
    renderUi(<App />);
    await waitFor(() => expect(screen.getByTestId("filter-target")).toHaveValue("legacy-erp"), {
      timeout: 5000,
    });
    expect(screen.getByTestId("nav-dlq")).toHaveAttribute("data-active");
  });

  it("a link from before routes (#dlq?target=…) opens the same view", async () => {
    localStorage.clear();
    window.history.replaceState(null, "", "#dlq?target=legacy-erp");
    mockCommands(app());
    renderUi(<App />);
    await waitFor(() => expect(screen.getByTestId("filter-target")).toHaveValue("legacy-erp"));
    expect(window.location.hash).toBe("#/dlq?target=legacy-erp");
  });

  it("drops the DLQ's ticks once the ticked deliveries are replayed", async () => {
    localStorage.clear();
    const dead = (i: number) => ({
      delivery_id: `dlv_${i}`,
      event_id: `evt_${i}`,
      event_type: "order.paid",
      endpoint: "orders",
      flow: "to-crm",
      target: "crm",
      error_class: "http_5xx" as const,
      last_status_code: 500,
      attempts: 5,
      dead_at: Date.now() - i * 1000,
      replay_session: null,
    });
    const calls = mockCommands({
      ...app(),
      dlq_stats: () => ({ total: 2, groups: [] }),
      dlq_page: () => ({ items: [dead(1), dead(2)], next_cursor: null }),
      retry_schedule: () => [0, 10_000],
      new_replay_id: () => "rpl_1",
      replay_dry_run: () => 1,
      start_replay: ({ input }) => ({
        id: 1,
        action: "start",
        session_id: input.session_id,
        state: "confirmed",
        attempts: 1,
        error: null,
        created_at: Date.now(),
        origin: { via: "console" },
      }),
      list_replays: () => [],
    });
    renderUi(<App />);
    fireEvent.click(screen.getByTestId("nav-dlq"));
    const boxes = await screen.findAllByLabelText("select", {}, { timeout: 10_000 });
    fireEvent.click(boxes[0]);
    expect(screen.getByTestId("replay-selected")).toHaveTextContent("Replay selected (1)");
    fireEvent.click(screen.getByTestId("replay-selected"));
    const start = await screen.findByTestId("replay-start");
    await waitFor(() => expect(start).toBeEnabled());
    fireEvent.click(start);
    await waitFor(() => expect(calls.some(([c]) => c === "start_replay")).toBe(true));
    // The app shows the new session; back on the DLQ, nothing is still ticked (the ticks
    // survive a visit to Replays, but not the replay of what they ticked).
    await waitFor(() => expect(window.location.hash).toBe("#/replays"));
    fireEvent.click(screen.getByTestId("nav-dlq"));
    expect(await screen.findByTestId("replay-selected")).toHaveTextContent("Replay selected (0)");
  }, 30_000);

  it("the DLQ reopens on the view it was left with; a page change is a route", async () => {
    localStorage.clear();
    mockCommands({ ...app(), list_audit: () => [] });
    renderUi(<App />);
    fireEvent.click(screen.getByTestId("nav-dlq"));
    fireEvent.click(await screen.findByTestId("filter-more"));
    fireEvent.change(await screen.findByTestId("filter-flow"), { target: { value: "to-crm" } });
    await waitFor(() => expect(window.location.hash).toBe("#/dlq?flow=to-crm"));
    fireEvent.click(screen.getByTestId("nav-activity"));
    await waitFor(() => expect(window.location.hash).toBe("#/activity"));
    expect(await screen.findByLabelText("Filter activity")).toBeInTheDocument();
    fireEvent.click(screen.getByTestId("nav-dlq"));
    await waitFor(() => expect(screen.getByTestId("filter-flow")).toHaveValue("to-crm"));
    expect(window.location.hash).toBe("#/dlq?flow=to-crm");
  });

  it("an unknown route shows the overview", async () => {
    window.history.replaceState(null, "", "#/nowhere");
    mockCommands(app());
    renderUi(<App />);
    await waitFor(() => expect(screen.getByTestId("stat-endpoints")).toHaveTextContent("3"));
    expect(screen.getByTestId("nav-overview")).toHaveAttribute("data-active");
  });

  it("the palette's New endpoint opens the form once the Endpoints page is there", async () => {
    mockCommands(app());
    renderUi(<App />);
    fireEvent.click(screen.getByTestId("palette-button"));
    const search = await screen.findByPlaceholderText("Jump to a page, resource or action…");
    fireEvent.change(search, { target: { value: "New endpoint" } });
    fireEvent.click(await screen.findByRole("button", { name: /New endpoint/ }));
    await waitFor(() => expect(window.location.hash).toBe("#/endpoint"));
    expect(await screen.findByTestId("field-name")).toBeInTheDocument();
  });
});
