//! `switchyard replay …`: starting, following, cancelling and listing replay sessions.
//! Starting and cancelling are writes, saved in the local outbox first (the session id is
//! minted once there), then sent at once; the rest are reads.

use std::io::IsTerminal;
use std::time::Duration;

use anyhow::bail;
use clap::Subcommand;
use switchyard_core::protocol_dlq::DlqFilter;
use switchyard_core::protocol_replay::{
    ReplayItemStatus, ReplaySelection, ReplaySession, ReplayStatus,
};
use switchyard_core::{Console, ReplayOp, ReplayOpState, ReplayStart};

use super::{FilterArgs, time};
use crate::{Exit, emit, table};

#[derive(Subcommand)]
pub enum ReplayCmd {
    /// Replay dead deliveries: by --ids, or everything matching the filter flags.
    Start {
        /// Delivery ids, comma-separated (up to 1000).
        #[arg(long, value_delimiter = ',')]
        ids: Vec<String>,
        #[command(flatten)]
        filter: FilterArgs,
        /// Replay the whole DLQ (required when neither --ids nor a filter is given).
        #[arg(long)]
        all: bool,
        /// Only count what would be replayed.
        #[arg(long)]
        dry_run: bool,
        /// Re-deliveries started per second.
        #[arg(long, value_name = "N")]
        rate: Option<f64>,
        /// Use this session id (a script that may run twice passes the same one).
        #[arg(long)]
        session_id: Option<String>,
        /// Follow the session's progress until it completes.
        #[arg(long)]
        wait: bool,
    },
    /// A session's progress (a live bar until it is done; once with --json).
    Status { session_id: String },
    /// Cancel a session: re-deliveries not yet sent go back to the DLQ.
    Cancel { session_id: String },
    /// Sessions on the server and replay writes still queued locally.
    List,
    /// Send queued replay writes (after working offline).
    Sync,
}

fn describe_op(op: &ReplayOp) -> String {
    match op.state {
        ReplayOpState::Done => "confirmed by the server".into(),
        ReplayOpState::Pending if op.attempts == 0 => "saved locally".into(),
        ReplayOpState::Pending => format!(
            "saved locally, sent {} time(s), will retry: {}",
            op.attempts,
            op.last_error
                .as_ref()
                .map(|e| e.message.as_str())
                .unwrap_or("-")
        ),
        ReplayOpState::NeedsAttention => format!(
            "needs attention: {}",
            op.last_error
                .as_ref()
                .map(|e| e.message.as_str())
                .unwrap_or("refused")
        ),
    }
}

fn progress_line(s: &ReplaySession, rate: Option<f64>) -> String {
    let c = &s.counts;
    let finished = c.succeeded + c.failed + c.cancelled;
    let width = 30usize;
    let filled = if c.total == 0 {
        width
    } else {
        (finished as usize * width) / c.total as usize
    };
    let eta = match rate {
        Some(r) if r > 0.0 && c.pending > 0 => format!(", ~{:.0}s left", c.pending as f64 / r),
        _ => String::new(),
    };
    format!(
        "[{}{}] {}/{}  ok {}  failed {}  pending {}  skipped {}  {:?}{eta}",
        "#".repeat(filled),
        "-".repeat(width - filled),
        finished,
        c.total,
        c.succeeded,
        c.failed,
        c.pending,
        c.skipped,
        s.status
    )
    .to_lowercase()
}

async fn follow(
    console: &Console,
    profile: &str,
    session_id: &str,
) -> anyhow::Result<ReplaySession> {
    let tty = std::io::stderr().is_terminal();
    let started = std::time::Instant::now();
    let mut first_finished: Option<u64> = None;
    loop {
        let s = console.replay_session(profile, session_id).await?;
        let c = &s.counts;
        let finished = c.succeeded + c.failed + c.cancelled;
        let base = *first_finished.get_or_insert(finished);
        let elapsed = started.elapsed().as_secs_f64();
        let rate = (elapsed > 1.0).then(|| (finished - base) as f64 / elapsed);
        let line = progress_line(&s, rate);
        if tty {
            crate::output::progress(&line);
        } else {
            errln!("{line}");
        }
        if s.status != ReplayStatus::Running {
            if tty {
                errln!();
            }
            return Ok(s);
        }
        tokio::time::sleep(Duration::from_millis(if tty { 500 } else { 2000 })).await;
    }
}

pub async fn replay_cmd(
    console: &Console,
    profile: &str,
    json: bool,
    cmd: ReplayCmd,
) -> anyhow::Result<Exit> {
    match cmd {
        ReplayCmd::Start {
            ids,
            filter,
            all,
            dry_run,
            rate,
            session_id,
            wait,
        } => {
            let selection = selection(ids, &filter, all)?;
            if dry_run {
                return count_only(console, profile, json, selection).await;
            }
            let start = ReplayStart {
                session_id,
                selection,
                rate_per_s: rate,
            };
            start_session(console, profile, json, start, wait).await
        }
        ReplayCmd::Status { session_id } => status(console, profile, json, &session_id).await,
        ReplayCmd::Cancel { session_id } => cancel(console, profile, json, &session_id).await,
        ReplayCmd::List => list(console, profile, json).await,
        ReplayCmd::Sync => sync(console, profile, json).await,
    }
}

/// What `replay start` replays: the `--ids`, or the filter (`--all` for an empty one).
fn selection(ids: Vec<String>, filter: &FilterArgs, all: bool) -> anyhow::Result<ReplaySelection> {
    let filter = filter.to_filter()?;
    Ok(if !ids.is_empty() {
        if filter != DlqFilter::default() || all {
            bail!("give either --ids or filter flags/--all, not both");
        }
        ReplaySelection::DeliveryIds(ids)
    } else if filter == DlqFilter::default() && !all {
        bail!(
            "nothing selected: give --ids, filter flags (--target, --error-class, …), or --all for the whole DLQ"
        );
    } else {
        ReplaySelection::Filter(filter)
    })
}

/// `replay start --dry-run`: the server counts the selection; nothing is queued.
async fn count_only(
    console: &Console,
    profile: &str,
    json: bool,
    selection: ReplaySelection,
) -> anyhow::Result<Exit> {
    let count = console.replay_dry_run(profile, selection).await?;
    emit(
        json,
        &serde_json::json!({"dry_run": true, "count": count}),
        |_| outln!("{count} dead deliveries would be replayed (nothing was started)"),
    );
    Ok(Exit::Ok)
}

async fn start_session(
    console: &Console,
    profile: &str,
    json: bool,
    start: ReplayStart,
    wait: bool,
) -> anyhow::Result<Exit> {
    let op = console.enqueue_replay_start(profile, start).await?;
    if !json {
        errln!("replay {}: saved locally", op.session_id);
    }
    let op = send_now(console, profile, &op).await?;
    if op.state != ReplayOpState::Done {
        emit(json, &op, |op| {
            outln!("replay {}: {}", op.session_id, describe_op(op))
        });
        return Ok(exit_of(op.state));
    }
    if wait {
        let s = follow(console, profile, &op.session_id).await?;
        emit(json, &s, |s| {
            outln!("replay {}: {}", s.id, progress_line(s, None))
        });
    } else {
        emit(json, &op, |op| {
            let total = op
                .result
                .as_ref()
                .and_then(|r| r["counts"]["total"].as_u64())
                .unwrap_or(0);
            outln!(
                "replay {}: confirmed, {total} re-deliveries; follow with `switchyard replay status {}`",
                op.session_id,
                op.session_id
            )
        });
    }
    Ok(Exit::Ok)
}

/// Sends the profile's queued replay writes (a failure leaves them queued, which the op's
/// state then says) and reads back where `op` stands.
async fn send_now(console: &Console, profile: &str, op: &ReplayOp) -> anyhow::Result<ReplayOp> {
    console
        .sync_replays(profile, Duration::from_secs(30))
        .await
        .ok();
    Ok(console.replay_op(op.id).await?)
}

/// How a replay write ends: confirmed 0, refused 3, still queued 4.
fn exit_of(state: ReplayOpState) -> Exit {
    match state {
        ReplayOpState::Done => Exit::Ok,
        ReplayOpState::NeedsAttention => Exit::NeedsAttention,
        ReplayOpState::Pending => Exit::Incomplete,
    }
}

async fn status(
    console: &Console,
    profile: &str,
    json: bool,
    session_id: &str,
) -> anyhow::Result<Exit> {
    let s = if json {
        console.replay_session(profile, session_id).await?
    } else {
        follow(console, profile, session_id).await?
    };
    emit(json, &s, |s| {
        let failed: Vec<&str> = s
            .items
            .iter()
            .flatten()
            .filter(|i| i.status == ReplayItemStatus::Failed)
            .map(|i| i.original_delivery_id.as_str())
            .collect();
        outln!("replay {}: {:?}", s.id, s.status);
        if !failed.is_empty() {
            outln!("failed again (back in the DLQ): {}", failed.join(", "));
        }
    });
    Ok(Exit::Ok)
}

async fn cancel(
    console: &Console,
    profile: &str,
    json: bool,
    session_id: &str,
) -> anyhow::Result<Exit> {
    let op = console.enqueue_replay_cancel(profile, session_id).await?;
    let op = send_now(console, profile, &op).await?;
    emit(json, &op, |op| {
        outln!("cancel {}: {}", op.session_id, describe_op(op))
    });
    Ok(exit_of(op.state))
}

/// The server's sessions (when it answers) and the replay writes not yet confirmed.
async fn list(console: &Console, profile: &str, json: bool) -> anyhow::Result<Exit> {
    let local = console.replay_ops(profile).await?;
    let sessions = console.replay_sessions(profile).await;
    let queued: Vec<&ReplayOp> = local
        .iter()
        .filter(|o| o.state != ReplayOpState::Done)
        .collect();
    let value = serde_json::json!({
        "sessions": sessions.as_ref().ok(),
        "queued": queued,
    });
    emit(json, &value, |_| {
        match &sessions {
            Ok(sessions) => {
                let rows: Vec<Vec<String>> = sessions
                    .iter()
                    .map(|s| vec![s.id.clone(), time(&s.created_at), progress_line(s, None)])
                    .collect();
                table::print(&["SESSION", "CREATED (UTC)", "PROGRESS"], &rows);
            }
            Err(e) => outln!("sessions: server unreachable ({e})"),
        }
        for op in &queued {
            outln!(
                "queued {:?} {}: {}",
                op.action,
                op.session_id,
                describe_op(op)
            );
        }
    });
    Ok(Exit::Ok)
}

async fn sync(console: &Console, profile: &str, json: bool) -> anyhow::Result<Exit> {
    let ops = console
        .sync_replays(profile, Duration::from_secs(60))
        .await?;
    emit(json, &ops, |ops| {
        for op in ops {
            outln!("{:?} {}: {}", op.action, op.session_id, describe_op(op));
        }
        if ops.is_empty() {
            outln!("nothing queued");
        }
    });
    Ok(Exit::Ok)
}
