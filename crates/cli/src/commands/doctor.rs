//! `switchyard doctor [fix FINDING_ID]`: what is wrong, on this console and on the control
//! plane, and the guided fix for each (docs/recovery.md). A server fix is a keyed write
//! queued in the data dir and sent at once; unreachable, it stays saved locally (exit 4).

use clap::{Args, Subcommand};
use serde_json::json;
use std::io::{BufRead, IsTerminal, Write as _};
use switchyard_core::protocol_diagnostics::{FixAction, Severity};
use switchyard_core::*;

use crate::args::parse_duration;
use crate::{Exit, emit};

#[derive(Args)]
pub struct DoctorArgs {
    #[command(subcommand)]
    pub cmd: Option<DoctorCmd>,
}

#[derive(Subcommand)]
pub enum DoctorCmd {
    /// Run one of a finding's fixes (they are numbered in `switchyard doctor`).
    Fix(FixArgs),
}

#[derive(Args)]
pub struct FixArgs {
    /// The finding's id, as `switchyard doctor` lists it.
    pub finding_id: String,
    /// Which fix to run (1 = the first, recommended one).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub action: usize,
    /// Run a destructive fix without asking.
    #[arg(long)]
    pub yes: bool,
    /// A server fix's idempotency key (default: a new one). The same key again resumes that
    /// fix instead of queuing another.
    #[arg(long, value_name = "KEY")]
    pub key: Option<String>,
    /// Give up waiting for the control plane's answer after this long (it stays queued).
    #[arg(long, value_name = "DUR", default_value = "30s")]
    pub timeout: String,
}

pub async fn doctor_cmd(
    console: &Console,
    profile: &str,
    json: bool,
    args: DoctorArgs,
) -> anyhow::Result<Exit> {
    match args.cmd {
        None => report(console, profile, json).await,
        Some(DoctorCmd::Fix(fix)) => run_fix(console, profile, json, fix).await,
    }
}

async fn report(console: &Console, profile: &str, json: bool) -> anyhow::Result<Exit> {
    let report = console.findings(profile).await?;
    emit(json, &report, print_report);
    Ok(if report.needs_person() {
        Exit::NeedsAttention
    } else if report.incomplete() {
        Exit::Incomplete
    } else {
        Exit::Ok
    })
}

fn print_report(r: &DoctorReport) {
    outln!(
        "{}: checked {}",
        r.profile,
        r.checked_at.format("%Y-%m-%d %H:%M:%S UTC")
    );
    match &r.server {
        ServerCheck::Reported { checked_at } => outln!(
            "control plane: diagnostics reported at {}",
            checked_at.format("%Y-%m-%d %H:%M:%S UTC")
        ),
        ServerCheck::Unsupported => outln!(
            "control plane: this control plane does not report diagnostics (GET /v1/diagnostics \
             answered 404): its side was NOT checked"
        ),
        ServerCheck::Unreachable {
            message,
            last_checked_at,
        } => outln!(
            "control plane: unreachable ({message}); {}",
            match last_checked_at {
                Some(at) => format!(
                    "its findings below are from the last check, {}",
                    at.format("%Y-%m-%d %H:%M:%S UTC")
                ),
                None => "its side was NOT checked".to_owned(),
            }
        ),
    }
    for u in &r.unchecked {
        outln!("not checked: {u}");
    }
    if r.findings.is_empty() {
        outln!("\nno findings: nothing needs a person");
        return;
    }
    for severity in [Severity::Critical, Severity::Warning, Severity::Info] {
        let group: Vec<&DoctorFinding> = r
            .findings
            .iter()
            .filter(|f| f.finding.severity == severity)
            .collect();
        if group.is_empty() {
            continue;
        }
        let title = match severity {
            Severity::Critical => "CRITICAL",
            Severity::Warning => "WARNING",
            Severity::Info => "INFO",
        };
        outln!("\n{title} ({})", group.len());
        for f in group {
            print_finding(f);
        }
    }
    outln!("\nrun a fix: switchyard doctor fix FINDING_ID --action N");
}

fn print_finding(f: &DoctorFinding) {
    let source = match f.source {
        FindingSource::Console => "console",
        FindingSource::Server => "control plane",
    };
    outln!("  {}  [{source}]", f.finding.id);
    outln!("    {}", crate::table::clean(&f.finding.detail));
    let e = &f.finding.evidence;
    if let Some(since) = e.since {
        outln!("    since: {}", since.format("%Y-%m-%d %H:%M:%S UTC"));
    }
    if let Some(until) = e.until {
        outln!("    until: {}", until.format("%Y-%m-%d %H:%M:%S UTC"));
    }
    if !e.delivery_ids.is_empty() {
        outln!("    deliveries: {}", e.delivery_ids.join(", "));
    }
    if let (Some(expected), Some(actual)) = (e.expected, e.actual) {
        outln!("    expected {expected}, actual {actual}");
    }
    if f.finding.actions.is_empty() {
        outln!("    no automatic fix: a person must look (see the detail)");
    }
    for (i, a) in f.finding.actions.iter().enumerate() {
        outln!(
            "    {}. {}{}",
            i + 1,
            a.label,
            if a.destructive { " (destructive)" } else { "" }
        );
        outln!("       {}", request_line(a));
    }
}

/// The exact request a fix makes, in a line.
fn request_line(a: &FixAction) -> String {
    let target = match a.method.as_str() {
        "LOCAL" => format!("changes only the console's database ({})", a.path),
        _ => format!("{} {}", a.method, a.path),
    };
    match &a.body {
        Some(body) => format!("{target} {body}"),
        None => target,
    }
}

/// A destructive fix goes ahead with `--yes`, or once a person at a terminal types `yes`.
pub fn confirmed(yes: bool, what: &str, word: &str) -> anyhow::Result<()> {
    if yes {
        return Ok(());
    }
    if !std::io::stdin().is_terminal() {
        anyhow::bail!("{what}: pass --yes to go ahead (nothing was queued)");
    }
    err!("{what}. Type {word:?} to go ahead: ");
    std::io::stderr().flush()?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    if line.trim() != word {
        anyhow::bail!("not confirmed; nothing was queued");
    }
    Ok(())
}

async fn run_fix(
    console: &Console,
    profile: &str,
    json: bool,
    args: FixArgs,
) -> anyhow::Result<Exit> {
    let timeout = parse_duration(&args.timeout)?;
    if args.action == 0 {
        anyhow::bail!("--action counts from 1 (the first fix listed)");
    }
    let index = args.action - 1;
    // Checked before anything is queued: the fix exists and, if destructive, is confirmed.
    let report = console.findings(profile).await?;
    let resumed = args.key.is_some()
        && console
            .recovery_ops(profile, 500)
            .await?
            .iter()
            .any(|o| Some(&o.idempotency_key) == args.key.as_ref());
    if !resumed {
        let Some(found) = report
            .findings
            .iter()
            .find(|f| f.finding.id == args.finding_id)
        else {
            anyhow::bail!(
                "no finding {:?} now (it may be fixed already); run `switchyard doctor`",
                args.finding_id
            );
        };
        let Some(action) = found.finding.actions.get(index) else {
            anyhow::bail!(
                "finding {} has {} fix(es); --action {} is not one of them",
                args.finding_id,
                found.finding.actions.len(),
                args.action
            );
        };
        if action.destructive {
            confirmed(
                args.yes,
                &format!("\"{}\" cannot be undone", action.label),
                "yes",
            )?;
        }
    }
    let outcome = console
        .run_fix(profile, &args.finding_id, index, args.key, timeout)
        .await?;
    let exit = match outcome.queued.as_ref().map(|q| q.state) {
        None | Some(ActionState::Done) => Exit::Ok,
        Some(ActionState::NeedsAttention) => Exit::NeedsAttention,
        Some(ActionState::Pending) => Exit::Incomplete,
    };
    if json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&json!({"outcome": outcome}))?
        );
    } else {
        outln!("{}: {}", outcome.finding_id, outcome.action.label);
        outln!("  {}", request_line(&outcome.action));
        outln!("  {}", outcome.message);
        if let Some(q) = outcome
            .queued
            .as_ref()
            .filter(|q| q.state == ActionState::Pending)
        {
            outln!(
                "  resume: `switchyard doctor fix {} --action {} --key {}` or `switchyard sync`",
                outcome.finding_id,
                args.action,
                q.idempotency_key
            );
        }
    }
    Ok(exit)
}
