import { screen, waitFor } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { ResourcesPage } from "../../pages/ResourcesPage";
import { group, report } from "../../test/health";
import { mockCommands, renderUi, resource } from "../../test/render";

const targets = ["crm", "erp", "idle"].map((name) =>
  resource({ kind: "target", name, spec: { url: `https://${name}.example/hook` }, status: {} }),
);

beforeEach(() => localStorage.clear());

describe("the resource tables' sparkline column", () => {
  it("draws one per resource with attempts, from one delivery_metrics call for the table", async () => {
    const calls = mockCommands({
      list_resources: () => targets,
      gitops_managed: () => [],
      delivery_metrics: ({ window, groupBy }) =>
        report(window, groupBy, [group("crm", 12, 3), group("erp", 30, 0)]),
    });
    renderUi(<ResourcesPage kind="target" />);
    const crm = await screen.findByTestId("sparkline-crm");
    expect(crm).toHaveAttribute("aria-label", "12 attempts, 3 failed in the last hour");
    expect(crm).toHaveAttribute("data-failed", "true");
    const erp = screen.getByTestId("sparkline-erp");
    expect(erp).toHaveAttribute("aria-label", "30 attempts, 0 failed in the last hour");
    expect(erp).toHaveAttribute("data-failed", "false");
    // No attempts: no sparkline, a dash.
    expect(screen.queryByTestId("sparkline-idle")).toBeNull();
    expect(screen.getByTestId("row-idle")).toHaveTextContent("—");
    await waitFor(() => expect(screen.getAllByTestId(/^row-/)).toHaveLength(3));
    expect(calls.filter(([c]) => c === "delivery_metrics").map(([, a]) => a)).toEqual([
      { profile: "sandbox", window: "1h", groupBy: "target" },
    ]);
  });

  it("dims the last figures when the control plane stops answering", async () => {
    let answering = true;
    mockCommands({
      list_resources: () => targets,
      gitops_managed: () => [],
      delivery_metrics: ({ window, groupBy }) => {
        if (!answering) throw { code: "offline", message: "connection refused", problem: null };
        return report(window, groupBy, [group("crm", 12, 3)]);
      },
    });
    const { client } = renderUi(<ResourcesPage kind="target" />);
    expect(await screen.findByTestId("sparkline-crm")).toHaveAttribute("data-stale", "false");
    answering = false;
    await client.refetchQueries({ queryKey: ["p", "sandbox", "metrics"] });
    await waitFor(() =>
      expect(screen.getByTestId("sparkline-crm")).toHaveAttribute("data-stale", "true"),
    );
    expect(screen.getByTestId("sparkline-crm")).toHaveAttribute(
      "aria-label",
      "12 attempts, 3 failed in the last hour (last fetched figures: the control plane does not answer)",
    );
  });

  it("shows nothing when the figures are not known", async () => {
    mockCommands({
      list_resources: () => targets,
      gitops_managed: () => [],
      delivery_metrics: () => {
        throw { code: "offline", message: "connection refused", problem: null };
      },
    });
    renderUi(<ResourcesPage kind="flow" />);
    await screen.findByTestId("row-crm");
    expect(screen.queryByTestId(/^sparkline-/)).toBeNull();
  });
});
