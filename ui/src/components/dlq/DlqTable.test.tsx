import { screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
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
