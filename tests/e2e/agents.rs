//! Settings → "Agents (MCP)" in the real app: an agent (the MCP server in-process, driven by
//! the SDK's client) writes through the app's data dir; the window shows the command line for
//! the profile and the agent's calls.

use std::time::Duration;

use anyhow::{Result, ensure};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use serde_json::json;
use switchyard_core::{Console, ConsoleOptions};
use switchyard_mcp::{McpConfig, McpServer, Mode};

use crate::harness::{App, ONE_AT_A_TIME};
use crate::plane::Plane;

/// Calls `tool` as the agent `claude-desktop 1.2` through an MCP server on `data`.
async fn agent_calls(data: &std::path::Path, calls: &[(&str, serde_json::Value)]) -> Result<()> {
    let console = Console::open(ConsoleOptions::new(data, "mcp")).await?;
    let server = McpServer::new(console, McpConfig::new("prod", Mode::Writes)).await?;
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    let agent = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("claude-desktop", "1.2"),
    )
    .serve(client_end)
    .await?;
    for (tool, args) in calls {
        let params = CallToolRequestParams::new(tool.to_string())
            .with_arguments(args.as_object().unwrap().clone());
        agent.call_tool(params).await?;
    }
    agent.cancel().await?;
    Ok(())
}

#[tokio::test]
#[ignore = "needs a display and the built app: run with `make test-e2e`"]
async fn the_agents_window_shows_the_command_line_and_the_agents_calls() -> Result<()> {
    let _one = ONE_AT_A_TIME.lock().await;
    let work = tempfile::tempdir()?;
    let plane = Plane::start(work.path()).await?;
    let dirs = tempfile::tempdir()?;
    let data = dirs.path().join("switchyard");
    let app = App::launch_in(dirs).await?;
    app.add_profile("prod", &plane.url(), true).await?;

    agent_calls(
        &data,
        &[
            (
                "create_resource",
                json!({"request_key": "add-audit", "kind": "endpoint", "name": "audit",
                       "spec": {"description": "Audit trail"}}),
            ),
            (
                "create_resource",
                json!({"request_key": "add-audit", "kind": "endpoint", "name": "audit",
                       "spec": {"description": "Audit trail"}}),
            ),
            (
                "delete_resource",
                json!({"request_key": "rm-audit", "kind": "endpoint", "name": "audit"}),
            ),
        ],
    )
    .await?;

    app.click("profile-switcher").await?;
    app.click("agents-settings").await?;
    let command = app
        .wait_text("agents-command", "the command line", |t| {
            t.contains("--profile prod mcp")
        })
        .await?;
    ensure!(command.contains("--data-dir"), "{command}");
    let script = "const l = [...document.querySelectorAll('.mantine-SegmentedControl-label')]\
        .find(l => l.textContent === 'Writes'); if (l) { l.click(); return true; } return false;";
    let clicked = app
        .driver
        .execute(script, vec![])
        .await?
        .convert::<bool>()?;
    ensure!(clicked, "no Writes mode");
    app.wait_text("agents-command", "the writes flag", |t| {
        t.ends_with("--allow-writes")
    })
    .await?;
    let calls = app
        .wait_text("agents-calls", "the agent's three calls", |t| {
            t.matches("claude-desktop 1.2").count() == 3
        })
        .await?;
    ensure!(
        calls.contains("(replayed)") && calls.contains("not allowed"),
        "{calls}"
    );
    tokio::time::sleep(Duration::from_millis(800)).await;
    app.shot("agents-mcp").await?;
    app.quit().await
}
