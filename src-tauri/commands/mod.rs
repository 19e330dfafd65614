//! The Tauri commands: thin — take the state, call the core, map the error.
//! `command_map!` below is the single list: Tauri's invoke handler (`invoke_handler`) and the
//! generated TypeScript both come from it.

mod agents;
mod app;
mod dlq;
mod gitops;
mod health;
mod outbox;
mod profiles;
mod recovery;
mod resources;
mod rotation;
mod targets;

pub use agents::*;
pub use app::*;
pub use dlq::*;
pub use gitops::*;
pub use health::*;
pub use outbox::*;
pub use profiles::*;
pub use recovery::*;
pub use resources::*;
pub use rotation::*;
pub use targets::*;

use crate::ipc::bindings::command_map;
use crate::ipc::*;
use switchyard_core::QueuedWork;
use switchyard_core::gitops::{
    ApplyProgress, ApplyReport, GitopsPlan, GitopsSource, GitopsStatus, ManagedResource,
    PlanOptions, SourceSpec,
};
use switchyard_protocol::retirement::RetirementDryRun;

command_map! {
    list_profiles() -> Vec<ProfileView>;
    save_profile(original: Option<String>, input: ProfileInput) -> ProfileView;
    queued_work(name: String) -> QueuedWork;
    remove_profile(name: String, discard: Option<QueuedWork>) -> QueuedWork;
    activate_profile(name: String) -> ProfileView;
    test_connection(input: ProfileInput) -> Health;
    check_health(profile: String) -> Health;
    overview(profile: String) -> Overview;
    list_resources(profile: String, kind: ResourceKind) -> Vec<ResourceView>;
    search_resources(profile: String, query: String, limit: u32) -> Vec<ResourceRef>;
    get_resource(profile: String, kind: ResourceKind, name: String) -> ResourceView;
    fetch_live(profile: String, kind: ResourceKind, name: String) -> Option<ResourceView>;
    resource_history(profile: String, kind: ResourceKind, name: String) -> Vec<OutboxEntry>;
    dependants(profile: String, kind: ResourceKind, name: String) -> Vec<String>;
    queue_write(profile: String, request: WriteRequest) -> OutboxEntry;
    list_outbox(profile: Option<String>) -> Vec<OutboxEntry>;
    retry_now(id: i64) -> ();
    resolve(id: i64, resolution: Resolution) -> ();
    get_conflict(id: i64) -> ConflictView;
    sync_status() -> SyncStatus;
    sync_now() -> ();
    list_audit(limit: u32) -> Vec<AuditEntry>;
    op_audit(id: i64) -> Vec<AuditEntry>;
    ui_ready(marks: Option<LaunchMarks>) -> u32;
    dlq_page(profile: String, filter: DlqFilterInput, limit: u32, cursor: Option<String>) -> DlqPageView;
    dlq_stats(profile: String, group_by: DlqGroupBy, filter: Option<DlqFilterInput>) -> DlqStatsView;
    dlq_causes(profile: String, filter: DlqFilterInput) -> Vec<DlqCauseView>;
    delivery_metrics(profile: String, window: MetricsWindow, group_by: MetricsGroupBy) -> DeliveryHealthView;
    test_target(profile: String, input: TargetTestInput) -> TargetTestView;
    list_target_tests(profile: String, target: String) -> Vec<TargetTestView>;
    take_shown_secrets(profile: String) -> Vec<ShownSecretView>;
    start_rotation(profile: String, input: RotationStartInput) -> RotationProgressView;
    start_certificate_rotation(profile: String, input: CertificateRotationInput) -> RotationProgressView;
    resume_rotation(id: String) -> RotationProgressView;
    get_rotation(id: String) -> RotationView;
    list_rotations(profile: String) -> Vec<RotationView>;
    acknowledge_secret(id: String) -> RotationView;
    verify_rotation(id: String) -> RotationView;
    promote_rotation(id: String, skip_verify: bool) -> RotationView;
    rollback_rotation(id: String) -> RotationView;
    recovery_findings(profile: String) -> RecoveryView;
    run_fix(profile: String, finding_id: String, action: u32, key: String) -> FixOutcomeView;
    list_recovery_writes(profile: String) -> Vec<RecoveryWriteView>;
    new_retirement_id() -> String;
    preview_retirement(profile: String, kind: ResourceKind, name: String, cascade_flows: bool) -> RetirementDryRun;
    start_retirement(profile: String, input: RetireInput) -> RetirementItemView;
    cancel_retirement(profile: String, id: String) -> RetirementItemView;
    list_retirements(profile: String) -> Vec<RetirementItemView>;
    get_retirement(profile: String, id: String) -> RetirementItemView;
    get_event(profile: String, id: String) -> EventView;
    find_events(profile: String, event_key: String, endpoint: Option<String>) -> EventListView;
    get_delivery(profile: String, id: String) -> DeliveryView;
    retry_schedule(profile: String) -> Vec<u64>;
    replay_dry_run(profile: String, selection: ReplaySelectionInput) -> u64;
    new_replay_id() -> String;
    start_replay(profile: String, input: ReplayStartInput) -> ReplayWriteView;
    cancel_replay(profile: String, session_id: String) -> ReplayWriteView;
    list_replay_writes(profile: String) -> Vec<ReplayWriteView>;
    list_replays(profile: String) -> Vec<ReplaySessionView>;
    get_replay(profile: String, id: String) -> ReplaySessionView;
    agents_settings(profile: String) -> AgentsSettings;
    set_agents_read_only(profile: String, read_only: bool) -> AgentsSettings;
    gitops_sources(profile: String) -> Vec<GitopsSource>;
    gitops_add_source(profile: String, spec: SourceSpec) -> GitopsSource;
    gitops_remove_source(profile: String, source: String) -> ();
    gitops_plan(profile: String, spec: SourceSpec, options: PlanOptions) -> GitopsPlan;
    gitops_apply(plan: GitopsPlan) -> ApplyReport;
    gitops_progress(profile: String, source: String, commit: String) -> ApplyProgress;
    gitops_status(profile: String, source: String) -> GitopsStatus;
    gitops_managed(profile: String) -> Vec<ManagedResource>;
    app_info() -> AppInfo;
    diagnostics() -> String;
    report_ui_error(message: String) -> ();
    update_settings() -> UpdateSettingsView;
    save_update_settings(input: UpdateSettingsInput) -> UpdateSettingsView;
    check_update() -> UpdateStatus;
    download_update() -> UpdateStatus;
    update_status() -> UpdateStatus;
    install_update() -> ();
}

pub type Result<T> = std::result::Result<T, IpcError>;

/// The UI calls this once, when its first screen shows data: the launch is complete. Logs
/// and returns the time since the process started (`make bench-desktop` reads the log line),
/// and the webview's own phases when the UI sends them.
#[tauri::command]
pub async fn ui_ready(
    state: tauri::State<'_, crate::state::AppState>,
    marks: Option<LaunchMarks>,
) -> Result<u32> {
    let ms = crate::started().elapsed().as_millis() as u32;
    if let Some(m) = marks {
        tracing::info!("launch: {}", webview_phases(&m));
    }
    tracing::info!("launch: interactive after {ms} ms");
    state.report_first_screen();
    Ok(ms)
}

/// A failure the UI met that no core event names (a query that failed in the UI itself): into
/// the log, so it is there when someone reads it afterwards. At most 500 characters.
#[tauri::command]
pub async fn report_ui_error(
    _state: tauri::State<'_, crate::state::AppState>,
    message: String,
) -> Result<()> {
    let message: String = message.chars().take(500).collect();
    tracing::warn!("UI: {message}");
    Ok(())
}

/// The webview's phases as the launch log shows them.
fn webview_phases(m: &LaunchMarks) -> String {
    let answer = m
        .first_answer_ms
        .map_or_else(|| "none".to_owned(), |a| format!("{a:.0} ms"));
    format!(
        "webview: script ran {:.0} ms after its page started loading, first render {:.0} ms, \
         first command answer {answer}, data shown {:.0} ms",
        m.script_ms, m.first_render_ms, m.shown_ms
    )
}

#[cfg(test)]
mod launch_tests {
    use super::*;

    #[test]
    fn the_webview_phases_read_in_order_with_a_missing_answer_said() {
        let m = LaunchMarks {
            script_ms: 94.6,
            first_render_ms: 320.2,
            first_answer_ms: None,
            shown_ms: 452.0,
        };
        assert_eq!(
            webview_phases(&m),
            "webview: script ran 95 ms after its page started loading, first render 320 ms, \
             first command answer none, data shown 452 ms"
        );
    }
}
