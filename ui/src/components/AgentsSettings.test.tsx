import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { AuditEntry, ProfileView, AgentsSettings as Settings } from "../ipc/bindings";
import { mockCommands, renderUi, sandboxProfile } from "../test/render";
import { AgentsSettings, hostConfig, shellQuote } from "./AgentsSettings";

function callEntry(over: Partial<AuditEntry>): AuditEntry {
  return {
    id: 1,
    actor: "mcp (claude-desktop 1.2)",
    at: Date.now() - 30_000,
    profile: "prod",
    action: "mcp.call",
    op_id: 4,
    resource: "endpoint/orders",
    outcome: "ok",
    detail: 'create_resource endpoint/orders op=4 key="add-orders" state=confirmed',
    ...over,
  };
}

const settings: Settings = {
  profile: "prod",
  sandbox: false,
  command: [
    "/opt/switchyard/switchyard",
    "--data-dir",
    "/home/me/my data",
    "--profile",
    "prod",
    "mcp",
  ],
  program_found: true,
  agents_read_only: false,
  recent_calls: [
    callEntry({ id: 2 }),
    callEntry({
      id: 1,
      actor: "mcp (cursor 0.9)",
      outcome: "not_allowed",
      detail: "delete_resource",
      op_id: null,
      resource: null,
    }),
  ],
};

const profiles: ProfileView[] = [sandboxProfile({ name: "prod", sandbox: false })];

describe("AgentsSettings", () => {
  it("gives the command line for the chosen mode, the host config and the recent calls", async () => {
    mockCommands({ list_profiles: () => profiles, agents_settings: () => settings });
    renderUi(<AgentsSettings opened onClose={() => {}} />, profiles);
    const command = await screen.findByTestId("agents-command");
    expect(command).toHaveTextContent(
      "/opt/switchyard/switchyard --data-dir '/home/me/my data' --profile prod mcp",
    );
    fireEvent.click(screen.getByText("Writes"));
    expect(command).toHaveTextContent(/--profile prod mcp --allow-writes$/);
    const config = JSON.parse(screen.getByTestId("agents-config").textContent ?? "");
    expect(config.mcpServers["switchyard-prod"].args).toEqual([
      "--data-dir",
      "/home/me/my data",
      "--profile",
      "prod",
      "mcp",
      "--allow-writes",
    ]);

    const table = screen.getByTestId("agents-calls");
    expect(within(table).getAllByRole("row")).toHaveLength(3);
    expect(within(table).getByText("claude-desktop 1.2")).toBeInTheDocument();
    expect(within(table).getByText("not allowed")).toBeInTheDocument();
    fireEvent.change(screen.getByTestId("agents-calls-filter"), { target: { value: "cursor" } });
    expect(within(table).getAllByRole("row")).toHaveLength(2);
  });

  it("marks the profile read-only for agents and says the mode is overridden", async () => {
    const calls = mockCommands({
      list_profiles: () => profiles,
      agents_settings: () => settings,
      set_agents_read_only: ({ readOnly }) => ({ ...settings, agents_read_only: readOnly }),
    });
    renderUi(<AgentsSettings opened onClose={() => {}} />, profiles);
    fireEvent.click(await screen.findByText("Destructive"));
    fireEvent.click(screen.getByRole("switch"));
    await waitFor(() => expect(screen.getByTestId("agents-mode-overridden")).toBeInTheDocument());
    expect(calls).toContainEqual(["agents_settings", { profile: "prod" }]);
    expect(calls).toContainEqual(["set_agents_read_only", { profile: "prod", readOnly: true }]);
  });

  it("warns that agents cannot use the sandbox", async () => {
    mockCommands({
      list_profiles: () => profiles,
      agents_settings: () => ({ ...settings, profile: "sandbox", sandbox: true, recent_calls: [] }),
    });
    renderUi(<AgentsSettings opened onClose={() => {}} />, profiles);
    expect(await screen.findByTestId("agents-sandbox")).toBeInTheDocument();
    // Nothing that would suggest it can be used: no command line, mode or read-only switch.
    expect(screen.queryByTestId("agents-command")).toBeNull();
    expect(screen.queryByTestId("agents-mode")).toBeNull();
    expect(screen.queryByTestId("agents-read-only")).toBeNull();
  });

  it("quotes arguments for a shell and builds the host entry", () => {
    expect(shellQuote("/usr/bin/switchyard")).toBe("/usr/bin/switchyard");
    expect(shellQuote("it's here")).toBe(`'it'\\''s here'`);
    expect(JSON.parse(hostConfig("p", ["sy", "mcp"]))).toEqual({
      mcpServers: { "switchyard-p": { command: "sy", args: ["mcp"] } },
    });
  });
});
