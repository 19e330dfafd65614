//! What the commands share: the core console, the active profile, the sync status the UI shows
//! and the embedded sandbox.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use switchyard_core::{Console, SANDBOX_PROFILE};
use tokio::sync::{Notify, RwLock, watch};

use crate::ipc::{IpcError, SyncStatus};

pub struct AppState {
    pub core: Console,
    active: RwLock<String>,
    /// Kept current from the core's events (`events.rs`); `sync_status` answers from it.
    pub status: Mutex<SyncStatus>,
    /// Wakes the sync driver: something was queued, or a person asked to sync now.
    pub kick: Arc<Notify>,
    /// Set when the local copy must be refreshed at the next round even if it is fresh (the
    /// sandbox finished seeding its demo data after the first refresh was answered).
    pub refresh_due: Arc<AtomicBool>,
    /// Tells a probe under way that the profile it probes was edited or left: its answer
    /// (or its time-out, against a URL that no longer applies) is no longer wanted.
    pub reconfigured: Notify,
    /// Set once the UI shows its first screen: the sync driver's first round and the sandbox
    /// control plane's start wait for it ([`AppState::first_screen_shown`]).
    ui_ready: watch::Sender<bool>,
    /// Held by the sync driver for each round; an update's restart takes it and keeps it, so
    /// it waits for the round under way and no new one starts.
    pub sync_round: tokio::sync::Mutex<()>,
    /// The embedded control plane, once started. Its lock is held while it starts, so a
    /// second `ensure_sandbox` waits for the first.
    pub sandbox: crate::sandbox::Slot,
    /// Where the active profile is remembered between launches.
    settings: PathBuf,
}

impl AppState {
    pub fn new(core: Console, active: String) -> Self {
        let settings = core.data_dir().join("desktop-active-profile");
        Self {
            status: Mutex::new(SyncStatus {
                profile: active.clone(),
                ..SyncStatus::default()
            }),
            core,
            active: RwLock::new(active),
            kick: Arc::new(Notify::new()),
            reconfigured: Notify::new(),
            refresh_due: Arc::new(AtomicBool::new(false)),
            ui_ready: watch::Sender::new(false),
            sync_round: tokio::sync::Mutex::new(()),
            sandbox: crate::sandbox::Slot::empty(),
            settings,
        }
    }

    /// The UI shows its first screen: what waited for it goes now.
    pub fn report_first_screen(&self) {
        self.ui_ready.send_replace(true);
    }

    /// Resolves once the UI showed its first screen (at once after that), or after `at_most`,
    /// whichever comes first: launch work that the first screen does not need waits here so
    /// it does not compete with it for the CPU.
    pub fn first_screen_shown(
        &self,
        at_most: Duration,
    ) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut shown = self.ui_ready.subscribe();
        async move {
            let _ = tokio::time::timeout(at_most, shown.wait_for(|shown| *shown)).await;
        }
    }

    /// The profile every resource command works on.
    pub async fn active(&self) -> String {
        self.active.read().await.clone()
    }

    pub async fn set_active(&self, name: &str) {
        *self.active.write().await = name.to_owned();
        if let Err(e) = std::fs::write(&self.settings, name) {
            tracing::warn!("cannot remember the active profile: {e}");
        }
        *self.status.lock().expect("status lock") = SyncStatus {
            profile: name.to_owned(),
            ..SyncStatus::default()
        };
        self.load_status(name).await;
        self.reconfigured.notify_waiters();
        self.kick.notify_one();
    }

    /// `name`'s URL or token changed: if it is the one shown, what was known of its
    /// reachability no longer holds (checking again), a probe of the old URL under way is
    /// dropped, and the sync driver tries the new one now.
    pub async fn profile_edited(&self, name: &str) {
        if self.active().await != name {
            return;
        }
        self.update_status(|s| {
            if s.profile == name {
                s.online = None;
                s.offline_reason = None;
            }
        });
        self.reconfigured.notify_waiters();
        self.kick.notify_one();
    }

    /// The status bar's first figures for `profile`, from the local data: its last refresh and
    /// what its outbox holds (the events that keep them current only say what changes).
    pub async fn load_status(&self, profile: &str) {
        self.load_last_sync(profile).await;
        self.load_counts(profile).await;
    }

    /// The status's pending and needs-attention counts, read from the outbox.
    pub async fn load_counts(&self, profile: &str) {
        match self.core.pending_counts(profile).await {
            Ok(counts) => {
                self.update_status(|s| {
                    if s.profile == profile {
                        s.pending = (counts.pending + counts.sending) as u32;
                        s.needs_attention = counts.needs_attention as u32;
                    }
                });
            }
            Err(e) => tracing::warn!("cannot count the queued writes of {profile:?}: {e}"),
        }
    }

    /// The status starts with the profile's last successful refresh (from the local audit
    /// log), so "Last sync" is right from the first screen instead of "never" until the first
    /// sync event of this session arrives.
    async fn load_last_sync(&self, profile: &str) {
        let last = self.last_refresh(profile).await;
        self.update_status(|s| {
            if s.profile == profile && s.last_sync_at.is_none() {
                s.last_sync_at = last;
            }
        });
    }

    /// When `profile`'s cache was last filled from its control plane (the local audit log's
    /// newest `cache.refresh`), or `None` if it never was: until then the cache's counts are
    /// not the control plane's.
    pub async fn last_refresh(&self, profile: &str) -> Option<i64> {
        let query = switchyard_core::AuditQuery {
            profile: Some(profile.to_owned()),
            action_prefix: Some("cache.refresh".into()),
            limit: Some(1),
            ..Default::default()
        };
        match self.core.audit(query).await {
            Ok(entries) => entries.first().map(|e| e.at),
            Err(e) => {
                tracing::warn!("cannot read the last refresh of {profile:?}: {e}");
                None
            }
        }
    }

    pub fn remembered_active(core: &Console) -> Option<String> {
        std::fs::read_to_string(core.data_dir().join("desktop-active-profile"))
            .ok()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
    }

    pub fn status(&self) -> SyncStatus {
        self.status.lock().expect("status lock").clone()
    }

    pub fn update_status(&self, f: impl FnOnce(&mut SyncStatus)) -> SyncStatus {
        let mut status = self.status.lock().expect("status lock");
        f(&mut status);
        status.clone()
    }

    /// Starts the embedded sandbox (once) and registers it as the `sandbox` profile
    /// (`sandbox.rs`); a build without the `sandbox` feature answers with an error saying so.
    pub async fn ensure_sandbox(&self) -> Result<(), IpcError> {
        let after = self.first_screen_shown(crate::sandbox::START_WAITS_AT_MOST);
        // It answers while it seeds its demo data (the seeding goes through its own API), so a
        // refresh made meanwhile saw part of it: once it is up, the sync driver refreshes
        // again at once instead of at its next round.
        let (kick, due) = (self.kick.clone(), self.refresh_due.clone());
        let started = move || {
            due.store(true, std::sync::atomic::Ordering::SeqCst);
            kick.notify_one();
        };
        crate::sandbox::ensure(&self.core, &self.sandbox, after, started).await
    }

    pub fn is_sandbox(name: &str) -> bool {
        name == SANDBOX_PROFILE
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use switchyard_core::{ConsoleOptions, NewProfile, ResourceKind, Write};

    use super::*;

    async fn console_with(dir: &std::path::Path, queued: &[(&str, &str)]) -> Console {
        let core = Console::open(ConsoleOptions::new(dir, "test"))
            .await
            .unwrap();
        for profile in ["offline-cp", "other"] {
            core.add_profile(NewProfile {
                name: profile.into(),
                url: "http://127.0.0.1:9".into(),
                token: "t".into(),
            })
            .await
            .unwrap();
        }
        for (profile, name) in queued {
            let write = Write::Create {
                kind: ResourceKind::Endpoint,
                name: (*name).into(),
                spec: json!({}),
            };
            core.enqueue(profile, write).await.unwrap();
        }
        core
    }

    /// After a restart (and on a switch) the status bar shows what the outbox holds before any
    /// sync event of this session: offline, no event ever says it.
    #[tokio::test]
    async fn the_status_counts_what_the_outbox_holds_from_the_start_and_on_a_switch() {
        let dir = tempfile::tempdir().unwrap();
        let queued = [
            ("offline-cp", "a"),
            ("offline-cp", "b"),
            ("offline-cp", "c"),
            ("offline-cp", "d"),
            ("other", "e"),
        ];
        let core = console_with(dir.path(), &queued).await;
        let state = AppState::new(core, "offline-cp".into());
        assert_eq!(state.status().pending, 0, "nothing read yet");
        state.load_status("offline-cp").await;
        assert_eq!(state.status().pending, 4);
        state.set_active("other").await;
        let status = state.status();
        assert_eq!((status.profile.as_str(), status.pending), ("other", 1));
    }

    /// Editing the shown profile forgets what was known of the old URL's reachability and
    /// wakes a probe under way; editing another leaves the status alone.
    #[tokio::test]
    async fn an_edit_of_the_shown_profile_checks_again_and_drops_the_probe_under_way() {
        let dir = tempfile::tempdir().unwrap();
        let core = console_with(dir.path(), &[]).await;
        let state = Arc::new(AppState::new(core, "offline-cp".into()));
        let offline = |s: &mut SyncStatus| {
            s.online = Some(false);
            s.offline_reason = Some("timed out".into());
        };
        state.update_status(offline);
        state.profile_edited("other").await;
        assert_eq!(state.status().online, Some(false));

        let waiting = state.clone();
        let probe = tokio::spawn(async move { waiting.reconfigured.notified().await });
        tokio::task::yield_now().await;
        state.profile_edited("offline-cp").await;
        tokio::time::timeout(Duration::from_secs(5), probe)
            .await
            .expect("the probe under way is told")
            .unwrap();
        let status = state.status();
        assert_eq!((status.online, status.offline_reason), (None, None));
    }
}
