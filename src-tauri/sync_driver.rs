//! Drives the core's sync engine for the active profile: sends queued writes as soon as they
//! are made, keeps the cache fresh, and — when the control plane is unreachable — probes it
//! until it answers, then sends what waited. The retry policy itself lives in the core.

use std::time::{Duration, Instant};

use switchyard_core::{CoreError, ReplayOpState, SyncOptions, SyncOutcome};
use tauri::{AppHandle, Manager};

use crate::state::AppState;

/// How often the cache is refreshed from a reachable control plane.
const REFRESH_EVERY: Duration = Duration::from_secs(20);
/// How often an unreachable control plane is probed.
const PROBE_EVERY: Duration = Duration::from_secs(2);
/// The longest the first round waits for the UI's first screen.
const FIRST_ROUND_WAITS_AT_MOST: Duration = Duration::from_secs(2);

pub async fn run(app: AppHandle) {
    let state = app.state::<AppState>();
    // Launch first: the first round (a full cache refresh, or sending what was queued) starts
    // once the first screen shows from the cache, so it does not compete with it for the CPU.
    state.first_screen_shown(FIRST_ROUND_WAITS_AT_MOST).await;
    let mut last_refresh: Option<(String, Instant)> = None;
    loop {
        let profile = state.active().await;
        let round = state.sync_round.lock().await;
        if state.core.syncs_stopped() {
            // Quitting: the round that was under way has finished; start no other.
            return;
        }
        let wait = step(&state, &profile, &mut last_refresh).await;
        drop(round);
        tokio::select! {
            _ = state.kick.notified() => {}
            _ = tokio::time::sleep(wait) => {}
        }
    }
}

/// One round; returns how long to wait before the next unless kicked.
async fn step(
    state: &AppState,
    profile: &str,
    last_refresh: &mut Option<(String, Instant)>,
) -> Duration {
    let core = &state.core;
    if state.status().online == Some(false) {
        // Offline: a cheap probe; when it answers, everything waiting becomes due now. What
        // was queued meanwhile is counted from the outbox (no sync event says it).
        state.load_counts(profile).await;
        // Edited or left meanwhile: the probe's URL no longer applies, so its time-out is
        // not waited for (the next round probes the new one at once).
        let reconfigured = state.reconfigured.notified();
        let probe = tokio::select! {
            probe = core.test_connection(profile) => probe,
            _ = reconfigured => return Duration::ZERO,
        };
        match probe {
            Ok(report) if report.healthy => {
                if let Err(e) = core.make_all_due(profile).await {
                    tracing::warn!("cannot reschedule queued writes: {e}");
                }
                tracing::info!("{profile} answers again; sending what waited");
            }
            Ok(_) | Err(_) => return PROBE_EVERY,
        }
    }
    send_replay_writes(state, profile).await;
    send_target_tests(state, profile).await;
    send_recovery_writes(state, profile).await;
    let counts = match core.pending_counts(profile).await {
        Ok(counts) => counts,
        Err(e) => {
            tracing::warn!("cannot read the outbox: {e}");
            return PROBE_EVERY;
        }
    };
    if counts.pending + counts.sending > 0 {
        let opts = SyncOptions {
            until_drained: true,
            timeout_ms: Some(15_000),
            refresh_after: true,
        };
        return match core.sync(profile, opts).await {
            Ok(report) => {
                // Tests waiting behind the writes just sent go now, not a round later.
                send_target_tests(state, profile).await;
                *last_refresh = Some((profile.to_owned(), Instant::now()));
                if report.outcome == SyncOutcome::Incomplete {
                    PROBE_EVERY
                } else {
                    REFRESH_EVERY
                }
            }
            Err(e) => failed(state, profile, e),
        };
    }
    let fresh = last_refresh
        .as_ref()
        .is_some_and(|(p, at)| p == profile && at.elapsed() < REFRESH_EVERY);
    let due = state
        .refresh_due
        .swap(false, std::sync::atomic::Ordering::SeqCst);
    if !fresh || due {
        match core.refresh(profile).await {
            Ok(_) => *last_refresh = Some((profile.to_owned(), Instant::now())),
            Err(e) => return failed(state, profile, e),
        }
    }
    REFRESH_EVERY
}

/// Replay writes still queued (made offline, or whose background send gave up) go out once the
/// control plane answers; due ones only, with a short deadline so the loop keeps moving.
async fn send_replay_writes(state: &AppState, profile: &str) {
    let queued = state
        .core
        .replay_ops(profile)
        .await
        .map(|ops| ops.iter().any(|o| o.state == ReplayOpState::Pending))
        .unwrap_or(false);
    if queued
        && let Err(e) = state
            .core
            .sync_replays(profile, Duration::from_secs(5))
            .await
    {
        tracing::warn!("sending queued replay writes: {e}");
    }
}

/// Fixes and retirement starts or cancels still queued (made offline, or whose send gave up)
/// go out the same way; due ones only, with a short deadline. Reading none is one query.
async fn send_recovery_writes(state: &AppState, profile: &str) {
    let queued = state
        .core
        .recovery_ops(profile, 200)
        .await
        .map(|ops| ops.iter().any(|o| o.state == ReplayOpState::Pending))
        .unwrap_or(false);
    if queued
        && let Err(e) = state
            .core
            .sync_recovery(profile, Duration::from_secs(5))
            .await
    {
        tracing::warn!("sending queued recovery writes: {e}");
    }
}

/// Test webhooks still queued (made offline, behind the target's own writes, or whose
/// background send gave up) go out the same way. Reading none is one indexed query.
async fn send_target_tests(state: &AppState, profile: &str) {
    if let Err(e) = state
        .core
        .sync_target_tests(profile, Duration::from_secs(5))
        .await
    {
        tracing::warn!("sending queued test webhooks: {e}");
    }
}

fn failed(state: &AppState, profile: &str, e: CoreError) -> Duration {
    match &e {
        CoreError::Offline { .. } => {
            state.update_status(|s| {
                if s.profile == profile {
                    s.online = Some(false);
                    s.offline_reason = Some(e.to_string());
                }
            });
        }
        _ => tracing::warn!("sync of {profile:?} failed: {e}"),
    }
    PROBE_EVERY
}
