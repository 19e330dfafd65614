import { MantineProvider } from "@mantine/core";
import { act, fireEvent, render, screen, within } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import type { DlqEntryView } from "../../ipc/bindings";
import { renderUi } from "../../test/render";
import { DlqTable } from "./DlqTable";

const entry = (over: Partial<DlqEntryView> = {}): DlqEntryView => ({
  delivery_id: "dlv_1",
  event_id: "evt_1",
  event_type: "order.paid",
  endpoint: "orders",
  flow: "orders-to-crm",
  target: "crm",
  error_class: "http_5xx",
  last_status_code: 500,
  attempts: 5,
  dead_at: Date.now(),
  replay_session: null,
  ...over,
});

const props = {
  hasNextPage: false,
  isFetchingNextPage: false,
  fetchNextPage: () => {},
  selected: new Set<string>(),
  onToggle: () => {},
  onOpen: () => {},
};

describe("DlqTable rows", () => {
  it("cuts a 200-character flow name to one line and keeps the whole name in its tooltip", () => {
    const flow = `flow-${"x".repeat(190)}-end`.padEnd(200, "y");
    expect(flow).toHaveLength(200);
    renderUi(
      <DlqTable
        {...props}
        rows={[entry({ flow, target: `${flow}-target`, endpoint: `${flow}-endpoint` })]}
      />,
    );
    const cell = screen.getByTestId("dlq-flow");
    expect(cell).toHaveTextContent(flow);
    // The full value is reachable: the cell's tooltip (title) is the whole name.
    expect(cell).toHaveAttribute("title", flow);
    // One line, cut with an ellipsis, never wider than its grid column.
    expect(cell).toHaveStyle({
      whiteSpace: "nowrap",
      overflow: "hidden",
      textOverflow: "ellipsis",
      minWidth: "0",
    });
    expect(screen.getByTestId("dlq-target")).toHaveAttribute("title", `${flow}-target`);
    expect(screen.getByTestId("dlq-endpoint")).toHaveAttribute("title", `${flow}-endpoint`);
    // The row keeps the virtualised height and clips anything that would reach the next row.
    const row = screen.getByTestId("dlq-row");
    expect(row).toHaveStyle({ height: "34px", overflow: "hidden", whiteSpace: "nowrap" });
  });

  it("gives every cell its full value as a tooltip", () => {
    renderUi(<DlqTable {...props} rows={[entry({ last_status_code: null })]} />);
    const row = screen.getByTestId("dlq-row");
    const titled = [...row.querySelectorAll("[title]")].map((el) => el.getAttribute("title"));
    expect(titled).toEqual(
      expect.arrayContaining(["order.paid", "orders", "orders-to-crm", "crm", "http_5xx", "-"]),
    );
    // Dead at, event type, endpoint, flow, target, class, status.
    expect(titled).toHaveLength(7);
  });
});

describe("DlqTable window", () => {
  const many = (n: number) =>
    Array.from({ length: n }, (_, i) => entry({ delivery_id: `dlv_${i}`, dead_at: 1e9 - i }));

  it("shows the pages dropped above as placeholders and fetches them only on the way up", async () => {
    const fetchPreviousPage = vi.fn();
    const fetchNextPage = vi.fn();
    renderUi(
      <DlqTable
        {...props}
        rows={many(200)}
        before={400}
        hasNextPage
        fetchNextPage={fetchNextPage}
        hasPreviousPage
        fetchPreviousPage={fetchPreviousPage}
      />,
    );
    const scroll = screen.getByTestId("dlq-scroll");
    // At the top: placeholders of one row's height each, nothing fetched yet.
    expect(screen.getAllByTestId("dlq-earlier").length).toBeGreaterThan(0);
    expect(screen.queryAllByTestId("dlq-row")).toHaveLength(0);
    expect(fetchPreviousPage).not.toHaveBeenCalled();
    // Down into the kept rows (row 420): nothing is fetched either way.
    await act(async () => {
      scroll.scrollTop = 420 * 34;
      fireEvent.scroll(scroll);
    });
    expect(screen.getAllByTestId("dlq-row").length).toBeGreaterThan(0);
    expect(fetchPreviousPage).not.toHaveBeenCalled();
    expect(fetchNextPage).not.toHaveBeenCalled();
    // Up towards the first kept row: the page before it is fetched again.
    await act(async () => {
      scroll.scrollTop = 410 * 34;
      fireEvent.scroll(scroll);
    });
    expect(fetchPreviousPage).toHaveBeenCalled();
    expect(fetchNextPage).not.toHaveBeenCalled();
    // Down towards the end of the kept rows: the next page.
    await act(async () => {
      scroll.scrollTop = 580 * 34;
      fireEvent.scroll(scroll);
    });
    expect(fetchNextPage).toHaveBeenCalled();
  });

  it("recycles its row elements while scrolling, each showing the row now in its place", async () => {
    const rows = many(1000).map((r, i) => ({ ...r, flow: `flow-${i}`, event_type: `type.${i}` }));
    const selected = new Set(rows.filter((_, i) => i % 7 === 0).map((r) => r.delivery_id));
    renderUi(<DlqTable {...props} rows={rows} selected={selected} />);
    const scroll = screen.getByTestId("dlq-scroll");
    const elements = new Set<HTMLElement>(screen.getAllByTestId("dlq-row"));
    let most = elements.size;
    for (let top = 0; top <= 600; top += 3) {
      await act(async () => {
        scroll.scrollTop = top * 34;
        fireEvent.scroll(scroll);
      });
      const shown = screen.getAllByTestId("dlq-row");
      most = Math.max(most, shown.length);
      for (const el of shown) elements.add(el);
    }
    // 600 rows scrolled past: no more row elements were ever made than one view shows at once.
    expect(most).toBeLessThan(80);
    expect(elements.size).toBe(most);
    // Each element shows the row at its position: the one at row 600's place is row 600.
    const at600 = screen
      .getAllByTestId("dlq-row")
      .find((el) => el.style.transform === `translateY(${600 * 34}px)`);
    expect(at600).toBeDefined();
    const row600 = rows[600];
    expect(within(at600 as HTMLElement).getByTestId("dlq-flow")).toHaveTextContent(row600.flow);
    expect(within(at600 as HTMLElement).getByTestId("dlq-open")).toHaveTextContent(
      row600.event_type,
    );
    for (const el of screen.getAllByTestId("dlq-row")) {
      const index = Number(/translateY\((\d+)px\)/.exec(el.style.transform)?.[1]) / 34;
      const box = within(el).getByRole("checkbox") as HTMLInputElement;
      expect(box.checked).toBe(index % 7 === 0);
    }
  });

  it("another view (a text that matches nothing kept) fetches on down, even after scrolling up", async () => {
    const fetchNextPage = vi.fn();
    const table = (rows: DlqEntryView[], viewKey: string) => (
      <DlqTable
        {...props}
        rows={rows}
        hasNextPage
        fetchNextPage={fetchNextPage}
        hasPreviousPage={false}
        fetchPreviousPage={() => {}}
        viewKey={viewKey}
      />
    );
    // The same wrapper on rerender, so the table stays mounted (a new view, not a new table).
    const { rerender } = render(table(many(200), ""), { wrapper: MantineProvider });
    const scroll = screen.getByTestId("dlq-scroll");
    await act(async () => {
      scroll.scrollTop = 100 * 34;
      fireEvent.scroll(scroll);
    });
    await act(async () => {
      scroll.scrollTop = 90 * 34;
      fireEvent.scroll(scroll);
    });
    expect(fetchNextPage).not.toHaveBeenCalled();
    // Typing a text that matches none of the kept rows: the loader is in view, and it loads.
    await act(async () => {
      rerender(table([], "q=nothing"));
    });
    expect(fetchNextPage).toHaveBeenCalled();
  });
});
