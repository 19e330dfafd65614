import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { WriteError } from "../ipc/bindings";
import { mockCommands, outboxEntry, renderUi, resource } from "../test/render";
import { retryWouldRepeat } from "./AttentionActions";
import { ResourceDrawer } from "./ResourceDrawer";

const inUse: WriteError = {
  status: 409,
  code: "in_use",
  message: "target audit-tgt is used by flow/audit-flow",
  transient: false,
  field: null,
  used_by: ["flow/audit-flow"],
  current_version: null,
};

describe("ResourceDrawer", () => {
  it("offers no delete the control plane will refuse, and no retry that would repeat", async () => {
    const target = resource({
      kind: "target",
      name: "audit-tgt",
      spec: { url: "https://example.com/hook", timeout_ms: 5000, headers: {} },
      status: {},
      pending: { op_id: 4, operation: "delete", state: "needs_attention", error: inUse },
    });
    mockCommands({
      get_resource: () => target,
      resource_history: () => [],
      dependants: () => ["flow audit-flow"],
    });
    renderUi(<ResourceDrawer kind="target" name="audit-tgt" onClose={() => {}} />);
    // The refused delete: no "Retry as new" while the flow still uses it.
    await waitFor(() =>
      expect(screen.getByTestId("retry-would-repeat")).toHaveTextContent(
        "Still used by flow audit-flow",
      ),
    );
    expect(screen.queryByTestId("retry-as-new")).toBeNull();
    fireEvent.click(screen.getByTestId("delete"));
    const confirm = await screen.findByTestId("confirm-delete");
    await waitFor(() => expect(confirm).toHaveTextContent("Delete flow audit-flow first"));
    expect(confirm).toBeDisabled();
  });

  it("asks before disabling an endpoint, and shows its state and status in words", async () => {
    const calls = mockCommands({
      get_resource: () =>
        resource({ name: "audit-ep", status: { enabled: true, pending_deliveries: 3 } }),
      resource_history: () => [],
      queue_write: ({ request }) => ({ ...request }) as never,
    });
    renderUi(<ResourceDrawer kind="endpoint" name="audit-ep" onClose={() => {}} />);
    expect(await screen.findByTestId("drawer-enabled")).toHaveTextContent("enabled");
    fireEvent.click(screen.getByTestId("toggle-enabled"));
    const dialog = await screen.findByTestId("disable-confirm");
    expect(dialog).toHaveTextContent("refuses every new event");
    expect(calls.some(([c]) => c === "queue_write")).toBe(false);
    fireEvent.click(within(dialog).getByTestId("confirm-disable"));
    await waitFor(() =>
      expect(calls.find(([c]) => c === "queue_write")?.[1]).toMatchObject({
        request: { operation: "disable", name: "audit-ep" },
      }),
    );
    fireEvent.click(screen.getByText("Status"));
    expect(await screen.findByTestId("status-table")).toHaveTextContent("pending deliveries3");
  });

  it("names who queued each change in the history: an agent, GitOps, or nobody for the console", async () => {
    mockCommands({
      get_resource: () => resource({ name: "orders" }),
      resource_history: () => [
        outboxEntry({
          id: 7,
          operation: "update",
          state: "done",
          origin: { via: "mcp", client: "claude-desktop 1.2" },
        }),
        outboxEntry({
          id: 8,
          operation: "update",
          state: "done",
          origin: {
            via: "gitops",
            source: "git@example.com:ops/switchyard.git",
            commit: "0123456789abcdef0123",
            path: "endpoints/orders.yaml",
          },
        }),
        outboxEntry({ id: 9, state: "done" }),
      ],
    });
    renderUi(<ResourceDrawer kind="endpoint" name="orders" onClose={() => {}} />);
    fireEvent.click(await screen.findByRole("tab", { name: "History" }));
    const byAgent = await screen.findByTestId("history-7");
    expect(byAgent).toHaveTextContent("via MCP: claude-desktop 1.2");
    expect(screen.getByTestId("history-8")).toHaveTextContent(
      "via GitOps: 0123456789ab endpoints/orders.yaml",
    );
    expect(within(screen.getByTestId("history-9")).queryByTestId("origin-note")).toBeNull();
  });
});

describe("retryWouldRepeat", () => {
  it("says when retrying as new is pointless", () => {
    expect(retryWouldRepeat(inUse, ["flow audit-flow"])).toMatch(/Still used/);
    expect(retryWouldRepeat(inUse, [])).toBeNull();
    expect(
      retryWouldRepeat({ ...inUse, code: "invalid", status: 422, field: "spec.url" }, []),
    ).toMatch(/refused again/);
    expect(retryWouldRepeat({ ...inUse, code: null, status: 503, transient: true }, [])).toBeNull();
  });
});
