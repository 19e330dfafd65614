//! `switchyard gitops plan|apply|status|sources`: reconcile the profile's control plane to a
//! commit of a Git repository (docs/gitops.md).

use std::time::Duration;

use clap::{Args, Subcommand};
use serde_json::Value;
use switchyard_core::gitops::*;
use switchyard_core::*;

use super::sync::run_sync;
use crate::args::{WaitArg, parse_duration};
use crate::{Exit, emit, table};

#[derive(Subcommand)]
pub enum GitopsCmd {
    /// Show what applying the commit would change. Exit 0: nothing to do; 2: changes; 1: error.
    Plan {
        #[command(flatten)]
        source: SourceArgs,
        #[command(flatten)]
        plan: PlanArgs,
    },
    /// Plan, then queue the plan's writes through the outbox (--wait: send them now).
    Apply {
        #[command(flatten)]
        source: SourceArgs,
        #[command(flatten)]
        plan: PlanArgs,
        #[command(flatten)]
        wait: WaitArg,
    },
    /// Compare live state with the last applied commit: in sync, drifted, or behind the ref.
    /// Exit 0: in sync with the ref; 2: drifted, behind or still applying; 1: error.
    Status {
        #[command(flatten)]
        source: SourceArgs,
    },
    /// List the profile's GitOps sources and their last applied commit.
    Sources,
}

#[derive(Args)]
pub struct SourceArgs {
    /// The local Git repository (a remote is fetched by your git: `git fetch`, then
    /// `--ref origin/main`).
    #[arg(long, value_name = "PATH")]
    pub repo: String,
    /// The commit to read: a branch, tag, `origin/main`, a commit id.
    #[arg(long = "ref", value_name = "REF", default_value = "HEAD")]
    pub git_ref: String,
    /// The folder of the manifests inside the repository (default: all of it).
    #[arg(long, value_name = "DIR", default_value = "")]
    pub path: String,
}

impl SourceArgs {
    fn spec(&self) -> SourceSpec {
        SourceSpec {
            repo: self.repo.clone(),
            git_ref: self.git_ref.clone(),
            path: self.path.clone(),
        }
    }
}

#[derive(Args)]
pub struct PlanArgs {
    /// Delete what this source created and the commit no longer declares.
    #[arg(long)]
    pub prune: bool,
    /// With --prune: allow deleting every resource the source manages.
    #[arg(long, requires = "prune")]
    pub allow_delete_all: bool,
    /// Set resources changed outside Git back to the commit.
    #[arg(long)]
    pub self_heal: bool,
}

impl PlanArgs {
    fn options(&self) -> PlanOptions {
        PlanOptions {
            prune: self.prune,
            allow_delete_all: self.allow_delete_all,
            self_heal: self.self_heal,
        }
    }
}

pub async fn gitops_cmd(
    console: &Console,
    profile: &str,
    json: bool,
    cmd: GitopsCmd,
) -> anyhow::Result<Exit> {
    match cmd {
        GitopsCmd::Plan { source, plan } => {
            let plan = console
                .gitops_plan(profile, &source.spec(), plan.options())
                .await?;
            emit(json, &plan, print_plan);
            Ok(if plan.summary.has_changes() {
                Exit::Changes
            } else {
                Exit::Ok
            })
        }
        GitopsCmd::Apply { source, plan, wait } => {
            apply(console, profile, json, &source, &plan, &wait).await
        }
        GitopsCmd::Status { source } => {
            let status = console.gitops_status_of(profile, &source.spec()).await?;
            emit(json, &status, print_status);
            Ok(if status.clean() {
                Exit::Ok
            } else {
                Exit::Changes
            })
        }
        GitopsCmd::Sources => {
            let sources = console.gitops_sources(profile).await?;
            emit(json, &sources, |sources| {
                let rows: Vec<Vec<String>> = sources
                    .iter()
                    .map(|s| {
                        vec![
                            s.id.clone(),
                            s.spec.git_ref.clone(),
                            short(s.applied_commit.as_deref()),
                            table::time(s.applied_at),
                            s.managed.to_string(),
                        ]
                    })
                    .collect();
                table::print(&["SOURCE", "REF", "APPLIED", "AT", "MANAGED"], &rows);
            });
            Ok(Exit::Ok)
        }
    }
}

async fn apply(
    console: &Console,
    profile: &str,
    json: bool,
    source: &SourceArgs,
    args: &PlanArgs,
    wait: &WaitArg,
) -> anyhow::Result<Exit> {
    let plan = console
        .gitops_plan(profile, &source.spec(), args.options())
        .await?;
    if !json {
        print_plan(&plan);
    }
    let report = console.gitops_apply(&plan).await?;
    if report.op_ids.is_empty() {
        // Nothing of this apply to send or wait for: say so rather than echo the waves of an
        // earlier apply of the same commit.
        emit(json, &report, |r| {
            outln!(
                "nothing to apply: the control plane already matches {}; no write queued or sent",
                short(Some(&r.commit))
            );
        });
        return Ok(Exit::Ok);
    }
    if !wait.wait {
        emit(json, &report, |r| {
            outln!(
                "queued {} write(s) ({} already queued by an earlier run); run `switchyard sync` to send",
                r.queued,
                r.resumed
            );
        });
        return Ok(Exit::Ok);
    }
    let timeout = parse_duration(&wait.timeout)?;
    let progress = spawn_wave_progress(console, &plan, &report.op_ids, json);
    let synced = run_sync(console, profile, true, Some(timeout), false).await;
    progress.abort();
    let done = console
        .gitops_apply_progress(profile, &plan.source, &plan.commit, &report.op_ids)
        .await?;
    let report = ApplyReport {
        progress: done,
        ..report
    };
    emit(json, &report, |r| {
        print_waves(&r.progress);
        if r.progress.complete {
            outln!("applied {}", short(Some(&r.commit)));
        }
    });
    synced?;
    let attention: u32 = report
        .progress
        .waves
        .iter()
        .map(|w| w.needs_attention)
        .sum();
    Ok(if report.progress.complete {
        Exit::Ok
    } else if attention > 0 {
        println_err(
            json,
            "some writes need attention: see `switchyard outbox list`",
        );
        Exit::NeedsAttention
    } else {
        Exit::Incomplete
    })
}

fn println_err(json: bool, line: &str) {
    if !json {
        errln!("{line}");
    }
}

/// Prints each wave's progress of this apply's writes (`op_ids`) on stderr while the sync
/// runs (when it changes).
fn spawn_wave_progress(
    console: &Console,
    plan: &GitopsPlan,
    op_ids: &[i64],
    json: bool,
) -> tokio::task::JoinHandle<()> {
    let (console, plan, op_ids) = (console.clone(), plan.clone(), op_ids.to_vec());
    tokio::spawn(async move {
        let mut last = None;
        loop {
            if let Ok(p) = console
                .gitops_apply_progress(&plan.profile, &plan.source, &plan.commit, &op_ids)
                .await
            {
                if last.as_ref() != Some(&p.waves) && !json {
                    for w in p.waves.iter().filter(|w| w.total > 0) {
                        errln!(
                            "wave {} ({}): {}/{} confirmed, {} need attention",
                            w.wave,
                            wave_name(w.wave),
                            w.done,
                            w.total,
                            w.needs_attention
                        );
                    }
                    last = Some(p.waves);
                }
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    })
}

fn wave_name(wave: u8) -> &'static str {
    match wave {
        1 => "targets and endpoints",
        2 => "flows",
        3 => "flow deletes",
        _ => "endpoint and target deletes",
    }
}

fn print_waves(p: &ApplyProgress) {
    for w in p.waves.iter().filter(|w| w.total > 0) {
        outln!(
            "wave {} ({}): {}/{} confirmed{}{}",
            w.wave,
            wave_name(w.wave),
            w.done,
            w.total,
            if w.needs_attention > 0 {
                format!(", {} NEED ATTENTION", w.needs_attention)
            } else {
                String::new()
            },
            if w.pending > 0 {
                format!(", {} still queued", w.pending)
            } else {
                String::new()
            },
        );
    }
}

fn short(commit: Option<&str>) -> String {
    commit.map_or_else(|| "-".into(), |c| c[..c.len().min(12)].to_owned())
}

fn value(v: &Option<Value>) -> String {
    v.as_ref()
        .map_or_else(|| "(absent)".into(), Value::to_string)
}

fn print_plan(plan: &GitopsPlan) {
    outln!(
        "plan for {} at {} \"{}\" (profile {})",
        plan.source,
        short(Some(&plan.commit)),
        crate::table::clean(&plan.commit_title),
        plan.profile
    );
    for item in plan
        .items
        .iter()
        .filter(|i| i.action != PlanAction::Unchanged)
    {
        let (sign, note) = match item.action {
            PlanAction::Create => ("+", String::new()),
            PlanAction::Update => ("~", String::new()),
            PlanAction::Delete => ("-", String::new()),
            PlanAction::Drifted => (
                "!",
                " changed outside Git; left as it is (--self-heal reverts it)".into(),
            ),
            PlanAction::Orphaned => (
                "?",
                " absent from the commit; kept (--prune deletes it)".into(),
            ),
            PlanAction::Release => (
                "=",
                " absent from the commit; not made by GitOps, so released, never deleted".into(),
            ),
            PlanAction::Unchanged => (" ", String::new()),
        };
        let version = item
            .base_version
            .map(|v| format!(" (v{v})"))
            .unwrap_or_default();
        outln!(
            "  {sign} {:<9} {}/{}{version}{note}  {}",
            item.action.as_str(),
            item.kind,
            item.name,
            item.path.as_deref().unwrap_or_default()
        );
        match (item.action, &item.desired) {
            (PlanAction::Create, Some(spec)) => outln!("        spec: {spec}"),
            (PlanAction::Delete, _) => {}
            _ => {
                for c in &item.changes {
                    outln!(
                        "        {}: {} -> {}",
                        c.field,
                        value(&c.before),
                        value(&c.after)
                    );
                }
            }
        }
    }
    let s = &plan.summary;
    outln!(
        "plan: {} to create, {} to update, {} to delete, {} unchanged, {} drifted, {} orphaned, {} released ({} manifests)",
        s.create,
        s.update,
        s.delete,
        s.unchanged,
        s.drifted,
        s.orphaned,
        s.release,
        plan.manifests
    );
}

fn print_status(st: &GitopsStatus) {
    let src = &st.source;
    outln!("source {} (ref {})", src.id, src.spec.git_ref);
    outln!(
        "applied commit: {} ({}); last queued: {}",
        short(src.applied_commit.as_deref()),
        table::time(src.applied_at),
        short(src.queued_commit.as_deref())
    );
    match (&st.head_commit, &st.head_error) {
        (Some(head), _) if st.behind => outln!("BEHIND: the ref is at {}", short(Some(head))),
        (Some(_), _) => outln!("the ref is at the applied commit"),
        (None, Some(e)) => outln!("cannot read the ref: {e}"),
        (None, None) => {}
    }
    outln!(
        "{} in sync, {} drifted, {} missing, {} applying ({} managed)",
        st.in_sync,
        st.drifted,
        st.missing,
        st.applying,
        src.managed
    );
    for r in &st.resources {
        let who = match (&r.changed_by, r.changed_at) {
            (Some(actor), at) => format!(" (changed by {actor} at {})", table::time(at)),
            _ => String::new(),
        };
        let state = match r.state {
            ResourceSync::Drifted => "DRIFTED",
            ResourceSync::Missing => "MISSING (deleted outside Git)",
            ResourceSync::Applying => "applying",
            ResourceSync::InSync => "in sync",
        };
        outln!("  {}/{}  {state}{who}", r.kind, r.name);
        for c in &r.changes {
            outln!(
                "        {}: {} (Git) -> {} (live)",
                c.field,
                value(&c.before),
                value(&c.after)
            );
        }
    }
}
