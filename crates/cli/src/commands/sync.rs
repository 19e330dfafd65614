//! `switchyard sync`: send the queued writes, with progress on stderr.

use std::io::IsTerminal;

use switchyard_core::*;

use crate::{Exit, emit};

pub async fn run_sync(
    console: &Console,
    profile: &str,
    until_drained: bool,
    timeout: Option<std::time::Duration>,
    show_progress: bool,
) -> Result<SyncReport, CoreError> {
    let mut events = console.subscribe();
    let tty = std::io::stderr().is_terminal();
    let progress = tokio::spawn(async move {
        let mut last_line = std::time::Instant::now();
        while let Ok(event) = events.recv().await {
            match event {
                Event::SyncProgress(p) if show_progress => {
                    let line = format!(
                        "sync: {}/{} confirmed, {} need attention, {} pending, {} attempts",
                        p.done, p.total, p.counts.needs_attention, p.counts.pending, p.attempts
                    );
                    if tty {
                        crate::output::progress(&line);
                    } else if last_line.elapsed().as_secs() >= 2 {
                        errln!("{line}");
                        last_line = std::time::Instant::now();
                    }
                }
                Event::Connectivity {
                    online: false,
                    detail,
                    ..
                } if show_progress => {
                    if tty {
                        crate::output::line_start();
                    }
                    errln!(
                        "sync: server unreachable, retrying with backoff ({})",
                        crate::table::clean(&detail.unwrap_or_default())
                    );
                }
                Event::SyncFinished(_) => break,
                _ => {}
            }
        }
        if tty && show_progress {
            errln!();
        }
    });
    let stopper = tokio::spawn(stop_on_signal(console.clone()));
    let result = console
        .sync(
            profile,
            SyncOptions {
                until_drained,
                timeout_ms: timeout.map(|t| t.as_millis() as u64),
                refresh_after: true,
            },
        )
        .await;
    stopper.abort();
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), progress).await;
    crate::commands::first_secrets::show_after_sync(console, profile).await;
    result
}

/// SIGINT or SIGTERM: the run picks no new operation, waits for those already sent and
/// records them, and hands the rest back to the outbox (nothing is sent twice; the next sync
/// sends what is left). A second signal exits at once (what was in flight is sent again
/// with the same key by the next sync, and the server replays it).
async fn stop_on_signal(console: Console) {
    crate::signals::stop_signal().await;
    errln!("\nsync: stopping: finishing the writes already sent (a second signal quits now)");
    console.stop_syncs();
    crate::signals::stop_signal().await;
    errln!("sync: quitting now; unfinished writes are sent again, same key, by the next sync");
    std::process::exit(130);
}

pub async fn sync(
    console: &Console,
    profile: &str,
    json: bool,
    until_drained: bool,
    timeout: Option<std::time::Duration>,
) -> anyhow::Result<Exit> {
    let report = run_sync(console, profile, until_drained, timeout, !json).await?;
    // Fixes and retirements queued while the control plane was away leave with the same
    // keys (they depend on no resource write). Unreachable, they stay queued.
    let recovery = console
        .sync_recovery(
            profile,
            timeout.unwrap_or(std::time::Duration::from_secs(30)),
        )
        .await?;
    if !json {
        for op in recovery.iter().filter(|o| o.state != ActionState::Pending) {
            errln!(
                "sync: {} ({} {}): {}",
                op.label,
                op.method,
                op.path,
                op.state.as_str()
            );
        }
    }
    emit(json, &report, |r| {
        outln!(
            "{}: {} confirmed, {} need attention, {} still pending ({} attempts, {} ms)",
            r.profile,
            r.done,
            r.counts.needs_attention,
            r.counts.pending + r.counts.sending,
            r.attempts,
            r.elapsed_ms
        );
        if r.counts.needs_attention > 0 {
            outln!("see `switchyard outbox list` and `switchyard outbox show ID`");
        }
    });
    Ok(match report.outcome {
        SyncOutcome::Drained => Exit::Ok,
        SyncOutcome::NeedsAttention => Exit::NeedsAttention,
        SyncOutcome::Incomplete if report.counts.needs_attention > 0 => Exit::NeedsAttention,
        SyncOutcome::Incomplete => Exit::Incomplete,
    })
}
