//! Sends the profile's queued writes while the server runs, so a write that answered
//! `pending` (a call with `wait_seconds: 0`, an offline spell, a slow control plane) still
//! goes out while the agent only polls `outbox_status`. The core's retry policy sets the
//! pace (each op's backoff, the same as the desktop's sync); this loop only looks when
//! something is due, and takes the server's one sync pass at a time.

use std::sync::Weak;
use std::time::Duration;

use switchyard_core::{OpState, OutboxFilter, ReplayOpState, SyncOptions};

use crate::server::Inner;

/// The longest the loop sleeps while writes are queued (and between looks when none are).
const LOOK_EVERY: Duration = Duration::from_secs(2);
/// The shortest sleep between two passes.
const AT_LEAST: Duration = Duration::from_millis(100);
/// A pass that sent nothing (what is left waits on writes that need a person) doubles the
/// wait before the next, up to this; a new write (a kick) ends the wait.
const IDLE_AT_MOST: Duration = Duration::from_secs(30);
/// One pass's time limit: it sends what is due and returns.
const PASS_MS: u64 = 10_000;
/// An op another process has been sending for this long may be left over by one that died.
const STALE_SENDING_MS: i64 = 60_000;

/// What the loop found queued.
struct Due {
    /// Something may be sent now.
    now: bool,
    /// When the earliest op not due yet is due (Unix ms).
    next: Option<i64>,
}

/// Runs until the server (every clone of it) is gone.
pub(crate) async fn run(inner: Weak<Inner>) {
    let mut idle = Duration::ZERO;
    loop {
        let Some(srv) = inner.upgrade() else { return };
        let kick = srv.kick.clone();
        let wait = match look(&srv).await {
            Some(due) if due.now => {
                let sent = pass(&srv).await;
                idle = if sent {
                    Duration::ZERO
                } else {
                    (idle * 2).clamp(LOOK_EVERY, IDLE_AT_MOST)
                };
                idle.max(AT_LEAST)
            }
            Some(due) => until(due.next),
            None => LOOK_EVERY,
        };
        drop(srv);
        tokio::select! {
            () = kick.notified() => idle = Duration::ZERO,
            () = tokio::time::sleep(wait) => {}
        }
    }
}

fn until(next: Option<i64>) -> Duration {
    let now = chrono::Utc::now().timestamp_millis();
    next.map_or(LOOK_EVERY, |t| {
        Duration::from_millis((t - now).max(0) as u64).clamp(AT_LEAST, LOOK_EVERY)
    })
}

/// Reads what is queued (two indexed queries); `None` when the outbox cannot be read.
async fn look(srv: &Inner) -> Option<Due> {
    let (console, profile) = (&srv.console, &srv.config.profile);
    let now = chrono::Utc::now().timestamp_millis();
    let ops = console
        .list_outbox(OutboxFilter {
            profile: Some(profile.clone()),
            states: vec![OpState::Pending, OpState::Sending],
            limit: Some(200),
            ..Default::default()
        })
        .await
        .ok()?;
    let replays = console.replay_ops(profile).await.ok()?;
    let pending_at = ops
        .iter()
        .filter(|o| o.state == OpState::Pending)
        .map(|o| o.next_attempt_at.unwrap_or(now))
        .chain(
            replays
                .iter()
                .filter(|r| r.state == ReplayOpState::Pending)
                .map(|r| r.next_attempt_at.unwrap_or(now)),
        );
    let next = pending_at.min();
    let stale = ops
        .iter()
        .any(|o| o.state == OpState::Sending && now - o.updated_at > STALE_SENDING_MS);
    Some(Due {
        now: stale || next.is_some_and(|t| t <= now),
        next,
    })
}

/// One pass over the resource writes and the replay writes. Returns whether it sent anything.
async fn pass(srv: &Inner) -> bool {
    let _one_at_a_time = srv.sync_lock.lock().await;
    let (console, profile) = (srv.console.clone(), srv.config.profile.clone());
    // In its own task, like the calls' passes: nothing is left mid-send if this one ends.
    let task = tokio::spawn(async move {
        let report = console
            .sync(
                &profile,
                SyncOptions {
                    until_drained: false,
                    timeout_ms: Some(PASS_MS),
                    refresh_after: false,
                },
            )
            .await;
        let replays = console
            .sync_replays(&profile, Duration::from_millis(PASS_MS))
            .await;
        // A created target's first signing secret is never an agent's (see writes.rs).
        drop(console.take_shown_secrets(&profile));
        (report, replays)
    });
    match task.await {
        Ok((report, replays)) => {
            if let Err(e) = &replays {
                tracing::debug!("sending queued replay writes: {e}");
            }
            match report {
                Ok(r) => r.attempts > 0 || replays.is_ok_and(|sent| !sent.is_empty()),
                Err(e) => {
                    tracing::debug!("sending queued writes: {e}");
                    false
                }
            }
        }
        Err(e) => {
            tracing::warn!("the background sync task failed: {e}");
            false
        }
    }
}
