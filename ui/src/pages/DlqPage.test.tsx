import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { DlqEntryView, DlqFilterInput } from "../ipc/bindings";
import { type CallLog, mockCommands } from "../test/render";
import { renderAt } from "../test/router";

const entry = (i: number, target: string): DlqEntryView => ({
  delivery_id: `dlv_${i}`,
  event_id: `evt_${i}`,
  event_type: i % 2 ? "order.paid" : "order.refunded",
  endpoint: "orders",
  flow: `to-${target}`,
  target,
  error_class: "http_5xx",
  last_status_code: 500,
  attempts: 5,
  dead_at: Date.now() - i * 1000,
  replay_session: null,
});

describe("DlqPage", () => {
  it("counts dead deliveries newer than the list and shows them on request", async () => {
    localStorage.clear();
    const all = [entry(1, "crm"), entry(2, "erp")];
    mockCommands({
      dlq_stats: ({ filter }: { filter: DlqFilterInput | null }) => ({
        total: all.filter((e) => filter?.since == null || e.dead_at >= filter.since).length,
        groups: [],
      }),
      dlq_page: () => ({
        items: [...all].sort((a, b) => b.dead_at - a.dead_at),
        next_cursor: null,
      }),
      retry_schedule: () => [0, 10_000, 60_000, 600_000, 3_600_000],
    });
    await renderAt("/dlq");
    // The DLQ page's script loads on first use (router.tsx): the file's first render waits
    // for its import, which takes seconds on a busy machine.
    await waitFor(() => expect(screen.getByTestId("dlq-loaded")).toHaveTextContent("2 shown"), {
      timeout: 10_000,
    });
    expect(screen.queryByTestId("dlq-new")).toBeNull();
    all.push({ ...entry(9, "crm"), delivery_id: "dlv_new", dead_at: Date.now() + 1000 });
    await waitFor(
      () => expect(screen.getByTestId("dlq-new")).toHaveTextContent("1 new — show them"),
      {
        timeout: 8000,
      },
    );
    // It sits over the tab row, out of the flow: its coming moves neither the tabs nor the
    // rows under the pointer (in the button row it wrapped the row and pushed them down).
    expect(within(screen.getByTestId("dlq-tabs-row")).getByTestId("dlq-new")).toBeVisible();
    expect(screen.getByTestId("dlq-notices")).toHaveStyle({ position: "absolute" });
    fireEvent.click(screen.getByTestId("dlq-new"));
    await waitFor(() => expect(screen.getByTestId("dlq-loaded")).toHaveTextContent("3 shown"));
    await waitFor(() => expect(screen.queryByTestId("dlq-new")).toBeNull(), { timeout: 8000 });
  }, 30_000);

  it("an empty DLQ says what lands in it", async () => {
    localStorage.clear();
    mockCommands({
      dlq_stats: () => ({ total: 0, groups: [] }),
      dlq_page: () => ({ items: [], next_cursor: null }),
      retry_schedule: () => [0, 10_000, 60_000, 600_000, 3_600_000],
    });
    await renderAt("/dlq");
    expect(
      await screen.findByText(/deliveries that exhaust their 5 attempts land here/),
    ).toBeInTheDocument();
  });

  it("a filter goes to the server, lands in the URL, and narrows the rows", async () => {
    localStorage.clear();
    const all = [entry(1, "crm"), entry(2, "erp"), entry(3, "crm")];
    const calls = mockCommands({
      dlq_stats: () => ({ total: 3, groups: [] }),
      dlq_page: ({ filter }: { filter: DlqFilterInput }) => ({
        items: all.filter((e) => !filter.target || e.target === filter.target),
        next_cursor: null,
      }),
    });
    await renderAt("/dlq");
    await waitFor(() => expect(screen.getByTestId("dlq-loaded")).toHaveTextContent("3 shown"));
    fireEvent.change(screen.getByTestId("filter-target"), { target: { value: "crm" } });
    await waitFor(() => expect(screen.getByTestId("dlq-loaded")).toHaveTextContent("2 shown"));
    expect(window.location.hash).toBe("#/dlq?target=crm");
    const last = calls.filter(([c]) => c === "dlq_page").at(-1)?.[1] as {
      filter: DlqFilterInput;
      limit: number;
    };
    expect(last.filter.target).toBe("crm");
    expect(last.limit).toBe(200);
    // Free text narrows what is loaded, without another server call for the same filter.
    fireEvent.change(screen.getByTestId("filter-text"), { target: { value: "refunded" } });
    await waitFor(() => expect(screen.getByTestId("dlq-loaded")).toHaveTextContent("0 shown"));
    expect(window.location.hash).toBe("#/dlq?target=crm&q=refunded");
  });

  it("the by-cause matrix is one server call with the current filter", async () => {
    localStorage.clear();
    const calls = mockCommands({
      dlq_stats: () => ({ total: 11, groups: [] }),
      dlq_page: () => ({ items: [], next_cursor: null }),
      dlq_causes: () => [
        { error_class: "http_5xx", target: "crm", count: 8 },
        { error_class: "timeout", target: "erp", count: 2 },
        { error_class: "http_5xx", target: "erp", count: 1 },
      ],
    });
    await renderAt("/dlq?endpoint=orders");
    fireEvent.click(await screen.findByTestId("tab-causes"));
    await waitFor(() => expect(screen.getByTestId("cause-http_5xx-crm")).toHaveTextContent("8"));
    expect(screen.getByTestId("cause-http_5xx-erp")).toHaveTextContent("1");
    expect(screen.getByTestId("cause-timeout-erp")).toHaveTextContent("2");
    expect(screen.getByTestId("cause-timeout-crm")).toHaveTextContent("");
    const causeCalls = calls.filter(([c]) => c === "dlq_causes");
    expect(causeCalls).toHaveLength(1);
    expect((causeCalls[0][1] as { filter: DlqFilterInput }).filter.endpoint).toBe("orders");
    // A cell narrows the entries to that pair.
    fireEvent.click(screen.getByTestId("cause-timeout-erp"));
    await waitFor(() =>
      expect(window.location.hash).toBe("#/dlq?endpoint=orders&target=erp&error_class=timeout"),
    );
  });
});

describe("DlqPage filters and empty states", () => {
  const names = (kind: string, list: string[]) =>
    list.map((name) => ({
      kind: kind as "endpoint",
      name,
      version: 1,
      updated_at: null,
      spec: {},
      status: {},
      pending: null,
    }));

  // The filters needed the exact name and a near miss showed a blank table, with replay on.
  it("offers the known names, explains an empty result, and disables replay at zero", async () => {
    localStorage.clear();
    mockCommands({
      dlq_stats: ({ filter }) => ({ total: filter?.target ? 0 : 47, groups: [] }),
      dlq_page: ({ filter }) => ({
        items: filter.target ? [] : [entry(1, "legacy-erp")],
        next_cursor: null,
      }),
      list_resources: ({ kind }) =>
        names(kind, kind === "target" ? ["legacy-erp", "warehouse"] : ["payments"]),
    });
    await renderAt("/dlq");
    await waitFor(() => expect(screen.getByTestId("dlq-loaded")).toHaveTextContent("1 shown"));
    const target = screen.getByTestId("filter-target");
    fireEvent.focus(target);
    fireEvent.change(target, { target: { value: "legacy" } });
    // The known target is offered as you type.
    expect(await screen.findByRole("option", { name: "legacy-erp" })).toBeInTheDocument();
    // The near miss is explained, and replaying nothing is not offered.
    await waitFor(() =>
      expect(screen.getByTestId("dlq-empty")).toHaveTextContent(
        "No dead deliveries match target = 'legacy': no target has that exact name (did you mean legacy-erp?).",
      ),
    );
    expect(screen.getByTestId("replay-filter")).toBeDisabled();
  });

  it("keeps every row one line high: cells cut long names with an ellipsis", async () => {
    localStorage.clear();
    const long = "inventory-events-from-the-eu-central-warehouse-cluster-number-7";
    mockCommands({
      dlq_stats: () => ({ total: 1, groups: [] }),
      dlq_page: () => ({ items: [{ ...entry(1, long), flow: long }], next_cursor: null }),
      list_resources: () => [],
    });
    await renderAt("/dlq");
    const cell = await screen.findByTestId("dlq-target");
    expect(cell).toHaveAttribute("title", long);
    expect(cell).toHaveStyle({
      whiteSpace: "nowrap",
      overflow: "hidden",
      textOverflow: "ellipsis",
    });
  });
});

describe("DlqPage dates, live count and charts", () => {
  /** The filter of the last `command` call (of the `groupBy` grouping, for stats). */
  const lastFilter = (calls: CallLog, command: string, groupBy?: string) => {
    const sent = calls
      .map(([c, args]) => ({
        c,
        args: args as { groupBy?: string; filter: DlqFilterInput | null },
      }))
      .filter(({ c, args }) => c === command && (!groupBy || args.groupBy === groupBy));
    return sent.at(-1)?.args.filter;
  };

  it("labels the date fields, and a quick range fills Dead since and clears Dead until", async () => {
    localStorage.clear();
    const calls = mockCommands({
      dlq_stats: () => ({ total: 0, groups: [] }),
      dlq_page: () => ({ items: [], next_cursor: null }),
      list_resources: () => [],
    });
    await renderAt("/dlq");
    // Flow and the dates are in the second row, closed until asked for (or set).
    expect(screen.queryByLabelText("Dead since")).toBeNull();
    fireEvent.click(screen.getByTestId("filter-more"));
    const since = screen.getByLabelText("Dead since");
    const until = screen.getByLabelText("Dead until");
    expect(since).toHaveValue("");
    expect(since).toHaveAttribute("placeholder", "any");
    fireEvent.change(until, { target: { value: "2031-01-02T03:04" } });
    await waitFor(() =>
      expect(lastFilter(calls, "dlq_page")?.until).toBe(Date.parse("2031-01-02T03:04")),
    );
    const before = Date.now();
    fireEvent.click(screen.getByRole("button", { name: "1 h" }));
    const after = Date.now();
    await waitFor(() => expect(lastFilter(calls, "dlq_page")?.until).toBeNull());
    const sent = lastFilter(calls, "dlq_page")?.since ?? 0;
    expect(sent).toBeGreaterThanOrEqual(before - 3_600_000);
    expect(sent).toBeLessThanOrEqual(after - 3_600_000);
    // The field shows the same moment, to the minute, in local time.
    expect(Date.parse((since as HTMLInputElement).value)).toBe(Math.floor(sent / 60_000) * 60_000);
    expect(until).toHaveValue("");
    expect(screen.getByTestId("filter-more")).toHaveTextContent("Fewer filters (1 set)");
  });

  it("keeps the filters in one row, and opens the second by itself when one of it is set", async () => {
    localStorage.clear();
    mockCommands({
      dlq_stats: () => ({ total: 0, groups: [] }),
      dlq_page: () => ({ items: [], next_cursor: null }),
      list_resources: () => [],
    });
    await renderAt("/dlq?flow=to-crm");
    const more = await screen.findByTestId("filter-more", {}, { timeout: 10_000 });
    expect(more).toHaveTextContent("Fewer filters (1 set)");
    expect(screen.getByTestId("filter-flow")).toHaveValue("to-crm");
    // Closed, the set filter still counts (it still applies).
    fireEvent.click(more);
    expect(screen.queryByTestId("dlq-filters-more")).toBeNull();
    expect(more).toHaveTextContent("More filters (1 set)");
    // The first row holds the four most used filters and the button, nothing else.
    const first = screen.getByTestId("dlq-filters").firstElementChild as HTMLElement;
    expect(
      within(first)
        .getAllByRole("textbox")
        .map((e) => e.getAttribute("aria-label")),
    ).toEqual(["endpoint", "target", "error class", "text"]);
  });

  it("says when the live count differs from the loaded list, and reloads on a click", async () => {
    localStorage.clear();
    let dead = [entry(1, "crm"), entry(2, "erp"), entry(3, "crm")];
    mockCommands({
      // Five in the DLQ, none newer than the list's newest row (some older ones appeared).
      dlq_stats: ({ filter }: { filter: DlqFilterInput | null }) => ({
        total: filter?.since != null ? 0 : 5,
        groups: [],
      }),
      dlq_page: () => ({ items: dead, next_cursor: null }),
      list_resources: () => [],
    });
    await renderAt("/dlq");
    await waitFor(() => expect(screen.getByTestId("dlq-loaded")).toHaveTextContent("3 shown"));
    const changed = await screen.findByRole("button", {
      name: "The DLQ changed: 5 now in it — load them",
    });
    dead = [...dead, entry(4, "erp"), entry(5, "crm")];
    fireEvent.click(changed);
    await waitFor(() => expect(screen.getByTestId("dlq-loaded")).toHaveTextContent("5 shown"));
    expect(screen.queryByRole("button", { name: /The DLQ changed/ })).toBeNull();
  });

  it("the charts count what the filter matches: a new filter is a new stats query", async () => {
    localStorage.clear();
    const calls = mockCommands({
      dlq_stats: () => ({ total: 2, groups: [] }),
      dlq_page: () => ({ items: [entry(1, "crm"), entry(2, "erp")], next_cursor: null }),
      list_resources: () => [],
    });
    await renderAt("/dlq");
    fireEvent.click(await screen.findByRole("tab", { name: "Charts" }));
    await waitFor(() =>
      expect(screen.getByTestId("charts-scope")).toHaveTextContent(
        "Counts from the server, the whole DLQ.",
      ),
    );
    expect(lastFilter(calls, "dlq_stats", "hour")).toBeNull();
    fireEvent.change(screen.getByTestId("filter-target"), { target: { value: "crm" } });
    await waitFor(() =>
      expect(screen.getByTestId("charts-scope")).toHaveTextContent(
        "Counts from the server, matching target = crm.",
      ),
    );
    expect(lastFilter(calls, "dlq_stats", "hour")).toMatchObject({ target: "crm", endpoint: null });
  });
});

describe("DlqPage charts", () => {
  it("an empty DLQ says what the charts will show and why, with the server's attempt count", async () => {
    localStorage.clear();
    mockCommands({
      dlq_stats: () => ({ total: 0, groups: [] }),
      dlq_page: () => ({ items: [], next_cursor: null }),
      list_resources: () => [],
      retry_schedule: () => [0, 10_000, 60_000, 600_000, 3_600_000],
    });
    await renderAt("/dlq");
    fireEvent.click(await screen.findByRole("tab", { name: "Charts" }));
    await waitFor(() =>
      expect(screen.getByTestId("charts-empty")).toHaveTextContent(
        "The DLQ is empty. Deliveries that exhaust their 5 attempts land here",
      ),
    );
  });

  it("without the schedule it says 'their retry schedule'", async () => {
    localStorage.clear();
    mockCommands({
      dlq_stats: () => ({ total: 0, groups: [] }),
      dlq_page: () => ({ items: [], next_cursor: null }),
      list_resources: () => [],
    });
    await renderAt("/dlq");
    fireEvent.click(await screen.findByRole("tab", { name: "Charts" }));
    await waitFor(() =>
      expect(screen.getByTestId("charts-empty")).toHaveTextContent(
        "Deliveries that exhaust their retry schedule land here",
      ),
    );
  });

  it("draws the three charts with labels, and a class in the legend filters the entries", async () => {
    localStorage.clear();
    const hour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000).toISOString();
    mockCommands({
      dlq_stats: ({ groupBy }) =>
        groupBy === "hour"
          ? { total: 3, groups: [{ key: hour, count: 3 }] }
          : groupBy === "target"
            ? {
                total: 3,
                groups: [
                  { key: "crm", count: 2 },
                  { key: "erp", count: 1 },
                ],
              }
            : {
                total: 3,
                groups: [
                  { key: "http_5xx", count: 2 },
                  { key: "timeout", count: 1 },
                ],
              },
      dlq_page: () => ({ items: [entry(1, "crm"), entry(2, "erp")], next_cursor: null }),
      list_resources: () => [],
      retry_schedule: () => [0, 10_000],
    });
    await renderAt("/dlq");
    fireEvent.click(await screen.findByRole("tab", { name: "Charts" }));
    expect(await screen.findByTestId("chart-hourly")).toHaveAttribute(
      "aria-label",
      "Dead deliveries per hour over the last 24 hours, bar chart",
    );
    expect(screen.getByTestId("chart-targets")).toBeInTheDocument();
    expect(screen.getByTestId("chart-classes")).toBeInTheDocument();
    expect(
      screen.getByText(/Dead deliveries per hour, last 24 h \(local time/),
    ).toBeInTheDocument();
    expect(
      screen.getByText(/3 dead deliveries in the last 24 hours, most in the hour from/),
    ).toBeInTheDocument();
    await waitFor(() =>
      expect(screen.getByTestId("class-timeout")).toHaveTextContent("timeout: 1 (33 %)"),
    );
    fireEvent.click(screen.getByTestId("class-timeout"));
    await waitFor(() => expect(window.location.hash).toBe("#/dlq?error_class=timeout"));
    // Back on the entries.
    expect(screen.getByRole("tab", { name: "Entries" })).toHaveAttribute("aria-selected", "true");
  });
});
