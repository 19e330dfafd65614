//! Settings → "Agents (MCP)": the command line an agent host runs, the read-only mark, and
//! the agents' recent calls (read from the audit log, where `switchyard mcp` records them).

use switchyard_core::AuditQuery;
use tauri::State;

use super::Result;
use crate::ipc::convert::audit_entry;
use crate::ipc::*;
use crate::state::AppState;

/// The `switchyard` CLI beside this app's executable, if it is there.
fn cli_beside_app() -> Option<String> {
    let name = if cfg!(windows) {
        "switchyard.exe"
    } else {
        "switchyard"
    };
    let path = std::env::current_exe().ok()?.parent()?.join(name);
    path.is_file().then(|| path.display().to_string())
}

async fn settings(state: &AppState, name: String) -> Result<AgentsSettings> {
    let profile = state.core.profile(&name).await?;
    let found = cli_beside_app();
    let command = vec![
        found.clone().unwrap_or_else(|| "switchyard".into()),
        "--data-dir".into(),
        state.core.data_dir().display().to_string(),
        "--profile".into(),
        name.clone(),
        "mcp".into(),
    ];
    let calls = state
        .core
        .audit(AuditQuery {
            profile: Some(name.clone()),
            action_prefix: Some("mcp.".into()),
            limit: Some(50),
            ..Default::default()
        })
        .await?;
    Ok(AgentsSettings {
        profile: name,
        sandbox: profile.sandbox,
        command,
        program_found: found.is_some(),
        agents_read_only: profile.agents_read_only,
        recent_calls: calls.into_iter().map(audit_entry).collect(),
    })
}

#[tauri::command]
pub async fn agents_settings(
    state: State<'_, AppState>,
    profile: String,
) -> Result<AgentsSettings> {
    settings(&state, profile).await
}

/// Marks a profile read-only for agents, or lifts the mark.
#[tauri::command]
pub async fn set_agents_read_only(
    state: State<'_, AppState>,
    profile: String,
    read_only: bool,
) -> Result<AgentsSettings> {
    state.core.set_agents_read_only(&profile, read_only).await?;
    settings(&state, profile).await
}
