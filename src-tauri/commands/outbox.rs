use switchyard_core::{AuditQuery, OutboxFilter};
use tauri::State;

use super::Result;
use super::resources::every_state;
use crate::ipc::convert::{audit_entry, conflict_view, outbox_entry};
use crate::ipc::*;
use crate::state::AppState;

/// The outbox of `profile`, or of every profile when `null`, newest first (settled rows
/// included; the UI filters).
#[tauri::command]
pub async fn list_outbox(
    state: State<'_, AppState>,
    profile: Option<String>,
) -> Result<Vec<OutboxEntry>> {
    let filter = OutboxFilter {
        profile,
        states: every_state(),
        newest_first: true,
        limit: Some(1000),
        ..Default::default()
    };
    Ok(state
        .core
        .list_outbox(filter)
        .await?
        .iter()
        .map(outbox_entry)
        .collect())
}

/// Sends a waiting write now instead of at its next scheduled retry.
#[tauri::command]
pub async fn retry_now(state: State<'_, AppState>, id: i64) -> Result<()> {
    state.core.make_due(id).await?;
    state.kick.notify_one();
    Ok(())
}

#[tauri::command]
pub async fn resolve(state: State<'_, AppState>, id: i64, resolution: Resolution) -> Result<()> {
    match resolution {
        Resolution::RetryAsNew => state.core.retry_as_new(id).await.map(drop)?,
        Resolution::Discard => state.core.discard(id).await.map(drop)?,
    }
    state.kick.notify_one();
    Ok(())
}

#[tauri::command]
pub async fn get_conflict(state: State<'_, AppState>, id: i64) -> Result<ConflictView> {
    Ok(conflict_view(state.core.conflict(id).await?))
}

#[tauri::command]
pub async fn sync_status(state: State<'_, AppState>) -> Result<SyncStatus> {
    Ok(state.status())
}

#[tauri::command]
pub async fn sync_now(state: State<'_, AppState>) -> Result<()> {
    state.kick.notify_one();
    Ok(())
}

/// The local audit log, every profile, newest first.
#[tauri::command]
pub async fn list_audit(state: State<'_, AppState>, limit: u32) -> Result<Vec<AuditEntry>> {
    let query = AuditQuery {
        limit: Some(limit.min(5000)),
        ..Default::default()
    };
    Ok(state
        .core
        .audit(query)
        .await?
        .into_iter()
        .map(audit_entry)
        .collect())
}

/// One write's own log: enqueue, each attempt's answer, its resolution.
#[tauri::command]
pub async fn op_audit(state: State<'_, AppState>, id: i64) -> Result<Vec<AuditEntry>> {
    let query = AuditQuery {
        op_id: Some(id),
        limit: Some(200),
        ..Default::default()
    };
    Ok(state
        .core
        .audit(query)
        .await?
        .into_iter()
        .map(audit_entry)
        .collect())
}
