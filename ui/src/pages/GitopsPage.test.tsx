import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type {
  ApplyProgress,
  GitopsPlan,
  GitopsSource,
  GitopsStatus,
  PlanItem,
} from "../ipc/bindings";
import { mockCommands, renderUi } from "../test/render";
import { GitopsPage } from "./GitopsPage";

const source: GitopsSource = {
  profile: "sandbox",
  id: "/srv/config:deploy",
  spec: { repo: "/srv/config", git_ref: "HEAD", path: "deploy" },
  queued_commit: "a".repeat(40),
  queued_at: Date.now() - 60_000,
  applied_commit: "a".repeat(40),
  applied_at: Date.now() - 60_000,
  managed: 2,
};

const status: GitopsStatus = {
  source,
  head_commit: "b".repeat(40),
  head_error: null,
  behind: true,
  in_sync: 1,
  drifted: 1,
  missing: 0,
  applying: 0,
  resources: [
    {
      kind: "endpoint",
      name: "orders",
      source: source.id,
      commit: "a".repeat(40),
      path: "deploy/orders.yaml",
      created: true,
      state: "drifted",
      changes: [{ field: "spec.description", before: "Orders", after: "by hand" }],
      changed_by: "cli",
      changed_at: Date.now() - 5_000,
    },
  ],
  progress: null,
};

const item = (over: Partial<PlanItem>): PlanItem => ({
  kind: "target",
  name: "billing",
  action: "update",
  path: "deploy/billing.yaml",
  base_version: 3,
  changes: [],
  desired: null,
  live: null,
  wave: 1,
  key: "gitops-abc",
  ...over,
});

const plan: GitopsPlan = {
  profile: "sandbox",
  source: source.id,
  spec: source.spec,
  commit: "b".repeat(40),
  commit_title: "move billing",
  planned_at: Date.now(),
  prune: false,
  self_heal: false,
  manifests: 3,
  summary: { create: 1, update: 1, delete: 0, unchanged: 1, drifted: 0, orphaned: 0, release: 0 },
  items: [
    item({
      kind: "endpoint",
      name: "refunds",
      action: "create",
      base_version: null,
      desired: { description: "Refunds", event_types: [] },
    }),
    item({
      changes: [
        {
          field: "spec.url",
          before: "https://billing.example/a",
          after: "https://billing.example/b",
        },
      ],
    }),
    item({ kind: "flow", name: "o2b", action: "unchanged", wave: 0, key: null }),
  ],
};

const progress = (done: number): ApplyProgress => ({
  profile: "sandbox",
  source: source.id,
  commit: plan.commit,
  waves: [
    { wave: 1, total: 2, done, pending: 2 - done, needs_attention: 0, discarded: 0 },
    { wave: 2, total: 0, done: 0, pending: 0, needs_attention: 0, discarded: 0 },
    { wave: 3, total: 0, done: 0, pending: 0, needs_attention: 0, discarded: 0 },
    { wave: 4, total: 0, done: 0, pending: 0, needs_attention: 0, discarded: 0 },
  ],
  complete: done === 2,
});

describe("GitopsPage", () => {
  it("shows drift, plans a commit as a diff per resource, confirms with the summary and applies", async () => {
    const calls = mockCommands({
      gitops_sources: () => [source],
      gitops_status: () => status,
      gitops_plan: () => plan,
      gitops_apply: () => ({
        profile: "sandbox",
        source: source.id,
        commit: plan.commit,
        queued: 2,
        resumed: 0,
        op_ids: [7, 8],
        progress: progress(0),
      }),
      gitops_progress: () => progress(2),
      list_resources: () => [],
    });
    renderUi(<GitopsPage />);
    const st = await screen.findByTestId("source-status");
    expect(within(st).getByTestId("applied-commit")).toHaveTextContent("aaaaaaaaaaaa");
    expect(await within(st).findByTestId("drift-table")).toHaveTextContent("spec.description");
    expect(st).toHaveTextContent("cli");
    expect(st).toHaveTextContent("bbbbbbbbbbbb");

    fireEvent.click(screen.getByTestId("plan-button"));
    const view = await screen.findByTestId("plan-view");
    expect(within(view).getByTestId("plan-summary")).toHaveTextContent("1 create");
    const billing = within(view).getByTestId("plan-item-target-billing");
    expect(billing).toHaveTextContent("https://billing.example/a");
    expect(billing).toHaveTextContent("https://billing.example/b");
    expect(within(view).getByTestId("plan-item-endpoint-refunds")).toHaveTextContent("Refunds");
    // Unchanged resources are hidden until asked for.
    expect(within(view).queryByTestId("plan-item-flow-o2b")).toBeNull();
    expect(calls.find(([cmd]) => cmd === "gitops_plan")?.[1]).toEqual({
      profile: "sandbox",
      spec: source.spec,
      options: { prune: false, self_heal: false, allow_delete_all: false },
    });

    fireEvent.click(screen.getByTestId("apply-button"));
    const confirm = await screen.findByTestId("apply-confirm");
    expect(confirm).toHaveTextContent("create 1 resource(s)");
    expect(confirm).toHaveTextContent("update 1 resource(s)");
    fireEvent.click(within(confirm).getByTestId("apply-confirm-button"));
    const applying = await screen.findByTestId("apply-progress");
    expect(await within(applying).findByTestId("wave-1")).toHaveTextContent("2/2 confirmed");
    expect(applying).toHaveTextContent("Applied");
    expect(calls.find(([cmd]) => cmd === "gitops_apply")?.[1]).toEqual({ plan });
  });

  it("asks the source's status again after a plan: the header shows the head it planned", async () => {
    const head = { commit: "a".repeat(40) };
    const calls = mockCommands({
      gitops_sources: () => [source],
      gitops_status: () => ({
        ...status,
        head_commit: head.commit,
        behind: head.commit !== source.applied_commit,
        drifted: 0,
        resources: [],
      }),
      gitops_plan: () => {
        // A commit landed on the ref since the status was read; the plan reads it.
        head.commit = "c".repeat(40);
        return { ...plan, commit: head.commit };
      },
      list_resources: () => [],
    });
    renderUi(<GitopsPage />);
    expect(await screen.findByTestId("in-sync")).toBeInTheDocument();
    fireEvent.click(screen.getByTestId("plan-button"));
    await screen.findByTestId("plan-view");
    const st = screen.getByTestId("source-status");
    await waitFor(() => expect(st).toHaveTextContent("is now at cccccccccccc"));
    expect(within(st).getByTestId("not-in-sync")).toHaveTextContent("Behind the ref");
    expect(calls.filter(([c]) => c === "gitops_status")).toHaveLength(2);
  });

  it("lists every problem of a refused plan, one a line", async () => {
    mockCommands({
      gitops_sources: () => [source],
      gitops_status: () => status,
      gitops_plan: () => {
        throw {
          code: "invalid_input",
          message:
            "2 problem(s) in the manifests; nothing was planned:\n  deploy/a.yaml, document 2: spec.url: must use http or https\n  deploy/a.yaml, document 2: spec.timeout_ms: must be between 1 and 120000",
          problem: null,
        };
      },
    });
    renderUi(<GitopsPage />);
    fireEvent.click(await screen.findByTestId("plan-button"));
    const lines = await screen.findByTestId("error-lines");
    expect(
      within(lines)
        .getAllByRole("listitem")
        .map((l) => l.textContent),
    ).toEqual([
      "deploy/a.yaml, document 2: spec.url: must use http or https",
      "deploy/a.yaml, document 2: spec.timeout_ms: must be between 1 and 120000",
    ]);
  });

  it("names the file, document and field of a bad manifest", async () => {
    mockCommands({
      gitops_sources: () => [source],
      gitops_status: () => status,
      gitops_plan: () => {
        throw {
          code: "invalid_input",
          message:
            "1 problem(s) in the manifests; nothing was planned:\n  deploy/a.yaml, document 2: spec.url: must use http or https",
          problem: null,
        };
      },
    });
    renderUi(<GitopsPage />);
    fireEvent.click(await screen.findByTestId("plan-button"));
    expect(await screen.findByTestId("error-alert")).toHaveTextContent(
      "deploy/a.yaml, document 2: spec.url",
    );
    expect(screen.queryByTestId("apply-button")).toBeNull();
  });
});
