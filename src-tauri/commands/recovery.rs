//! The Recovery page: findings and their fixes, and retirements. Thin: each command calls one
//! core function (crates/core/src/recovery/) and converts its answer.

use std::time::Duration;

use switchyard_protocol::retirement::{RetirementDryRun, RetirementRequest};
use tauri::State;

use super::Result;
use crate::ipc::*;
use crate::state::AppState;

/// How long a command waits for the control plane to confirm a write before answering with
/// it saved locally (the sync driver sends it after).
const CONFIRM_WITHIN: Duration = Duration::from_secs(5);

#[tauri::command]
pub async fn recovery_findings(
    state: State<'_, AppState>,
    profile: String,
) -> Result<RecoveryView> {
    Ok(state.core.findings(&profile).await?.into())
}

/// Runs fix `action` (0-based) of a finding; `key` is minted by the UI once per click.
#[tauri::command]
pub async fn run_fix(
    state: State<'_, AppState>,
    profile: String,
    finding_id: String,
    action: u32,
    key: String,
) -> Result<FixOutcomeView> {
    let outcome = state
        .core
        .run_fix(
            &profile,
            &finding_id,
            action as usize,
            Some(key),
            CONFIRM_WITHIN,
        )
        .await?;
    Ok(outcome.into())
}

/// The fixes and retirement writes this console queued for `profile`, newest first.
#[tauri::command]
pub async fn list_recovery_writes(
    state: State<'_, AppState>,
    profile: String,
) -> Result<Vec<RecoveryWriteView>> {
    let ops = state.core.recovery_ops(&profile, 200).await?;
    Ok(ops.into_iter().map(Into::into).collect())
}

#[tauri::command]
pub async fn new_retirement_id(_state: State<'_, AppState>) -> Result<String> {
    Ok(switchyard_core::recovery::retire::new_retirement_id())
}

/// The control plane's dry run of retiring `name`: impact and blockers; nothing is created.
#[tauri::command]
pub async fn preview_retirement(
    state: State<'_, AppState>,
    profile: String,
    kind: ResourceKind,
    name: String,
    cascade_flows: bool,
) -> Result<RetirementDryRun> {
    let request = RetirementRequest {
        kind,
        name,
        grace_seconds: 0,
        cascade_flows,
        dlq: Default::default(),
        dry_run: true,
    };
    Ok(state.core.preview_retirement(&profile, request).await?)
}

#[tauri::command]
pub async fn start_retirement(
    state: State<'_, AppState>,
    profile: String,
    input: RetireInput,
) -> Result<RetirementItemView> {
    let grace = switchyard_protocol::parse_duration(&input.grace)
        .map_err(|e| IpcError::new(IpcErrorCode::InvalidInput, format!("grace: {e}")))?;
    let request = RetirementRequest {
        kind: input.kind,
        name: input.name,
        grace_seconds: grace.as_secs(),
        cascade_flows: input.cascade_flows,
        dlq: input.dlq,
        dry_run: false,
    };
    let view = state
        .core
        .retire(&profile, request, Some(input.id), CONFIRM_WITHIN)
        .await?;
    Ok(view.into())
}

#[tauri::command]
pub async fn cancel_retirement(
    state: State<'_, AppState>,
    profile: String,
    id: String,
) -> Result<RetirementItemView> {
    let view = state
        .core
        .cancel_retirement(&profile, &id, CONFIRM_WITHIN)
        .await?;
    Ok(view.into())
}

#[tauri::command]
pub async fn list_retirements(
    state: State<'_, AppState>,
    profile: String,
) -> Result<Vec<RetirementItemView>> {
    let all = state.core.retirements(&profile).await?;
    Ok(all.into_iter().map(Into::into).collect())
}

#[tauri::command]
pub async fn get_retirement(
    state: State<'_, AppState>,
    profile: String,
    id: String,
) -> Result<RetirementItemView> {
    Ok(state.core.retirement_status(&profile, &id).await?.into())
}
