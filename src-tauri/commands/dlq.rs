//! DLQ explorer and replay sessions: thin commands over the core.

use std::time::Duration;

use switchyard_core::{DlqQuery, ReplayStart};
use tauri::State;

use super::Result;
use crate::ipc::*;
use crate::state::AppState;

#[tauri::command]
pub async fn dlq_page(
    state: State<'_, AppState>,
    profile: String,
    filter: DlqFilterInput,
    limit: u32,
    cursor: Option<String>,
) -> Result<DlqPageView> {
    let query = DlqQuery {
        filter: filter.to_core(),
        limit: Some(limit),
        cursor,
    };
    let page = state.core.dlq_page(&profile, &query).await?;
    Ok(DlqPageView {
        items: page.items.into_iter().map(Into::into).collect(),
        next_cursor: page.next_cursor,
    })
}

/// Exact DLQ counts, grouped, of the dead deliveries matching `filter` (`null`: all of them).
/// The by-cause matrix (`error_class,target`) is its own command, `dlq_causes`.
#[tauri::command]
pub async fn dlq_stats(
    state: State<'_, AppState>,
    profile: String,
    group_by: DlqGroupBy,
    filter: Option<DlqFilterInput>,
) -> Result<DlqStatsView> {
    crate::ipc::one_dimension(group_by)?;
    let filter = filter.map(|f| f.to_core()).unwrap_or_default();
    let stats = state.core.dlq_stats(&profile, group_by, &filter).await?;
    Ok(stats.into())
}

/// Error class × target counts of the DLQ matching `filter`, in one server call.
#[tauri::command]
pub async fn dlq_causes(
    state: State<'_, AppState>,
    profile: String,
    filter: DlqFilterInput,
) -> Result<Vec<DlqCauseView>> {
    let causes = state.core.dlq_causes(&profile, &filter.to_core()).await?;
    Ok(causes.into_iter().map(Into::into).collect())
}

#[tauri::command]
pub async fn get_event(
    state: State<'_, AppState>,
    profile: String,
    id: String,
) -> Result<EventView> {
    Ok(state.core.event(&profile, id.trim()).await?.into())
}

/// The events submitted with `event_key` (on `endpoint`, when given), newest first.
#[tauri::command]
pub async fn find_events(
    state: State<'_, AppState>,
    profile: String,
    event_key: String,
    endpoint: Option<String>,
) -> Result<EventListView> {
    let found = state
        .core
        .find_events(&profile, event_key.trim(), endpoint.as_deref(), None)
        .await?;
    Ok(found.into())
}

#[tauri::command]
pub async fn get_delivery(
    state: State<'_, AppState>,
    profile: String,
    id: String,
) -> Result<DeliveryView> {
    Ok(state.core.delivery(&profile, id.trim()).await?.into())
}

/// The planned delay before each attempt, in ms (from the server's `/v1/info`).
#[tauri::command]
pub async fn retry_schedule(state: State<'_, AppState>, profile: String) -> Result<Vec<u64>> {
    let info = state.core.server_info(&profile).await?;
    Ok(schedule_ms(&info.retry_schedule))
}

#[tauri::command]
pub async fn replay_dry_run(
    state: State<'_, AppState>,
    profile: String,
    selection: ReplaySelectionInput,
) -> Result<u64> {
    Ok(state
        .core
        .replay_dry_run(&profile, selection.to_core())
        .await?)
}

/// A fresh session id for a replay dialog; the dialog sends it with every click.
#[tauri::command]
pub async fn new_replay_id(_state: State<'_, AppState>) -> Result<String> {
    Ok(switchyard_core::replay::new_session_id())
}

/// Queues the start (saved locally), then sends it in the background.
#[tauri::command]
pub async fn start_replay(
    state: State<'_, AppState>,
    profile: String,
    input: ReplayStartInput,
) -> Result<ReplayWriteView> {
    let start = ReplayStart {
        session_id: Some(input.session_id),
        selection: input.selection.to_core(),
        rate_per_s: input.rate_per_s,
    };
    let op = state.core.enqueue_replay_start(&profile, start).await?;
    send_in_background(&state, profile);
    Ok(op.into())
}

#[tauri::command]
pub async fn cancel_replay(
    state: State<'_, AppState>,
    profile: String,
    session_id: String,
) -> Result<ReplayWriteView> {
    let op = state
        .core
        .enqueue_replay_cancel(&profile, &session_id)
        .await?;
    send_in_background(&state, profile);
    Ok(op.into())
}

fn send_in_background(state: &AppState, profile: String) {
    let core = state.core.clone();
    tauri::async_runtime::spawn(async move {
        if let Err(e) = core.sync_replays(&profile, Duration::from_secs(120)).await {
            tracing::warn!("sending replay writes: {e}");
        }
    });
}

/// Replay writes of `profile` (newest first), with their local state.
#[tauri::command]
pub async fn list_replay_writes(
    state: State<'_, AppState>,
    profile: String,
) -> Result<Vec<ReplayWriteView>> {
    Ok(state
        .core
        .replay_ops(&profile)
        .await?
        .into_iter()
        .map(Into::into)
        .collect())
}

#[tauri::command]
pub async fn list_replays(
    state: State<'_, AppState>,
    profile: String,
) -> Result<Vec<ReplaySessionView>> {
    let sessions = state.core.replay_sessions(&profile).await?;
    Ok(sessions.into_iter().map(Into::into).collect())
}

/// One session with its items; the first pending or failed re-deliveries carry their attempt
/// progress and last answer (read concurrently; left out when they cannot be read).
#[tauri::command]
pub async fn get_replay(
    state: State<'_, AppState>,
    profile: String,
    id: String,
) -> Result<ReplaySessionView> {
    let session = state.core.replay_session(&profile, &id).await?;
    let redeliveries = state
        .core
        .replay_redeliveries(&profile, &session, REDELIVERIES_SHOWN)
        .await
        .unwrap_or_default();
    Ok(ReplaySessionView::with_redeliveries(session, &redeliveries))
}

/// How many re-deliveries a session view reads in detail (one request each, per refresh).
const REDELIVERIES_SHOWN: usize = 50;
