//! The rotation wizard (docs/rotation.md "From the console"): each command calls one core step
//! (crates/core/src/rotation/) and waits at most a few seconds for the control plane; what is
//! not answered by then stays queued under its derived key, and the wizard resumes it.

use std::time::Duration;

use switchyard_core::rotation::{Rotation, RotationProgress};
use switchyard_protocol::{ResourceKind, UploadCertificateRequest};
use tauri::State;

use super::Result;
use crate::ipc::*;
use crate::state::AppState;

/// How long a step waits for the control plane before answering with what is stored.
const STEP_WITHIN: Duration = Duration::from_secs(8);

/// The stage step: saved locally, then sent; the answer carries the new value once.
#[tauri::command]
pub async fn start_rotation(
    state: State<'_, AppState>,
    profile: String,
    input: RotationStartInput,
) -> Result<RotationProgressView> {
    let overlap = input.overlap_seconds.map(|s| Duration::from_secs(s.into()));
    let r = state
        .core
        .start_rotation(&profile, &input.target, overlap, input.force)
        .await?;
    let progress = state.core.resume_rotation(&r.id, STEP_WITHIN).await?;
    refresh_target(&state, &progress.rotation).await;
    Ok(progress.into())
}

/// The certificate path's stage step: the chain and key uploaded now (never stored by the
/// console: offline it is refused and nothing is saved), then the rotation saved at `staged`.
#[tauri::command]
pub async fn start_certificate_rotation(
    state: State<'_, AppState>,
    profile: String,
    input: CertificateRotationInput,
) -> Result<RotationProgressView> {
    let CertificateRotationInput {
        target,
        certificate_id,
        certificate_pem,
        private_key_pem,
    } = input;
    let request = UploadCertificateRequest {
        certificate_pem,
        private_key_pem,
    };
    let r = state
        .core
        .start_certificate_rotation(&profile, &target, &certificate_id, request, STEP_WITHIN)
        .await?;
    refresh_target(&state, &r).await;
    Ok(RotationProgress {
        rotation: r,
        value: None,
    }
    .into())
}

/// Sends what the rotation has queued (same keys) and shows the value again until the person
/// said it is stored.
#[tauri::command]
pub async fn resume_rotation(
    state: State<'_, AppState>,
    id: String,
) -> Result<RotationProgressView> {
    let progress = state.core.resume_rotation(&id, STEP_WITHIN).await?;
    refresh_target(&state, &progress.rotation).await;
    Ok(progress.into())
}

#[tauri::command]
pub async fn get_rotation(state: State<'_, AppState>, id: String) -> Result<RotationView> {
    Ok(state.core.rotation(&id).await?.into())
}

/// The profile's rotations, newest first, as stored.
#[tauri::command]
pub async fn list_rotations(
    state: State<'_, AppState>,
    profile: String,
) -> Result<Vec<RotationView>> {
    let all = state.core.rotations(&profile).await?;
    Ok(all.into_iter().map(Into::into).collect())
}

#[tauri::command]
pub async fn acknowledge_secret(state: State<'_, AppState>, id: String) -> Result<RotationView> {
    Ok(state.core.acknowledge_secret(&id).await?.into())
}

#[tauri::command]
pub async fn verify_rotation(state: State<'_, AppState>, id: String) -> Result<RotationView> {
    let r = state.core.verify_rotation(&id, STEP_WITHIN).await?;
    Ok(r.into())
}

#[tauri::command]
pub async fn promote_rotation(
    state: State<'_, AppState>,
    id: String,
    skip_verify: bool,
) -> Result<RotationView> {
    let r = state
        .core
        .promote_rotation(&id, skip_verify, STEP_WITHIN)
        .await?;
    refresh_target(&state, &r).await;
    Ok(r.into())
}

#[tauri::command]
pub async fn rollback_rotation(state: State<'_, AppState>, id: String) -> Result<RotationView> {
    let r = state.core.rollback_rotation(&id, STEP_WITHIN).await?;
    refresh_target(&state, &r).await;
    Ok(r.into())
}

/// The target's cached status (its secrets, the open overlap the target list flags) as the
/// control plane has it after the step. Best effort: offline, the cache stays as it was and
/// the next refresh brings it.
async fn refresh_target(state: &AppState, r: &Rotation) {
    let (profile, target) = (&r.profile, &r.target);
    if let Err(e) = state
        .core
        .fetch_live(profile, ResourceKind::Target, target)
        .await
    {
        tracing::debug!("refreshing target {target} after a rotation step: {e}");
    }
}
