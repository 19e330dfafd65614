use std::time::{Duration, Instant};

use switchyard_core::client::ApiClient;
use switchyard_core::{DiscardQueued, NewProfile, ProfileEdit, QueuedWork, SANDBOX_PROFILE};
use tauri::State;

use super::Result;
use crate::ipc::convert::profile_view;
use crate::ipc::*;
use crate::state::AppState;

#[tauri::command]
pub async fn list_profiles(state: State<'_, AppState>) -> Result<Vec<ProfileView>> {
    let active = state.active().await;
    let mut views = Vec::new();
    for profile in state.core.list_profiles().await? {
        let counts = state.core.pending_counts(&profile.name).await?;
        views.push(profile_view(&profile, &active, counts));
    }
    Ok(views)
}

/// Adds a profile (`original: null`) or edits one; `input.token: null` keeps the stored token.
#[tauri::command]
pub async fn save_profile(
    state: State<'_, AppState>,
    original: Option<String>,
    input: ProfileInput,
) -> Result<ProfileView> {
    let profile = match original {
        None => {
            let token = input.token.filter(|t| !t.is_empty()).ok_or_else(|| {
                IpcError::new(
                    IpcErrorCode::InvalidInput,
                    "token: a new control plane needs a token",
                )
            })?;
            let new = NewProfile {
                name: input.name,
                url: input.url,
                token,
            };
            state.core.add_profile(new).await?
        }
        Some(name) => {
            let edit = ProfileEdit {
                url: Some(input.url),
                token: input.token.filter(|t| !t.is_empty()),
            };
            let edited = state.core.edit_profile(&name, edit).await?;
            state.profile_edited(&name).await;
            edited
        }
    };
    let counts = state.core.pending_counts(&profile.name).await?;
    Ok(profile_view(&profile, &state.active().await, counts))
}

/// What removing `name` would lose: the work queued for it, per kind.
#[tauri::command]
pub async fn queued_work(state: State<'_, AppState>, name: String) -> Result<QueuedWork> {
    Ok(state.core.queued_work(&name).await?)
}

/// Removes a profile, losing at most `discard` (the queued work the dialog showed; `null`:
/// nothing), and returns what was lost. Refused (`queued_work`) when more is queued. Removing
/// the active one switches to the sandbox (in a build without it, to the first profile left).
#[tauri::command]
pub async fn remove_profile(
    state: State<'_, AppState>,
    name: String,
    discard: Option<QueuedWork>,
) -> Result<QueuedWork> {
    let discard = discard.map_or(DiscardQueued::No, DiscardQueued::Shown);
    let lost = state.core.remove_profile(&name, discard).await?;
    if state.active().await == name {
        let next = match crate::sandbox::BUILT_IN {
            true => None,
            false => state.core.list_profiles().await?.into_iter().next(),
        };
        match next {
            Some(profile) => state.set_active(&profile.name).await,
            // Without the sandbox and with no profile left, the app has none, as on a first
            // launch of such a build.
            None => {
                if crate::sandbox::BUILT_IN {
                    state.ensure_sandbox().await?;
                }
                state.set_active(SANDBOX_PROFILE).await;
            }
        }
    }
    Ok(lost)
}

#[tauri::command]
pub async fn activate_profile(state: State<'_, AppState>, name: String) -> Result<ProfileView> {
    if AppState::is_sandbox(&name) {
        state.ensure_sandbox().await?;
    }
    let profile = state.core.profile(&name).await?;
    state.set_active(&name).await;
    let counts = state.core.pending_counts(&name).await?;
    Ok(profile_view(&profile, &name, counts))
}

/// Tests a connection before it is saved (or a saved one, when no token is given).
#[tauri::command]
pub async fn test_connection(state: State<'_, AppState>, input: ProfileInput) -> Result<Health> {
    let Some(token) = input.token.filter(|t| !t.is_empty()) else {
        return Ok(health(state.core.test_connection(&input.name).await?));
    };
    let client = ApiClient::new(&input.name, &input.url, &token, Duration::from_secs(5))?;
    let started = Instant::now();
    let reachable = client.health().await;
    let latency_ms = reachable
        .as_ref()
        .ok()
        .map(|_| started.elapsed().as_millis() as u32);
    let info = match &reachable {
        Ok(_) => client.info().await.map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    let role = match &info {
        Ok(_) => client
            .whoami()
            .await
            .ok()
            .flatten()
            .map(|c| c.role.to_string()),
        Err(_) => None,
    };
    Ok(Health {
        ok: info.is_ok(),
        latency_ms,
        server_version: info.as_ref().ok().map(|i| i.version.clone()),
        role,
        error: info.err(),
    })
}

/// Health and latency of `profile`'s control plane.
#[tauri::command]
pub async fn check_health(state: State<'_, AppState>, profile: String) -> Result<Health> {
    Ok(health(state.core.test_connection(&profile).await?))
}

fn health(report: switchyard_core::ConnectionReport) -> Health {
    Health {
        ok: report.healthy && report.authenticated,
        latency_ms: report.latency_ms.map(|ms| ms as u32),
        server_version: report.server.map(|s| s.version),
        role: report.caller.map(|c| c.role.to_string()),
        error: report.error,
    }
}
