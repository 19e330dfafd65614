import { fireEvent, screen, waitFor } from "@testing-library/react";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { healthKeys } from "../../ipc/keys";
import { group, report } from "../../test/health";
import { mockCommands, renderUi, resource } from "../../test/render";
import { ResourceDrawer } from "../ResourceDrawer";

const crm = resource({
  kind: "target",
  name: "crm",
  spec: { url: "https://crm.example/hooks", timeout_ms: 5000, headers: {} },
  status: {},
});

// Two targets: the drawer of crm must show crm's figures, never erp's.
const groups = [
  group("erp", 90, 1, { consecutive_failures: 0, failing_since: null }),
  group("crm", 12, 3, {
    figures: {
      ...group("crm", 12, 3).figures,
      failures_by_class: [
        { error_class: "http_5xx", count: 2 },
        { error_class: "timeout", count: 1 },
      ],
      latency_ms: { p50: 40, p95: 1200, p99: 4000 },
    },
    consecutive_failures: 3,
    last_error_class: "timeout",
    last_error: "no answer within 5000 ms",
  }),
];

beforeEach(() => localStorage.clear());

async function openHealth() {
  fireEvent.click(await screen.findByTestId("tab-health"));
  return screen.findByTestId("drawer-health");
}

describe("the drawer's Health tab", () => {
  it("shows that resource's figures, grouped by its kind, over the remembered window", async () => {
    localStorage.setItem("overview-window", "24h");
    const onOpenDlq = vi.fn();
    const calls = mockCommands({
      get_resource: () => crm,
      resource_history: () => [],
      delivery_metrics: ({ window, groupBy }) => report(window, groupBy, groups),
    });
    renderUi(<ResourceDrawer kind="target" name="crm" onClose={() => {}} onOpenDlq={onOpenDlq} />);
    await screen.findByTestId("tab-health");
    // Nothing asked before the tab opens.
    expect(calls.some(([c]) => c === "delivery_metrics")).toBe(false);
    await openHealth();
    await waitFor(() =>
      expect(screen.getByTestId("drawer-health-attempts-value")).toHaveTextContent("12"),
    );
    expect(calls.filter(([c]) => c === "delivery_metrics").map(([, a]) => a)).toEqual([
      { profile: "sandbox", window: "24h", groupBy: "target" },
    ]);
    expect(screen.getByTestId("drawer-health-rate-value")).toHaveTextContent("75 %");
    expect(screen.getByTestId("drawer-health-attempts-hint")).toHaveTextContent("3 failed");
    expect(screen.getByTestId("drawer-health-latency-value")).toHaveTextContent("1.2 s");
    expect(screen.getByTestId("drawer-health-latency-hint")).toHaveTextContent(
      "p50 40 ms · p99 4.0 s",
    );
    expect(screen.getByTestId("drawer-health-classes")).toHaveTextContent("HTTP 5xx: 2");
    expect(screen.getByTestId("drawer-health-classes")).toHaveTextContent("timeout: 1");
    expect(screen.getByTestId("drawer-health-streak")).toHaveTextContent(/^3$/);
    expect(screen.getByTestId("drawer-health-since")).toHaveTextContent("7 min ago");
    expect(screen.getByTestId("drawer-health-last-failure")).toHaveTextContent("1 min ago");
    expect(screen.getByTestId("drawer-health")).toHaveTextContent("no answer within 5000 ms");
    expect(screen.getByTestId("drawer-health-window")).toBeInTheDocument();
    fireEvent.click(screen.getByTestId("drawer-health-dlq"));
    expect(onOpenDlq).toHaveBeenCalledWith("crm");
  });

  it("shares the Overview's query: a cached answer is shown without another call", async () => {
    const calls = mockCommands({
      get_resource: () => resource({ name: "orders" }),
      resource_history: () => [],
      delivery_metrics: ({ window, groupBy }) => report(window, groupBy, [group("orders", 6, 0)]),
    });
    const { client } = renderUi(
      <ResourceDrawer kind="endpoint" name="orders" onClose={() => {}} />,
    );
    client.setQueryData(
      healthKeys("sandbox").deliveries("1h", "endpoint"),
      report("1h", "endpoint", [group("orders", 6, 0)]),
    );
    client.setQueryDefaults(healthKeys("sandbox").all, { staleTime: Number.POSITIVE_INFINITY });
    await openHealth();
    expect(await screen.findByTestId("drawer-health-attempts-value")).toHaveTextContent("6");
    expect(calls.some(([c]) => c === "delivery_metrics")).toBe(false);
    // An endpoint has no DLQ link.
    expect(screen.queryByTestId("drawer-health-dlq")).toBeNull();
  });

  it("reads — for what the control plane could not compute, never 0", async () => {
    mockCommands({
      get_resource: () => crm,
      resource_history: () => [],
      delivery_metrics: ({ window, groupBy }) =>
        report(window, groupBy, [
          group("crm", 0, 0, {
            consecutive_failures: null,
            failing_since: null,
            last_success_at: null,
            last_failure_at: null,
          }),
        ]),
    });
    renderUi(<ResourceDrawer kind="target" name="crm" onClose={() => {}} />);
    await openHealth();
    expect(await screen.findByTestId("drawer-health-none")).toHaveTextContent(
      "No attempts in the last hour",
    );
    expect(screen.getByTestId("drawer-health-rate-value")).toHaveTextContent(/^—$/);
    expect(screen.getByTestId("drawer-health-latency-value")).toHaveTextContent(/^—$/);
    expect(screen.getByTestId("drawer-health-latency-hint")).toHaveTextContent("p50 — · p99 —");
    expect(screen.getByTestId("drawer-health-streak")).toHaveTextContent(/^—$/);
    expect(screen.getByTestId("drawer-health-since")).toHaveTextContent(/^—$/);
    expect(screen.getByTestId("drawer-health-last-success")).toHaveTextContent(/^—$/);
    expect(screen.getByTestId("drawer-health-last-failure")).toHaveTextContent(/^—$/);
    expect(screen.queryByTestId("health-chart")).toBeNull();
  });

  it("says so plainly when the resource had no attempt in the window", async () => {
    mockCommands({
      get_resource: () => crm,
      resource_history: () => [],
      delivery_metrics: ({ window, groupBy }) => report(window, groupBy, groups.slice(0, 1)),
    });
    renderUi(<ResourceDrawer kind="target" name="crm" onClose={() => {}} />);
    await openHealth();
    expect(await screen.findByTestId("drawer-health-none")).toHaveTextContent(
      "No attempts in the last hour.",
    );
    // erp's figures are not shown under crm's name.
    expect(screen.queryByTestId("drawer-health-attempts-value")).toBeNull();
  });

  it("keeps the last figures, marked stale, when the control plane stops answering", async () => {
    let answering = true;
    mockCommands({
      get_resource: () => crm,
      resource_history: () => [],
      delivery_metrics: ({ window, groupBy }) => {
        if (!answering) throw { code: "offline", message: "connection refused", problem: null };
        return report(window, groupBy, groups);
      },
    });
    const { client } = renderUi(<ResourceDrawer kind="target" name="crm" onClose={() => {}} />);
    await openHealth();
    await waitFor(() =>
      expect(screen.getByTestId("drawer-health-attempts-value")).toHaveTextContent("12"),
    );
    expect(screen.getByTestId("health-freshness")).toHaveAttribute("data-state", "fresh");
    answering = false;
    await client.refetchQueries({ queryKey: ["p", "sandbox", "metrics"] });
    await waitFor(() =>
      expect(screen.getByTestId("health-freshness")).toHaveAttribute("data-state", "stale"),
    );
    expect(screen.getByTestId("health-freshness")).toHaveTextContent(
      /Last fetched .*; sandbox does not answer \(connection refused\)/,
    );
    expect(screen.getByTestId("drawer-health-attempts-value")).toHaveTextContent("12");
  });
});
