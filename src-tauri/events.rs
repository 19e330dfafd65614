//! Forwards the core's event stream to the webview as typed `core-event`s, keeping the
//! status-bar state (`AppState::status`) current on the way.

use switchyard_core::{Event, OpState as CoreOpState, SyncOutcome};
use tauri::{AppHandle, Emitter, Manager};
use tokio::sync::broadcast::error::RecvError;

use crate::ipc::{CORE_EVENT, CoreEvent, SyncStatus};
use crate::state::AppState;

pub async fn forward(app: AppHandle) {
    let state = app.state::<AppState>();
    let mut events = state.core.subscribe();
    loop {
        let event = match events.recv().await {
            Ok(event) => event,
            Err(RecvError::Lagged(missed)) => {
                // Missed some: have the UI re-read everything instead.
                tracing::debug!("event forwarder lagged by {missed}");
                let profile = state.active().await;
                emit(&app, CoreEvent::ResourcesChanged { profile });
                emit(&app, CoreEvent::Sync(state.status()));
                continue;
            }
            Err(RecvError::Closed) => return,
        };
        let active = state.active().await;
        log(&state, &active, &event).await;
        if let Some(out) = translate(&state, &active, event).await {
            // A cache change also moves the status bar's "Last sync": say so to it too.
            let status = matches!(out, CoreEvent::ResourcesChanged { .. });
            emit(&app, out);
            if status {
                emit(&app, CoreEvent::Sync(state.status()));
            }
        }
    }
}

fn emit(app: &AppHandle, event: CoreEvent) {
    if let Err(e) = app.emit(CORE_EVENT, event) {
        tracing::warn!("cannot emit a core event: {e}");
    }
}

/// What an operator reading the log afterwards needs: when a control plane stopped and started
/// answering, each write it refused, each replay write's outcome. (Routine progress is not
/// logged: the log stays readable over a day.) Read before `translate` updates the status.
async fn log(state: &AppState, active: &str, event: &Event) {
    match event {
        Event::Connectivity {
            profile,
            online,
            detail,
        } if profile == active && state.status().online != Some(*online) => {
            if *online {
                tracing::info!("{profile} answers");
            } else {
                let why = detail.as_deref().unwrap_or("no answer");
                tracing::warn!("{profile} does not answer: {why}");
            }
        }
        Event::OpTransition {
            profile,
            op_id,
            to: CoreOpState::NeedsAttention,
            ..
        } => {
            let Ok(op) = state.core.op(*op_id).await else {
                return;
            };
            let why = op.last_error.map(|e| e.message).unwrap_or_default();
            tracing::warn!(
                "{profile}: write #{op_id} ({} {} {}) needs attention: {why}",
                op.op.as_str(),
                op.kind.as_str(),
                op.name
            );
        }
        Event::ReplayWrite {
            profile,
            session_id,
            state: write,
            attempts,
            ..
        } => match write {
            switchyard_core::ReplayOpState::Done => {
                tracing::info!("{profile}: replay write for {session_id} confirmed")
            }
            switchyard_core::ReplayOpState::NeedsAttention => tracing::warn!(
                "{profile}: replay write for {session_id} refused after {attempts} tries"
            ),
            _ => {}
        },
        _ => {}
    }
}

/// Updates the status from one core event and says what the UI should hear about it.
async fn translate(state: &AppState, active: &str, event: Event) -> Option<CoreEvent> {
    let sync = |f: &dyn Fn(&mut SyncStatus)| Some(CoreEvent::Sync(state.update_status(f)));
    match event {
        Event::Connectivity {
            profile,
            online,
            detail,
        } if profile == active => sync(&|s| {
            s.online = Some(online);
            s.offline_reason = if online { None } else { detail.clone() };
        }),
        Event::PendingCount { profile, counts } if profile == active => sync(&|s| {
            s.pending = (counts.pending + counts.sending) as u32;
            s.needs_attention = counts.needs_attention as u32;
        }),
        Event::SyncStarted { profile, total } if profile == active => sync(&|s| {
            s.syncing = true;
            s.round_total = total as u32;
            s.round_done = 0;
        }),
        Event::SyncProgress(p) if p.profile == active => sync(&|s| {
            s.round_total = p.total as u32;
            s.round_done = (p.done + p.failed) as u32;
            s.pending = (p.counts.pending + p.counts.sending) as u32;
            s.needs_attention = p.counts.needs_attention as u32;
        }),
        Event::SyncFinished(report) if report.profile == active => sync(&|s| {
            s.syncing = false;
            s.pending = (report.counts.pending + report.counts.sending) as u32;
            s.needs_attention = report.counts.needs_attention as u32;
            if report.outcome != SyncOutcome::Incomplete || report.done > 0 {
                s.last_sync_at = Some(state.core.now());
            }
        }),
        Event::CacheChanged { profile } if profile == active => {
            state.update_status(|s| s.last_sync_at = Some(state.core.now()));
            Some(CoreEvent::ResourcesChanged { profile })
        }
        Event::OpTransition {
            profile, op_id, to, ..
        } if profile == active => {
            let op = state.core.op(op_id).await.ok()?;
            if to == CoreOpState::Pending {
                state.kick.notify_one();
            }
            Some(CoreEvent::Operation {
                profile,
                op_id,
                kind: op.kind,
                name: op.name,
                state: to,
            })
        }
        Event::ReplayWrite {
            profile,
            session_id,
            state,
            attempts,
            ..
        } if profile == active => Some(CoreEvent::ReplayWrite {
            profile,
            session_id,
            state: crate::ipc::ReplayWriteState::of(state, attempts),
        }),
        Event::SecretShown { profile, target } if profile == active => {
            Some(CoreEvent::SecretShown { profile, target })
        }
        _ => None,
    }
}
