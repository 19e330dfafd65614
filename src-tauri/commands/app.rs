//! About, diagnostics and signed updates (the logic is in `about.rs` and `updates.rs`).

use tauri::State;

use super::Result;
use crate::ipc::*;
use crate::state::AppState;
use crate::updates::{self, UpdateSettings};

#[tauri::command]
pub async fn app_info(state: State<'_, AppState>) -> Result<AppInfo> {
    Ok(crate::about::info(&state))
}

/// The text for "Copy diagnostics": versions, OS, webview, profile count and outbox state.
#[tauri::command]
pub async fn diagnostics(state: State<'_, AppState>) -> Result<String> {
    let totals = crate::about::outbox_totals(&state.core).await?;
    Ok(crate::about::diagnostics_text(
        &crate::about::info(&state),
        &totals,
    ))
}

#[tauri::command]
pub async fn update_settings(state: State<'_, AppState>) -> Result<UpdateSettingsView> {
    let settings = UpdateSettings::load(state.core.data_dir());
    Ok(updates::settings_view(
        &settings,
        updates::key_present(),
        updates::installable(),
    ))
}

#[tauri::command]
pub async fn save_update_settings(
    state: State<'_, AppState>,
    input: UpdateSettingsInput,
) -> Result<UpdateSettingsView> {
    let settings = updates::apply_settings(state.core.data_dir(), input)?;
    Ok(updates::settings_view(
        &settings,
        updates::key_present(),
        updates::installable(),
    ))
}

#[tauri::command]
pub async fn check_update(state: State<'_, AppState>) -> Result<UpdateStatus> {
    Ok(crate::update_flow::check(&state).await)
}

/// Starts the download in the background; `update_status` reports its progress.
#[tauri::command]
pub async fn download_update(state: State<'_, AppState>) -> Result<UpdateStatus> {
    let _ = &state;
    Ok(crate::update_flow::start_download())
}

#[tauri::command]
pub async fn update_status(state: State<'_, AppState>) -> Result<UpdateStatus> {
    let _ = &state;
    Ok(crate::update_flow::updates().get())
}

/// Waits for the sync round under way, installs the verified update and restarts.
#[tauri::command]
pub async fn install_update(state: State<'_, AppState>) -> Result<()> {
    crate::update_flow::install_and_restart(state.inner()).await?;
    Ok(())
}
