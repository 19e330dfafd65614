use switchyard_core::{OpState as CoreOpState, OutboxFilter, ResourceKind, Write};
use tauri::State;

use super::Result;
use crate::ipc::convert::{outbox_entry, resource_view};
use crate::ipc::*;
use crate::state::AppState;

#[tauri::command]
pub async fn list_resources(
    state: State<'_, AppState>,
    profile: String,
    kind: ResourceKind,
) -> Result<Vec<ResourceView>> {
    let kind: ResourceKind = kind;
    let cached = state.core.list_resources(&profile, kind).await?;
    let latest = state.core.latest_ops(&profile, Some(kind), None).await?;
    Ok(cached
        .iter()
        .map(|r| resource_view(r, latest.get(&(r.kind, r.name.clone()))))
        .collect())
}

/// Resources whose name contains `query`, for the command palette (at most 50).
#[tauri::command]
pub async fn search_resources(
    state: State<'_, AppState>,
    profile: String,
    query: String,
    limit: u32,
) -> Result<Vec<ResourceRef>> {
    let found = state
        .core
        .search_resources(&profile, &query, limit.min(50))
        .await?;
    Ok(found
        .into_iter()
        .map(|(kind, name)| ResourceRef { kind, name })
        .collect())
}

#[tauri::command]
pub async fn get_resource(
    state: State<'_, AppState>,
    profile: String,
    kind: ResourceKind,
    name: String,
) -> Result<ResourceView> {
    let cached = state.core.get_resource(&profile, kind, &name).await?;
    let latest = state
        .core
        .latest_ops(&profile, Some(kind), Some(&name))
        .await?;
    Ok(resource_view(&cached, latest.get(&(cached.kind, name))))
}

/// The resource as the control plane has it now (also refreshes the cache); `null` when absent.
#[tauri::command]
pub async fn fetch_live(
    state: State<'_, AppState>,
    profile: String,
    kind: ResourceKind,
    name: String,
) -> Result<Option<ResourceView>> {
    let live = state.core.fetch_live(&profile, kind, &name).await?;
    Ok(live.map(|r| {
        let cached = switchyard_core::CachedResource {
            profile: profile.clone(),
            kind: r.kind,
            name: r.name.clone(),
            server: Some(r),
            local: None,
            sync_state: switchyard_core::SyncState::Synced,
            pending_ops: Vec::new(),
            refreshed_at: None,
        };
        resource_view(&cached, None)
    }))
}

/// Every write made to this resource from this data dir, newest first.
#[tauri::command]
pub async fn resource_history(
    state: State<'_, AppState>,
    profile: String,
    kind: ResourceKind,
    name: String,
) -> Result<Vec<OutboxEntry>> {
    let filter = OutboxFilter {
        profile: Some(profile),
        states: every_state(),
        kind: Some(kind),
        name: Some(name),
        newest_first: true,
        limit: Some(200),
    };
    Ok(state
        .core
        .list_outbox(filter)
        .await?
        .iter()
        .map(outbox_entry)
        .collect())
}

/// The flows that name this endpoint or target (from the cache), for the delete confirmation.
#[tauri::command]
pub async fn dependants(
    state: State<'_, AppState>,
    profile: String,
    kind: ResourceKind,
    name: String,
) -> Result<Vec<String>> {
    let field = match kind {
        ResourceKind::Endpoint => "endpoint",
        ResourceKind::Target => "target",
        ResourceKind::Flow => return Ok(Vec::new()),
    };
    let flows = state
        .core
        .list_resources(&profile, ResourceKind::Flow)
        .await?;
    Ok(flows
        .iter()
        .filter(|f| {
            let spec = f
                .local
                .as_ref()
                .map(|l| &l.spec)
                .or(f.server.as_ref().map(|s| &s.spec));
            spec.and_then(|s| s.get(field)).and_then(|v| v.as_str()) == Some(name.as_str())
        })
        .map(|f| format!("flow {}", f.name))
        .collect())
}

/// Queues a write for `profile` in the outbox (works offline) and wakes the sync driver. The
/// profile is the one the form was opened on, never whichever is active when the click lands.
#[tauri::command]
pub async fn queue_write(
    state: State<'_, AppState>,
    profile: String,
    request: WriteRequest,
) -> Result<OutboxEntry> {
    let kind: ResourceKind = request.kind;
    if let Some(base) = request.base_version {
        // The edit was made on version `base`; if the cache has moved on since, say so rather
        // than silently basing the write on a version the person has not seen.
        let cached = state
            .core
            .get_resource(&profile, kind, &request.name)
            .await?;
        let now = cached.server.as_ref().map_or(0, |s| s.version);
        if base != 0 && now != 0 && now != base {
            return Err(IpcError::new(
                IpcErrorCode::Conflict,
                format!(
                    "{kind} {} changed from version {base} to {now} while you edited it; reopen it to see the change",
                    request.name
                ),
            ));
        }
    }
    let spec = || {
        request.spec.clone().ok_or_else(|| {
            IpcError::new(
                IpcErrorCode::InvalidInput,
                "spec: required for this operation",
            )
        })
    };
    let name = request.name.clone();
    let write = match request.operation {
        OpKind::Create => Write::Create {
            kind,
            name,
            spec: spec()?,
        },
        OpKind::Update => Write::Update {
            kind,
            name,
            patch: spec()?,
        },
        OpKind::Apply => Write::Apply {
            kind,
            name,
            spec: spec()?,
        },
        OpKind::Delete => Write::Delete { kind, name },
        OpKind::Enable => Write::Enable { name },
        OpKind::Disable => Write::Disable { name },
    };
    let op = state.core.enqueue(&profile, write).await?;
    state.kick.notify_one();
    Ok(outbox_entry(&op))
}

/// Counts and recent activity of `profile`, from the local cache.
#[tauri::command]
pub async fn overview(state: State<'_, AppState>, profile: String) -> Result<Overview> {
    let core = &state.core;
    let counts = core.pending_counts(&profile).await?;
    let resources = core.resource_counts(&profile).await?;
    let refreshed_at = state.last_refresh(&profile).await;
    let recent = core
        .audit(switchyard_core::AuditQuery {
            profile: Some(profile.clone()),
            limit: Some(200),
            ..Default::default()
        })
        .await?;
    // Background refreshes and sync runs are not activity a person did.
    let recent = recent
        .into_iter()
        .filter(|a| a.action != "cache.refresh" && a.action != "sync.run")
        .take(8);
    Ok(Overview {
        profile,
        endpoints: resources.endpoints,
        targets: resources.targets,
        flows: resources.flows,
        disabled_endpoints: resources.disabled_endpoints,
        refreshed_at,
        pending: (counts.pending + counts.sending) as u32,
        needs_attention: counts.needs_attention as u32,
        recent: recent
            .into_iter()
            .map(crate::ipc::convert::audit_entry)
            .collect(),
    })
}

pub(super) fn every_state() -> Vec<CoreOpState> {
    vec![
        CoreOpState::Pending,
        CoreOpState::Sending,
        CoreOpState::NeedsAttention,
        CoreOpState::Done,
        CoreOpState::Discarded,
        CoreOpState::Superseded,
    ]
}
