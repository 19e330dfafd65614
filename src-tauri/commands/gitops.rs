//! GitOps: sources, plan, apply, progress, drift. The core does the work
//! (`switchyard_core::gitops`); like every command that reads a control plane or its cache,
//! these take the profile explicitly.

use switchyard_core::gitops::{
    ApplyProgress, ApplyReport, GitopsPlan, GitopsSource, GitopsStatus, ManagedResource,
    PlanOptions, SourceSpec,
};
use tauri::State;

use super::Result;
use crate::state::AppState;

#[tauri::command]
pub async fn gitops_sources(
    state: State<'_, AppState>,
    profile: String,
) -> Result<Vec<GitopsSource>> {
    Ok(state.core.gitops_sources(&profile).await?)
}

#[tauri::command]
pub async fn gitops_add_source(
    state: State<'_, AppState>,
    profile: String,
    spec: SourceSpec,
) -> Result<GitopsSource> {
    Ok(state.core.gitops_add_source(&profile, &spec).await?)
}

#[tauri::command]
pub async fn gitops_remove_source(
    state: State<'_, AppState>,
    profile: String,
    source: String,
) -> Result<()> {
    Ok(state.core.gitops_remove_source(&profile, &source).await?)
}

#[tauri::command]
pub async fn gitops_plan(
    state: State<'_, AppState>,
    profile: String,
    spec: SourceSpec,
    options: PlanOptions,
) -> Result<GitopsPlan> {
    Ok(state.core.gitops_plan(&profile, &spec, options).await?)
}

/// Queues the plan's writes and wakes the sync engine to send them.
#[tauri::command]
pub async fn gitops_apply(state: State<'_, AppState>, plan: GitopsPlan) -> Result<ApplyReport> {
    let report = state.core.gitops_apply(&plan).await?;
    state.kick.notify_one();
    Ok(report)
}

#[tauri::command]
pub async fn gitops_progress(
    state: State<'_, AppState>,
    profile: String,
    source: String,
    commit: String,
) -> Result<ApplyProgress> {
    Ok(state
        .core
        .gitops_progress(&profile, &source, &commit)
        .await?)
}

#[tauri::command]
pub async fn gitops_status(
    state: State<'_, AppState>,
    profile: String,
    source: String,
) -> Result<GitopsStatus> {
    Ok(state.core.gitops_status(&profile, &source).await?)
}

/// Resources managed by Git on `profile`, with drift against the cache (badges).
#[tauri::command]
pub async fn gitops_managed(
    state: State<'_, AppState>,
    profile: String,
) -> Result<Vec<ManagedResource>> {
    Ok(state.core.gitops_managed(&profile).await?)
}
