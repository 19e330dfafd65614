import { fireEvent, screen, within } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import type { ManagedResource } from "../ipc/bindings";
import { emptyText } from "../pages/ResourcesPage";
import { renderUi, resource } from "../test/render";
import { ResourceTable } from "./ResourceTable";

const items = [
  resource({ name: "orders", version: 3 }),
  resource({ name: "payments", spec: { description: "Payment callbacks", event_types: [] } }),
  resource({
    name: "inventory",
    spec: { description: "Stock", event_types: ["stock.low"] },
    pending: { op_id: 9, operation: "update", state: "needs_attention", error: null },
  }),
];

function rowNames(): string[] {
  return screen
    .getAllByTestId(/^row-/)
    .map((row) => row.getAttribute("data-testid")?.slice(4) ?? "");
}

describe("ResourceTable", () => {
  it("filters as you type, on the name and the spec", () => {
    renderUi(<ResourceTable items={items} onOpen={() => {}} />);
    expect(rowNames()).toHaveLength(3);
    fireEvent.change(screen.getByTestId("table-filter"), { target: { value: "pay" } });
    expect(rowNames()).toEqual(["payments"]);
    fireEvent.change(screen.getByTestId("table-filter"), { target: { value: "stock.low" } });
    expect(rowNames()).toEqual(["inventory"]);
    expect(screen.getByTestId("table-count")).toHaveTextContent("1 of 3");
    fireEvent.change(screen.getByTestId("table-filter"), {
      target: { value: "nothing-like-this" },
    });
    expect(screen.getByText("No rows match the filter.")).toBeInTheDocument();
  });

  it("sorts by a column and reverses on a second click", () => {
    renderUi(<ResourceTable items={items} onOpen={() => {}} />);
    expect(rowNames()).toEqual(["inventory", "orders", "payments"]);
    const header = screen.getByRole("columnheader", { name: /Name/ });
    fireEvent.click(header);
    expect(rowNames()).toEqual(["payments", "orders", "inventory"]);
    fireEvent.click(screen.getByRole("columnheader", { name: /Version/ }));
    expect(rowNames()[2]).toBe("orders");
  });

  it("shows the write on a resource and opens it on click", () => {
    const onOpen = vi.fn();
    renderUi(<ResourceTable items={items} onOpen={onOpen} />);
    const row = screen.getByTestId("row-inventory");
    expect(within(row).getByTestId("pending-badge")).toHaveTextContent("Needs attention · edit");
    fireEvent.click(row);
    expect(onOpen).toHaveBeenCalledWith(items[2]);
  });

  it("marks a Git-managed resource changed outside Git as drifted, and one in sync as Git", async () => {
    const fromGit = (name: string, over: Partial<ManagedResource>): ManagedResource => ({
      kind: "endpoint",
      name,
      source: "ops-repo",
      commit: "0123456789abcdef0123",
      path: `endpoints/${name}.yaml`,
      created: true,
      state: "in_sync",
      changes: [],
      changed_by: null,
      changed_at: null,
      ...over,
    });
    const managed = {
      "endpoint/orders": fromGit("orders", {
        state: "drifted",
        changes: [{ field: "spec.description", before: "Orders", after: "All orders" }],
        changed_by: "desktop",
      }),
      "endpoint/payments": fromGit("payments", {}),
    };
    renderUi(<ResourceTable items={items} managed={managed} onOpen={() => {}} />);
    const drifted = within(screen.getByTestId("row-orders")).getByTestId("git-badge");
    expect(drifted).toHaveTextContent("drifted");
    expect(within(screen.getByTestId("row-payments")).getByTestId("git-badge")).toHaveTextContent(
      /^Git$/,
    );
    expect(within(screen.getByTestId("row-inventory")).queryByTestId("git-badge")).toBeNull();
    fireEvent.mouseEnter(drifted);
    expect(
      await screen.findByText(
        "Changed outside Git (spec.description) by desktop. Managed by ops-repo at 0123456789ab.",
      ),
    ).toBeInTheDocument();
  });
});

describe("emptyText", () => {
  // A never-fetched control plane said "Nothing here yet.", like one with no endpoints.
  it("tells 'not loaded yet' from 'none on the control plane'", () => {
    const base = {
      profile: "offline-cp",
      online: false,
      last_sync_at: null,
      pending: 0,
      needs_attention: 0,
      syncing: false,
      round_done: 0,
      round_total: 0,
      offline_reason: "connection refused",
    };
    expect(emptyText("endpoint", "offline-cp", base)).toBe(
      "Not loaded yet: offline-cp has not answered (connection refused). The list fills once it does.",
    );
    expect(
      emptyText("target", "sandbox", {
        ...base,
        profile: "sandbox",
        online: true,
        last_sync_at: 1,
      }),
    ).toBe("No targets on sandbox yet.");
  });

  // At 1024 px the "Certificate: 20 d left" badge pushed the name out entirely: the badges now
  // go under the name and shrink there, and the name keeps its room.
  it("lets a name's badges wrap under it and shrink, never the name to nothing", () => {
    const soon = new Date(Date.now() + 20 * 86_400_000).toISOString();
    const rows = [
      resource({
        kind: "target",
        name: "analytics",
        spec: { url: "https://a.test", timeout_ms: 5000, headers: {} },
        status: { client_certificate: { not_after: soon }, retirement: "ret_9" },
      }),
    ];
    renderUi(
      <ResourceTable
        kind="target"
        items={rows}
        onOpen={() => {}}
        retirements={{ analytics: "scheduled" }}
      />,
    );
    const cell = screen.getByTestId("name-analytics");
    expect(cell.style.getPropertyValue("--group-wrap")).toBe("wrap");
    const name = within(cell).getByText("analytics");
    expect(name.style.maxWidth).toBe("100%");
    const cert = screen.getByTestId("credential-warning-analytics");
    expect(cert).toHaveTextContent("Certificate: 19 d left");
    expect(cert.style.minWidth).toMatch(/^0(px)?$/);
    expect(cert.style.flexShrink).toBe("1");
    // The retirement holding it, with its state from the retirements list.
    expect(screen.getByTestId("retiring-analytics")).toHaveTextContent("Scheduled for deletion");
  });
});
