//! The Switchyard desktop console (Tauri 2). Commands stay thin: they call `switchyard-core`.
//!
//! On start the app opens the console core on its data dir (shared with the `switchyard` CLI;
//! `SWITCHYARD_DATA_DIR` overrides it), and — when no control plane is configured, or the
//! sandbox was the last one used — starts the embedded sandbox control plane with demo data,
//! in the background: the window and the first screen (read from the local cache) come first.

mod about;
pub mod commands;
mod events;
pub mod ipc;
pub mod malloc;
mod navigation;
mod quit;
mod sandbox;
pub mod state;
mod sync_driver;
mod update_flow;
pub mod updates;
pub mod webkit_env;

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Instant;

use switchyard_core::{Console, ConsoleOptions, SANDBOX_PROFILE};
use tauri::Manager;

use crate::state::AppState;

static STARTED: OnceLock<Instant> = OnceLock::new();

/// When the process started (the first call to `run`).
pub fn started() -> Instant {
    *STARTED.get_or_init(Instant::now)
}

/// The data dir: `SWITCHYARD_DATA_DIR`, else the core's default (shared with the CLI).
pub fn data_dir() -> PathBuf {
    std::env::var_os("SWITCHYARD_DATA_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(switchyard_core::default_data_dir)
}

/// Opens the core and picks the profile to show: the remembered one if it still exists,
/// else the first configured one, else the sandbox (its port bound and registered here, the
/// control plane started in the background).
async fn open_state() -> anyhow::Result<AppState> {
    let core = Console::open(ConsoleOptions::new(data_dir(), "desktop")).await?;
    let profiles = core.list_profiles().await?;
    let remembered =
        AppState::remembered_active(&core).filter(|name| profiles.iter().any(|p| &p.name == name));
    let first_remote = profiles.iter().find(|p| !p.sandbox).map(|p| p.name.clone());
    let active = remembered
        .or(first_remote)
        .unwrap_or_else(|| SANDBOX_PROFILE.to_owned());
    let known_sandbox = profiles.iter().any(|p| p.sandbox);
    let state = AppState::new(core, active.clone());
    state.load_status(&active).await;
    // Without the embedded sandbox and with no control plane added yet, nothing is started:
    // the app opens on its Control planes page's error until one is added. A sandbox used
    // before starts at launch even when another profile is active: its deliveries (and what
    // the console queued for it) go on, and switching to it finds it answering.
    if (AppState::is_sandbox(&active) || known_sandbox) && sandbox::BUILT_IN {
        state.ensure_sandbox().await?;
    }
    Ok(state)
}

/// Signed updates; the key is the build's (`plugins.updater.pubkey`), see `updates.rs`.
fn updater_plugin() -> tauri::plugin::TauriPlugin<tauri::Wry, tauri_plugin_updater::Config> {
    let builder = tauri_plugin_updater::Builder::new();
    match updates::test_pubkey_override() {
        Some(key) => builder.pubkey(key).build(),
        None => builder.build(),
    }
}

/// The log: the app's log dir (`switchyard.log`, shown in About) and standard error.
fn log_plugin() -> tauri::plugin::TauriPlugin<tauri::Wry> {
    tauri_plugin_log::Builder::new()
        .clear_targets()
        .level(log::LevelFilter::Info)
        .level_for("sqlx", log::LevelFilter::Warn)
        .level_for("tower_http", log::LevelFilter::Warn)
        .target(tauri_plugin_log::Target::new(
            tauri_plugin_log::TargetKind::LogDir {
                file_name: Some("switchyard".into()),
            },
        ))
        .target(tauri_plugin_log::Target::new(
            tauri_plugin_log::TargetKind::Stderr,
        ))
        .build()
}

/// Opens the data and starts the background tasks, before the window shows.
fn setup(app: &mut tauri::App) -> Result<(), Box<dyn std::error::Error>> {
    let key = updates::test_pubkey_override().or_else(|| updates::configured_pubkey(app.config()));
    updates::set_key_present(key.is_some());
    tracing::info!(
        "Switchyard {} starting; launch: window created after {} ms",
        switchyard_build_info::LONG_VERSION,
        started().elapsed().as_millis()
    );
    update_flow::init(app.handle().clone());
    let state = tauri::async_runtime::block_on(open_state())
        .map_err(|e| format!("Switchyard could not open its data: {e:#}"))?;
    tracing::info!(
        "launch: core ready after {} ms",
        started().elapsed().as_millis()
    );
    app.manage(state);
    let handle = app.handle().clone();
    tauri::async_runtime::spawn(events::forward(handle.clone()));
    tauri::async_runtime::spawn(sync_driver::run(handle.clone()));
    tauri::async_runtime::spawn(update_flow::auto_check(handle));
    Ok(())
}

pub fn run() {
    started();
    tauri::Builder::default()
        // First: a second launch focuses the running window instead of opening another.
        .plugin(tauri_plugin_single_instance::init(|app, _args, _cwd| {
            if let Some(window) = app.get_webview_window("main") {
                let _ = window.unminimize();
                let _ = window.set_focus();
            }
        }))
        .plugin(navigation::guard())
        .plugin(log_plugin())
        .plugin(tauri_plugin_window_state::Builder::default().build())
        .plugin(updater_plugin())
        .setup(setup)
        .on_page_load(|_webview, payload| {
            let at = started().elapsed().as_millis();
            match payload.event() {
                tauri::webview::PageLoadEvent::Started => {
                    tracing::info!("launch: page load started after {at} ms")
                }
                tauri::webview::PageLoadEvent::Finished => {
                    tracing::info!("launch: page loaded after {at} ms")
                }
            }
        })
        .on_window_event(|window, event| {
            // Closing the window quits once the writes in flight are answered.
            if let tauri::WindowEvent::CloseRequested { api, .. } = event
                && !quit::quitting()
            {
                api.prevent_close();
                quit::begin(window.app_handle());
            }
        })
        .invoke_handler(commands::invoke_handler())
        .build(tauri::generate_context!("tauri.conf.json"))
        .expect("error while building the Switchyard desktop console")
        .run(|app, event| {
            // Any other way out (the last window gone) goes through the same quit; an exit
            // the app asks for itself (`code` set: the quit's own exit, an update's restart,
            // which flushes the outbox its own way) goes through.
            if let tauri::RunEvent::ExitRequested {
                api, code: None, ..
            } = event
                && !quit::quitting()
            {
                api.prevent_exit();
                quit::begin(app);
            }
        });
}
