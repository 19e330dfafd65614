//! The update flow with the running app: check the feed from the settings, download with
//! progress and verify, then install on restart once no write is being sent.

use std::sync::{LazyLock, OnceLock};
use std::time::Duration;

use tauri::AppHandle;
use tauri_plugin_updater::UpdaterExt;

use crate::ipc::{IpcError, IpcErrorCode, OutboxTotals, UpdateStatus};
use crate::state::AppState;
use crate::updates::{self, UpdateSettings, Updates};

static APP: OnceLock<AppHandle> = OnceLock::new();
static UPDATES: LazyLock<Updates> = LazyLock::new(Updates::default);

/// How long a restart waits for the sync round under way to finish.
const FLUSH_WAITS_AT_MOST: Duration = Duration::from_secs(30);
/// Automatic checks (opted in): soon after launch, then this often.
const CHECK_EVERY: Duration = Duration::from_secs(24 * 3600);
/// How often the opt-in is looked at (it can be turned on at any time).
const LOOK_EVERY: Duration = Duration::from_secs(3600);

pub fn init(app: AppHandle) {
    let _ = APP.set(app);
}

pub fn handle() -> Option<&'static AppHandle> {
    APP.get()
}

pub fn updates() -> &'static Updates {
    &UPDATES
}

fn app() -> Result<&'static AppHandle, IpcError> {
    APP.get()
        .ok_or_else(|| IpcError::new(IpcErrorCode::Internal, "the app is still starting"))
}

fn failed(message: String, refused: bool) -> UpdateStatus {
    tracing::warn!("update: {message}");
    let status = UpdateStatus::Failed { message, refused };
    UPDATES.set(status.clone());
    status
}

/// Asks the feed named in the settings whether a newer signed build exists.
pub async fn check(state: &AppState) -> UpdateStatus {
    let settings = UpdateSettings::load(state.core.data_dir());
    let Some(feed) = settings.feed_url.as_deref() else {
        return failed(
            "No update feed is set: enter its URL in About → Updates.".into(),
            false,
        );
    };
    if !updates::key_present() {
        return failed(
            "This build carries no update key, so it cannot verify updates: install new \
             versions from a package (see docs/install.md)."
                .into(),
            false,
        );
    }
    let feed = match updates::validate_feed(feed) {
        Ok(url) => url,
        Err(m) => return failed(m, false),
    };
    let Ok(app) = app() else {
        return failed("the app is still starting".into(), false);
    };
    UPDATES.set(UpdateStatus::Checking);
    let updater = match app
        .updater_builder()
        .endpoints(vec![feed])
        .and_then(|b| b.timeout(Duration::from_secs(30)).build())
    {
        Ok(u) => u,
        Err(e) => return failed(updates::explain(&e, None).0, false),
    };
    match updater.check().await {
        Ok(Some(update)) => {
            let status = UpdateStatus::Available {
                version: update.version.clone(),
                current_version: update.current_version.clone(),
                notes: update.body.clone(),
                date: update.date.map(|d| d.to_string()),
            };
            tracing::info!("update: version {} is available", update.version);
            *UPDATES.offer.lock().expect("offer lock") = Some(update);
            *UPDATES.verified.lock().expect("verified lock") = None;
            UPDATES.set(status.clone());
            status
        }
        Ok(None) => {
            let status = UpdateStatus::UpToDate {
                current_version: switchyard_build_info::VERSION.to_owned(),
            };
            UPDATES.set(status.clone());
            status
        }
        Err(e) => {
            let (message, refused) = updates::explain(&e, None);
            failed(message, refused)
        }
    }
}

/// Starts downloading the offered update; progress and the verdict land in `updates()`.
pub fn start_download() -> UpdateStatus {
    let Some(update) = UPDATES.offer.lock().expect("offer lock").clone() else {
        return failed(
            "No update is offered: check for updates first.".into(),
            false,
        );
    };
    if matches!(UPDATES.get(), UpdateStatus::Downloading { .. }) {
        return UPDATES.get();
    }
    let version = update.version.clone();
    UPDATES.set(UpdateStatus::Downloading {
        version: version.clone(),
        downloaded: 0,
        total: None,
    });
    tauri::async_runtime::spawn(async move {
        let mut downloaded = 0u64;
        let progress_version = version.clone();
        let result = update
            .download(
                |chunk, total| {
                    downloaded += chunk as u64;
                    UPDATES.set(UpdateStatus::Downloading {
                        version: progress_version.clone(),
                        downloaded,
                        total,
                    });
                },
                || {},
            )
            .await;
        match result {
            Ok(bytes) => {
                tracing::info!(
                    "update: version {version} downloaded and verified ({} bytes)",
                    bytes.len()
                );
                *UPDATES.verified.lock().expect("verified lock") = Some(bytes);
                UPDATES.set(UpdateStatus::Ready { version });
            }
            Err(e) => {
                *UPDATES.verified.lock().expect("verified lock") = None;
                let (message, refused) = updates::explain(&e, Some(&version));
                failed(message, refused);
            }
        }
    });
    UPDATES.get()
}

/// Installs the verified update and restarts. First the sync driver's round under way is
/// waited for and no new one starts, so no write is interrupted mid-send; what is still queued
/// stays in the outbox (SQLite) and is sent by the new version with the same keys.
pub async fn install_and_restart(state: &AppState) -> Result<(), IpcError> {
    let app = app()?;
    let (Some(update), Some(bytes)) = (
        UPDATES.offer.lock().expect("offer lock").clone(),
        UPDATES.verified.lock().expect("verified lock").clone(),
    ) else {
        return Err(IpcError::new(
            IpcErrorCode::InvalidInput,
            "No verified update is ready to install.",
        ));
    };
    if !updates::installable() {
        return Err(IpcError::new(
            IpcErrorCode::InvalidInput,
            "This copy was not installed from a package, so it cannot replace itself: install \
             the new version from its package (docs/install.md).",
        ));
    }
    let (round, totals) = quiesce_sync(state, FLUSH_WAITS_AT_MOST).await?;
    tracing::info!(
        "update: installing {}; {} queued writes stay in the outbox and go out after the restart",
        update.version,
        totals.pending + totals.sending + totals.needs_attention
    );
    UPDATES.set(UpdateStatus::Installing {
        version: update.version.clone(),
    });
    let installed = tauri::async_runtime::spawn_blocking(move || update.install(bytes))
        .await
        .map_err(|e| {
            IpcError::new(
                IpcErrorCode::Internal,
                format!("the installer stopped: {e}"),
            )
        })?;
    if let Err(e) = installed {
        drop(round);
        let message = format!(
            "Installing failed: {e}. Nothing changed; Switchyard {} keeps running.",
            switchyard_build_info::VERSION
        );
        failed(message.clone(), false);
        return Err(IpcError::new(IpcErrorCode::Internal, message));
    }
    tracing::info!("update: installed; restarting");
    app.restart()
}

/// Stops the sync driver for a restart: waits at most `wait` for the round under way, keeps
/// the guard so no new round starts, and counts what stays queued (nothing is discarded).
pub async fn quiesce_sync(
    state: &AppState,
    wait: Duration,
) -> Result<(tokio::sync::MutexGuard<'_, ()>, OutboxTotals), IpcError> {
    let round = tokio::time::timeout(wait, state.sync_round.lock())
        .await
        .map_err(|_| {
            IpcError::new(
                IpcErrorCode::Conflict,
                "Writes are still being sent; try again when the sync finishes. Nothing was installed.",
            )
        })?;
    let totals = crate::about::outbox_totals(&state.core)
        .await
        .map_err(IpcError::from)?;
    Ok((round, totals))
}

/// Opted-in automatic checks: once after launch, then daily. Only reports availability; the
/// download and the restart stay a person's decision.
pub async fn auto_check(app: AppHandle) {
    use tauri::Manager;
    let state = app.state::<AppState>();
    let mut last: Option<std::time::Instant> = None;
    tokio::time::sleep(Duration::from_secs(10)).await;
    loop {
        let settings = UpdateSettings::load(state.core.data_dir());
        let due = last.is_none_or(|at| at.elapsed() >= CHECK_EVERY);
        let idle = matches!(
            UPDATES.get(),
            UpdateStatus::Idle | UpdateStatus::UpToDate { .. } | UpdateStatus::Failed { .. }
        );
        if settings.checks_automatically() && due && idle {
            check(&state).await;
            last = Some(std::time::Instant::now());
        }
        tokio::time::sleep(LOOK_EVERY).await;
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use serde_json::json;
    use switchyard_core::{Console, ConsoleOptions, NewProfile, ResourceKind, Write};

    use super::*;

    /// A restart for an update waits for the sync round under way, blocks the next one, and
    /// leaves queued writes in the outbox; when the round does not end in time it installs
    /// nothing and says why.
    #[tokio::test]
    async fn a_restart_waits_for_the_round_under_way_and_keeps_queued_writes() {
        let dir = tempfile::tempdir().unwrap();
        let core = Console::open(ConsoleOptions::new(dir.path(), "test"))
            .await
            .unwrap();
        core.add_profile(NewProfile {
            name: "prod".into(),
            url: "http://127.0.0.1:9".into(),
            token: "t".into(),
        })
        .await
        .unwrap();
        let write = |name: &str| Write::Create {
            kind: ResourceKind::Endpoint,
            name: name.into(),
            spec: json!({"description": "queued before the update"}),
        };
        core.enqueue("prod", write("orders")).await.unwrap();
        core.enqueue("prod", write("payments")).await.unwrap();
        let state = std::sync::Arc::new(AppState::new(core, "prod".into()));

        // A round under way for 300 ms.
        let round_state = state.clone();
        let (started_tx, started_rx) = tokio::sync::oneshot::channel();
        let round = tokio::spawn(async move {
            let _round = round_state.sync_round.lock().await;
            started_tx.send(()).unwrap();
            tokio::time::sleep(Duration::from_millis(300)).await;
        });
        started_rx.await.unwrap();
        let asked = Instant::now();
        let (guard, totals) = quiesce_sync(&state, Duration::from_secs(5)).await.unwrap();
        assert!(
            asked.elapsed() >= Duration::from_millis(250),
            "it waited for the round"
        );
        assert_eq!(totals.pending, 2, "queued writes stay queued: {totals:?}");
        round.await.unwrap();
        // No new round can start while the restart holds the guard.
        assert!(state.sync_round.try_lock().is_err());
        drop(guard);

        // A round that does not finish in time: nothing is installed, nothing is lost.
        let held = state.sync_round.lock().await;
        let err = quiesce_sync(&state, Duration::from_millis(100))
            .await
            .unwrap_err();
        assert_eq!(err.code, IpcErrorCode::Conflict);
        assert!(
            err.message.contains("Nothing was installed"),
            "{}",
            err.message
        );
        drop(held);
        let counts = state.core.pending_counts("prod").await.unwrap();
        assert_eq!(counts.pending, 2);
    }
}
