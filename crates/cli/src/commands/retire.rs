//! `switchyard retire KIND NAME …`, `retire status ID`, `retire cancel ID`, `retire list`:
//! taking a resource out of service without losing a delivery (docs/recovery.md). A start
//! and a cancel are keyed writes queued in the data dir and sent at once; the retirement id
//! is chosen before the first send, so running the same command with `--id` resumes it.

use std::time::{Duration, Instant};

use clap::{Args, Subcommand, ValueEnum};
use switchyard_core::protocol_retirement::{
    DlqDisposition, Retirement, RetirementRequest, RetirementState,
};
use switchyard_core::*;

use super::doctor::confirmed;
use crate::args::parse_duration;
use crate::{Exit, emit, table};

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct RetireArgs {
    #[command(subcommand)]
    pub cmd: Option<RetireCmd>,
    #[command(flatten)]
    pub start: StartArgs,
}

#[derive(Subcommand)]
pub enum RetireCmd {
    /// Where a retirement is: its state, what it waits for and when it should move on.
    Status { id: String },
    /// Cancel a retirement: what it disabled is enabled again; nothing is deleted.
    Cancel {
        id: String,
        /// Give up waiting for the control plane's answer after this long (it stays queued).
        #[arg(long, value_name = "DUR", default_value = "30s")]
        timeout: String,
    },
    /// Every retirement, newest first (and those only saved locally so far).
    List,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum DlqArg {
    Keep,
    Purge,
}

#[derive(Args)]
pub struct StartArgs {
    /// endpoint, target or flow.
    #[arg(required = true)]
    pub kind: Option<String>,
    #[arg(required = true)]
    pub name: Option<String>,
    /// How long to wait once drained and disabled before deleting (cancellable), e.g. 10m.
    #[arg(long, value_name = "DUR", default_value = "0s")]
    pub grace: String,
    /// Retire the flows that reference it first (else it stops at `blocked`, naming them).
    #[arg(long)]
    pub cascade_flows: bool,
    /// Its dead deliveries: keep them browsable (default) or purge them with it.
    #[arg(long, value_enum, default_value = "keep")]
    pub dlq: DlqArg,
    /// Show what it would do (impact, blockers); start nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Follow it until it is deleted, cancelled or blocked (or `--timeout` passes).
    #[arg(long)]
    pub wait: bool,
    /// The retirement id (default: a new one). The same id again resumes that retirement.
    #[arg(long, value_name = "ID")]
    pub id: Option<String>,
    /// Start it without asking (the resource is deleted at the end).
    #[arg(long)]
    pub yes: bool,
    /// How long to wait for the control plane (and, with --wait, for the retirement).
    #[arg(long, value_name = "DUR", default_value = "10m")]
    pub timeout: String,
}

pub async fn retire_cmd(
    console: &Console,
    profile: &str,
    json: bool,
    args: RetireArgs,
) -> anyhow::Result<Exit> {
    match args.cmd {
        Some(RetireCmd::Status { id }) => {
            let view = console.retirement_status(profile, &id).await?;
            emit(json, &view, |v| outln!("{}", describe(v)));
            Ok(exit_of(&view))
        }
        Some(RetireCmd::Cancel { id, timeout }) => {
            let timeout = parse_duration(&timeout)?;
            let view = console.cancel_retirement(profile, &id, timeout).await?;
            emit(json, &view, |v| outln!("{}", describe(v)));
            Ok(match view.cancel.as_ref().map(|c| c.state) {
                Some(ActionState::Pending) => Exit::Incomplete,
                Some(ActionState::NeedsAttention) => Exit::NeedsAttention,
                _ => Exit::Ok,
            })
        }
        Some(RetireCmd::List) => {
            let views = console.retirements(profile).await?;
            emit(json, &views, |views| {
                let rows: Vec<Vec<String>> = views
                    .iter()
                    .map(|v| {
                        let (what, state, next) = match &v.server {
                            Some(r) => (
                                format!("{}/{}", r.kind, r.name),
                                state_name(r.state).to_owned(),
                                eta(r),
                            ),
                            None => (
                                v.start.as_ref().map_or("?".into(), |s| s.label.clone()),
                                "saved locally".to_owned(),
                                "-".to_owned(),
                            ),
                        };
                        vec![v.id.clone(), what, state, next]
                    })
                    .collect();
                table::print(&["ID", "RESOURCE", "STATE", "NEXT"], &rows);
            });
            Ok(Exit::Ok)
        }
        None => start(console, profile, json, args.start).await,
    }
}

async fn start(
    console: &Console,
    profile: &str,
    json: bool,
    args: StartArgs,
) -> anyhow::Result<Exit> {
    let (Some(kind_text), Some(name)) = (args.kind, args.name) else {
        anyhow::bail!("name the resource: switchyard retire KIND NAME");
    };
    let kind = ResourceKind::parse(&kind_text)
        .ok_or_else(|| anyhow::anyhow!("unknown kind {kind_text:?} (endpoint, target or flow)"))?;
    let grace = parse_duration(&args.grace)?;
    let timeout = parse_duration(&args.timeout)?;
    let request = RetirementRequest {
        kind,
        name: name.clone(),
        grace_seconds: grace.as_secs(),
        cascade_flows: args.cascade_flows,
        dlq: match args.dlq {
            DlqArg::Keep => DlqDisposition::Keep,
            DlqArg::Purge => DlqDisposition::Purge,
        },
        dry_run: false,
    };
    if args.dry_run {
        let dry = console.preview_retirement(profile, request).await?;
        emit(json, &dry, |d| {
            outln!(
                "retiring {kind}/{name} would start {}",
                state_name(d.would_start)
            );
            outln!("  flows that reference it: {}", list(&d.impact.flows));
            outln!(
                "  pending deliveries the drain waits for: {}",
                d.impact.pending_deliveries
            );
            outln!(
                "  dead deliveries ({}): {}",
                dlq_word(args.dlq),
                d.impact.dlq_depth
            );
            outln!("  open replays: {}", list(&d.impact.open_replays));
            for b in &d.blockers {
                outln!("  blocked by: {}", blocker(b));
            }
            outln!("nothing was started (dry run)");
        });
        return Ok(Exit::Ok);
    }
    confirmed(
        args.yes,
        &format!(
            "retiring {kind}/{name} deletes it once it is drained (and any grace period has run)"
        ),
        &name,
    )?;
    let started = Instant::now();
    let mut view = console
        .retire(
            profile,
            request,
            args.id,
            timeout.min(Duration::from_secs(60)),
        )
        .await?;
    if args.wait && view.server.is_some() {
        view = follow(console, profile, json, view, timeout, started).await?;
    }
    emit(json, &view, |v| outln!("{}", describe(v)));
    Ok(exit_of(&view))
}

/// Follows a retirement until it is final or blocked (or `timeout` passes), printing each
/// state it enters (humans only).
async fn follow(
    console: &Console,
    profile: &str,
    json: bool,
    mut view: RetirementView,
    timeout: Duration,
    started: Instant,
) -> anyhow::Result<RetirementView> {
    let mut last = None;
    while let Some(r) = &view.server {
        if last != Some(r.state) {
            if !json {
                errln!("retire {}: {} — {}", r.id, state_name(r.state), eta(r));
            }
            last = Some(r.state);
        }
        if r.state.is_final() || r.state == RetirementState::Blocked {
            break;
        }
        if started.elapsed() >= timeout {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
        view = console.retirement_status(profile, &view.id).await?;
    }
    Ok(view)
}

fn exit_of(view: &RetirementView) -> Exit {
    match (&view.server, view.start.as_ref().map(|s| s.state)) {
        (_, Some(ActionState::NeedsAttention)) => Exit::NeedsAttention,
        (Some(r), _) if r.state == RetirementState::Blocked => Exit::NeedsAttention,
        (Some(_), _) => Exit::Ok,
        (None, _) => Exit::Incomplete,
    }
}

fn state_name(s: RetirementState) -> &'static str {
    match s {
        RetirementState::Blocked => "blocked",
        RetirementState::Draining => "draining",
        RetirementState::Disabled => "disabled",
        RetirementState::Scheduled => "scheduled",
        RetirementState::Deleted => "deleted",
        RetirementState::Cancelled => "cancelled",
    }
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        "none".into()
    } else {
        items.join(", ")
    }
}

fn dlq_word(d: DlqArg) -> &'static str {
    match d {
        DlqArg::Keep => "kept",
        DlqArg::Purge => "purged",
    }
}

fn blocker(b: &switchyard_core::protocol_retirement::Blocker) -> String {
    match (&b.name, b.count) {
        (Some(n), _) => format!("{} {n}", b.kind),
        (None, Some(c)) => format!("{c} {}", b.kind.replace('_', " ")),
        (None, None) => b.kind.clone(),
    }
}

fn time(t: Option<chrono::DateTime<chrono::Utc>>) -> String {
    t.map_or("-".into(), |t| {
        t.format("%Y-%m-%d %H:%M:%S UTC").to_string()
    })
}

/// What happens next, and when.
fn eta(r: &Retirement) -> String {
    match r.state {
        RetirementState::Blocked => format!(
            "waits for a person: blocked by {}",
            r.blockers
                .iter()
                .map(blocker)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        RetirementState::Draining => format!(
            "no new work accepted; {} pending deliveries finish or die on their schedule; drained by {}, then disabled",
            r.impact.pending_deliveries,
            time(r.drain_eta)
        ),
        RetirementState::Disabled => format!(
            "drained; the grace period ({} s) starts next",
            r.grace_seconds
        ),
        RetirementState::Scheduled => format!(
            "deleted at {} unless cancelled (`switchyard retire cancel {}`)",
            time(r.delete_at),
            r.id
        ),
        RetirementState::Deleted => "deleted; a tombstone keeps the record".into(),
        RetirementState::Cancelled => {
            "cancelled: what it disabled is enabled again; nothing was deleted".into()
        }
    }
}

fn describe(v: &RetirementView) -> String {
    let Some(r) = &v.server else {
        let why = match (&v.start, &v.offline) {
            (Some(s), _) if s.state == ActionState::NeedsAttention => format!(
                "refused: {}",
                s.last_error
                    .as_ref()
                    .map_or("no reason given", |e| e.message.as_str())
            ),
            (_, Some(m)) => format!("the control plane cannot be reached ({m})"),
            _ => "not confirmed yet".into(),
        };
        return format!(
            "retirement {}: saved locally, {why}\n  it is sent with the same id by `switchyard sync` (or run \
             `switchyard retire … --id {}` again); follow it with `switchyard retire status {}`",
            v.id, v.id, v.id
        );
    };
    let mut out = format!(
        "retirement {} of {}/{}: {}\n  next: {}",
        r.id,
        r.kind,
        r.name,
        state_name(r.state),
        eta(r)
    );
    if !r.cascaded_flows.is_empty() {
        out.push_str(&format!(
            "\n  flows retired first: {}",
            r.cascaded_flows.join(", ")
        ));
    }
    if let Some(c) = v.cancel.as_ref().filter(|c| c.state != ActionState::Done) {
        out.push_str(&format!("\n  cancel: {}", c.state.as_str()));
    }
    if r.state.is_cancellable() && r.state != RetirementState::Blocked {
        out.push_str(&format!(
            "\n  cancel with `switchyard retire cancel {}`",
            r.id
        ));
    }
    out
}
