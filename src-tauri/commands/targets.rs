//! Test webhooks of targets: queued in the core (saved locally, one key), sent in the
//! background; the UI polls the list until the test is confirmed or needs attention.

use std::time::Duration;

use switchyard_core::TargetTestRequest;
use tauri::State;

use super::Result;
use crate::ipc::*;
use crate::state::AppState;

/// The tests shown per target (newest first).
const TESTS_SHOWN: u32 = 5;

#[tauri::command]
pub async fn test_target(
    state: State<'_, AppState>,
    profile: String,
    input: TargetTestInput,
) -> Result<TargetTestView> {
    let op = state
        .core
        .enqueue_target_test(
            &profile,
            &input.target,
            TargetTestRequest::default(),
            Some(input.key),
        )
        .await?;
    let core = state.core.clone();
    tauri::async_runtime::spawn(async move {
        if let Err(e) = core
            .sync_target_tests(&profile, Duration::from_secs(60))
            .await
        {
            tracing::warn!("sending test webhooks: {e}");
        }
    });
    Ok(op.into())
}

#[tauri::command]
pub async fn list_target_tests(
    state: State<'_, AppState>,
    profile: String,
    target: String,
) -> Result<Vec<TargetTestView>> {
    let ops = state
        .core
        .target_tests(&profile, Some(&target), TESTS_SHOWN)
        .await?;
    Ok(ops.into_iter().map(Into::into).collect())
}

/// The signing secrets of targets this app created on `profile` and nobody has seen yet;
/// each is answered once, and no longer owed (crates/core/src/owed_secrets.rs) once the
/// dialog has it.
#[tauri::command]
pub async fn take_shown_secrets(
    state: State<'_, AppState>,
    profile: String,
) -> Result<Vec<ShownSecretView>> {
    let taken = state.core.take_shown_secrets(&profile);
    state.core.secrets_shown(&taken).await?;
    Ok(taken.into_iter().map(Into::into).collect())
}
