//! `switchyard dlq …` and `switchyard replay …`: the dead-letter queue and replay sessions.
//! Reads go straight to the server; starting and cancelling a replay are writes, saved in
//! the local outbox first (the session id is minted once there), then sent.

use std::io::{IsTerminal, Write as _};
use std::time::Duration;

use anyhow::{Context, bail};
use chrono::{DateTime, Utc};
use clap::{Args, Subcommand};
use switchyard_core::protocol_dlq::{DlqFilter, DlqGroupBy};
use switchyard_core::protocol_events::ErrorClass;
use switchyard_core::protocol_replay::{ReplaySelection, ReplaySession, ReplayStatus};
use switchyard_core::{Console, DlqQuery, ReplayOp, ReplayOpState, ReplayStart};

use crate::{Exit, emit, table};

#[derive(Subcommand)]
pub enum DlqCmd {
    /// List dead deliveries, newest first.
    List {
        #[command(flatten)]
        filter: FilterArgs,
        /// Entries per page (1-500).
        #[arg(long, default_value_t = 50)]
        limit: u32,
        /// Continue from a previous page's next cursor.
        #[arg(long)]
        cursor: Option<String>,
    },
    /// Counts of dead deliveries matching the filter, grouped.
    Stats {
        /// error_class, target, hour, or error_class,target (the "by cause" matrix).
        #[arg(long, value_enum, default_value = "error_class")]
        group_by: GroupBy,
        #[command(flatten)]
        filter: FilterArgs,
    },
    /// One dead (or any) delivery with its attempts.
    Show { delivery_id: String },
    /// An event and all its deliveries (the same as `events get`).
    Event { event_id: String },
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum GroupBy {
    Target,
    #[value(name = "error_class", alias = "error-class")]
    ErrorClass,
    Hour,
    /// Error class × target.
    #[value(
        name = "error_class,target",
        alias = "target,error_class",
        alias = "cause"
    )]
    Cause,
}

/// The DLQ filter, named like the API's query parameters.
#[derive(Args, Default)]
pub struct FilterArgs {
    #[arg(long)]
    pub endpoint: Option<String>,
    #[arg(long)]
    pub target: Option<String>,
    #[arg(long)]
    pub flow: Option<String>,
    /// http_4xx, http_5xx, timeout, connect, tls or forbidden_address.
    #[arg(long)]
    pub error_class: Option<String>,
    /// Dead at or after: RFC 3339, or an age like 30m, 2h, 1d.
    #[arg(long)]
    pub since: Option<String>,
    /// Dead before: RFC 3339, or an age like 30m, 2h, 1d.
    #[arg(long)]
    pub until: Option<String>,
}

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

fn parse_time(flag: &str, text: &str) -> anyhow::Result<DateTime<Utc>> {
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Ok(t.with_timezone(&Utc));
    }
    let age = match text.strip_suffix('d') {
        Some(days) => days
            .parse::<u64>()
            .ok()
            .map(|d| Duration::from_secs(d * 86_400)),
        None => crate::args::parse_duration(text).ok(),
    };
    match age {
        Some(age) => Ok(Utc::now() - chrono::Duration::from_std(age)?),
        None => bail!("--{flag} {text:?}: give an RFC 3339 time or an age like 30m, 2h, 1d"),
    }
}

impl FilterArgs {
    fn to_filter(&self) -> anyhow::Result<DlqFilter> {
        let error_class = self
            .error_class
            .as_deref()
            .map(|c| {
                ErrorClass::ALL
                    .into_iter()
                    .find(|k| k.as_str() == c)
                    .with_context(|| {
                        format!(
                            "--error-class {c:?}: one of http_4xx, http_5xx, timeout, connect, tls, forbidden_address"
                        )
                    })
            })
            .transpose()?;
        Ok(DlqFilter {
            endpoint: self.endpoint.clone(),
            target: self.target.clone(),
            flow: self.flow.clone(),
            error_class,
            since: self
                .since
                .as_deref()
                .map(|t| parse_time("since", t))
                .transpose()?,
            until: self
                .until
                .as_deref()
                .map(|t| parse_time("until", t))
                .transpose()?,
        })
    }
}

fn time(t: &DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M:%S").to_string()
}

pub async fn dlq_cmd(
    console: &Console,
    profile: &str,
    json: bool,
    cmd: DlqCmd,
) -> anyhow::Result<Exit> {
    match cmd {
        DlqCmd::List {
            filter,
            limit,
            cursor,
        } => {
            let query = DlqQuery {
                filter: filter.to_filter()?,
                limit: Some(limit),
                cursor,
            };
            let page = console.dlq_page(profile, &query).await?;
            emit(json, &page, |page| {
                let rows: Vec<Vec<String>> = page
                    .items
                    .iter()
                    .map(|e| {
                        vec![
                            time(&e.dead_at),
                            e.delivery_id.clone(),
                            e.event_type.clone(),
                            e.endpoint.clone(),
                            e.flow.clone(),
                            e.target.clone(),
                            e.error_class.as_str().to_owned(),
                            e.last_status_code
                                .map(|s| s.to_string())
                                .unwrap_or_else(|| "-".into()),
                        ]
                    })
                    .collect();
                table::print(
                    &[
                        "DEAD AT (UTC)",
                        "DELIVERY",
                        "EVENT TYPE",
                        "ENDPOINT",
                        "FLOW",
                        "TARGET",
                        "ERROR",
                        "STATUS",
                    ],
                    &rows,
                );
                if let Some(c) = &page.next_cursor {
                    println!("more: --cursor {c}");
                }
            });
        }
        DlqCmd::Stats { group_by, filter } => {
            let group_by = match group_by {
                GroupBy::Target => DlqGroupBy::Target,
                GroupBy::ErrorClass => DlqGroupBy::ErrorClass,
                GroupBy::Hour => DlqGroupBy::Hour,
                GroupBy::Cause => DlqGroupBy::ErrorClassTarget,
            };
            let stats = console
                .dlq_stats(profile, group_by, &filter.to_filter()?)
                .await?;
            emit(json, &stats, |s| {
                if group_by == DlqGroupBy::ErrorClassTarget {
                    let rows: Vec<Vec<String>> = s
                        .rows
                        .iter()
                        .map(|r| {
                            vec![
                                r.error_class.as_str().to_owned(),
                                r.target.clone(),
                                r.count.to_string(),
                            ]
                        })
                        .collect();
                    table::print(&["ERROR CLASS", "TARGET", "DEAD"], &rows);
                } else {
                    let rows: Vec<Vec<String>> = s
                        .groups
                        .iter()
                        .map(|g| vec![g.key.clone(), g.count.to_string()])
                        .collect();
                    table::print(&["GROUP", "DEAD"], &rows);
                }
                println!("total: {}", s.total);
            });
        }
        DlqCmd::Show { delivery_id } => {
            let d = console.delivery(profile, &delivery_id).await?;
            emit(json, &d, |d| {
                println!(
                    "{} {:?}  event {} ({})  {} → {} via {}",
                    d.id, d.state, d.event_id, d.event_type, d.endpoint, d.target, d.flow
                );
                if let Some(next) = d.next_attempt_at {
                    println!("next attempt: {}", time(&next));
                }
                for a in &d.attempts {
                    println!(
                        "  #{} {}  {:>6} ms  {}  {}",
                        a.number,
                        time(&a.started_at),
                        a.duration_ms
                            .map(|m| m.to_string())
                            .unwrap_or_else(|| "-".into()),
                        a.status_code
                            .map(|s| s.to_string())
                            .unwrap_or_else(|| "-".into()),
                        a.error.clone().unwrap_or_default()
                    );
                }
            });
        }
        DlqCmd::Event { event_id } => {
            let e = console.event(profile, event_id.trim()).await?;
            emit(json, &e, crate::events::print_event);
        }
    }
    Ok(Exit::Ok)
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
            eprint!("\r{line}   ");
            let _ = std::io::stderr().flush();
        } else {
            eprintln!("{line}");
        }
        if s.status != ReplayStatus::Running {
            if tty {
                eprintln!();
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
            let filter = filter.to_filter()?;
            let selection = if !ids.is_empty() {
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
            };
            if dry_run {
                let count = console.replay_dry_run(profile, selection).await?;
                emit(
                    json,
                    &serde_json::json!({"dry_run": true, "count": count}),
                    |_| println!("{count} dead deliveries would be replayed (nothing was started)"),
                );
                return Ok(Exit::Ok);
            }
            let op = console
                .enqueue_replay_start(
                    profile,
                    ReplayStart {
                        session_id,
                        selection,
                        rate_per_s: rate,
                    },
                )
                .await?;
            if !json {
                eprintln!("replay {}: saved locally", op.session_id);
            }
            console
                .sync_replays(profile, Duration::from_secs(30))
                .await
                .ok();
            let op = console.replay_op(op.id).await?;
            if op.state != ReplayOpState::Done {
                emit(json, &op, |op| {
                    println!("replay {}: {}", op.session_id, describe_op(op))
                });
                return Ok(if op.state == ReplayOpState::NeedsAttention {
                    Exit::NeedsAttention
                } else {
                    Exit::Incomplete
                });
            }
            if wait {
                let s = follow(console, profile, &op.session_id).await?;
                emit(json, &s, |s| {
                    println!("replay {}: {}", s.id, progress_line(s, None))
                });
            } else {
                emit(json, &op, |op| {
                    let total = op
                        .result
                        .as_ref()
                        .and_then(|r| r["counts"]["total"].as_u64())
                        .unwrap_or(0);
                    println!(
                        "replay {}: confirmed, {total} re-deliveries; follow with `switchyard replay status {}`",
                        op.session_id, op.session_id
                    )
                });
            }
        }
        ReplayCmd::Status { session_id } => {
            let s = if json {
                console.replay_session(profile, &session_id).await?
            } else {
                follow(console, profile, &session_id).await?
            };
            emit(json, &s, |s| {
                let failed: Vec<&str> = s
                    .items
                    .iter()
                    .flatten()
                    .filter(|i| {
                        i.status == switchyard_core::protocol_replay::ReplayItemStatus::Failed
                    })
                    .map(|i| i.original_delivery_id.as_str())
                    .collect();
                println!("replay {}: {:?}", s.id, s.status);
                if !failed.is_empty() {
                    println!("failed again (back in the DLQ): {}", failed.join(", "));
                }
            });
        }
        ReplayCmd::Cancel { session_id } => {
            let op = console.enqueue_replay_cancel(profile, &session_id).await?;
            console
                .sync_replays(profile, Duration::from_secs(30))
                .await
                .ok();
            let op = console.replay_op(op.id).await?;
            emit(json, &op, |op| {
                println!("cancel {}: {}", op.session_id, describe_op(op))
            });
            return Ok(match op.state {
                ReplayOpState::Done => Exit::Ok,
                ReplayOpState::NeedsAttention => Exit::NeedsAttention,
                ReplayOpState::Pending => Exit::Incomplete,
            });
        }
        ReplayCmd::List => {
            let local = console.replay_ops(profile).await?;
            let sessions = console.replay_sessions(profile).await;
            let value = serde_json::json!({
                "sessions": sessions.as_ref().ok(),
                "queued": local.iter().filter(|o| o.state != ReplayOpState::Done).collect::<Vec<_>>(),
            });
            emit(json, &value, |_| {
                match &sessions {
                    Ok(sessions) => {
                        let rows: Vec<Vec<String>> = sessions
                            .iter()
                            .map(|s| {
                                vec![s.id.clone(), time(&s.created_at), progress_line(s, None)]
                            })
                            .collect();
                        table::print(&["SESSION", "CREATED (UTC)", "PROGRESS"], &rows);
                    }
                    Err(e) => println!("sessions: server unreachable ({e})"),
                }
                for op in local.iter().filter(|o| o.state != ReplayOpState::Done) {
                    println!(
                        "queued {:?} {}: {}",
                        op.action,
                        op.session_id,
                        describe_op(op)
                    );
                }
            });
        }
        ReplayCmd::Sync => {
            let ops = console
                .sync_replays(profile, Duration::from_secs(60))
                .await?;
            emit(json, &ops, |ops| {
                for op in ops {
                    println!("{:?} {}: {}", op.action, op.session_id, describe_op(op));
                }
                if ops.is_empty() {
                    println!("nothing queued");
                }
            });
        }
    }
    Ok(Exit::Ok)
}
