import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { WriteError } from "../ipc/bindings";
import { mockCommands, outboxEntry, renderUi, resource } from "../test/render";
import { rotation } from "../test/rotation";
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

  it("disables what the token's role may not do, saying why", async () => {
    const health = (role: string) => () => ({
      ok: true,
      latency_ms: 1,
      server_version: "0.1.0",
      role,
      error: null,
    });
    mockCommands({
      get_resource: () => resource({ name: "audit-ep", status: { enabled: true } }),
      resource_history: () => [],
      check_health: health("operator"),
    });
    renderUi(<ResourceDrawer kind="endpoint" name="audit-ep" onClose={() => {}} />);
    await waitFor(() =>
      expect(screen.getByTestId("role-note")).toHaveTextContent(
        "This token's role is operator: changing or deleting endpoint audit-ep needs an admin token.",
      ),
    );
    for (const id of ["edit", "apply", "delete"]) {
      expect(screen.getByTestId(id)).toBeDisabled();
    }
    expect(screen.getByTestId("toggle-enabled")).toBeEnabled();
  });

  it("keeps every action enabled while the token's role is not known", async () => {
    mockCommands({
      get_resource: () => resource({ name: "audit-ep", status: { enabled: true } }),
      resource_history: () => [],
      check_health: () => ({
        ok: true,
        latency_ms: 1,
        server_version: "0.1.0",
        role: null,
        error: null,
      }),
    });
    renderUi(<ResourceDrawer kind="endpoint" name="audit-ep" onClose={() => {}} />);
    expect(await screen.findByTestId("edit")).toBeEnabled();
    expect(screen.getByTestId("toggle-enabled")).toBeEnabled();
    expect(screen.queryByTestId("role-note")).toBeNull();
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

  // A target a retirement held had no badge; its signing secrets were a raw JSON array.
  it("shows the retirement holding a target, and its signing secrets as a list", async () => {
    const target = resource({
      kind: "target",
      name: "legacy-erp",
      spec: { url: "https://erp.test/hook", timeout_ms: 5000, headers: {} },
      status: {
        retirement: "ret_01",
        signing_secrets: [
          { id: "whsec_new", created_at: "2026-12-07T09:00:00Z", expires_at: null },
          {
            id: "whsec_old",
            created_at: "2026-11-01T09:00:00Z",
            expires_at: "2099-12-08T09:00:00Z",
          },
        ],
      },
    });
    mockCommands({
      get_resource: () => target,
      resource_history: () => [],
      get_retirement: () => ({
        id: "ret_01",
        kind: "target",
        name: "legacy-erp",
        start: null,
        cancel: null,
        offline: null,
        server: {
          id: "ret_01",
          kind: "target",
          name: "legacy-erp",
          state: "scheduled",
          grace_seconds: 3600,
          cascade_flows: false,
          dlq: "keep",
          blockers: [],
          impact: { flows: [], pending_deliveries: 0, dlq_depth: 0, open_replays: [] },
          cascaded_flows: [],
          delete_at: "2099-12-07T12:00:00Z",
          created_at: "2026-12-07T09:00:00Z",
          updated_at: "2026-12-07T09:00:00Z",
          history: [],
        },
      }),
    });
    renderUi(<ResourceDrawer kind="target" name="legacy-erp" onClose={() => {}} />);
    expect(await screen.findByTestId("retiring-legacy-erp")).toHaveTextContent("Retiring");
    const notice = await screen.findByTestId("drawer-retirement");
    await waitFor(() => expect(notice).toHaveTextContent("Scheduled"));
    expect(notice).toHaveTextContent("unless cancelled");
    fireEvent.click(screen.getByText("Status"));
    const secrets = await screen.findByTestId("status-list-signing_secrets");
    const items = within(secrets).getAllByRole("listitem");
    expect(items).toHaveLength(2);
    expect(items[0]).toHaveTextContent(/^whsec_new · created .* · signs with no expiry$/);
    expect(items[1]).toHaveTextContent(/^whsec_old · created .* · signs until .* \(\d+ d left\)$/);
    expect(screen.getByTestId("status-table")).not.toHaveTextContent('[{"');
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

  it("shows a target's open rotation and resumes it from there", async () => {
    const open = rotation({
      step: "staged",
      acknowledged: true,
      new_secret_id: "sec_new",
      pending_keys: [],
      actions: {
        resume: false,
        verify: true,
        promote: false,
        promote_skipping_verify: false,
        roll_back: true,
      },
    });
    mockCommands({
      get_resource: () => resource({ kind: "target", name: "billing", status: {} }),
      resource_history: () => [],
      dependants: () => [],
      list_rotations: () => [rotation({ id: "rot_0", step: "done" }), open],
      resume_rotation: () => ({ rotation: open, value: null }),
    });
    renderUi(<ResourceDrawer kind="target" name="billing" onClose={() => {}} />);
    const notice = await screen.findByTestId("drawer-rotation");
    expect(notice).toHaveTextContent("Rotation of the signing secret open: Staged (overlap open)");
    expect(notice).toHaveTextContent("rot_1: the new secret is staged; test it next.");
    expect(notice).not.toHaveTextContent("rot_0");
    expect(screen.getByTestId("rotate")).toHaveTextContent("Resume rotation…");
    fireEvent.click(screen.getByTestId("drawer-rotation-resume"));
    expect(await screen.findByTestId("rotation-verify")).toBeInTheDocument();
  });

  it("shows no rotation notice for a target whose rotations are finished", async () => {
    mockCommands({
      get_resource: () => resource({ kind: "target", name: "billing", status: {} }),
      resource_history: () => [],
      dependants: () => [],
      list_rotations: () => [rotation({ step: "rolled_back" })],
    });
    renderUi(<ResourceDrawer kind="target" name="billing" onClose={() => {}} />);
    expect(await screen.findByTestId("rotate")).toHaveTextContent("Rotate credentials…");
    expect(screen.queryByTestId("drawer-rotation")).toBeNull();
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
