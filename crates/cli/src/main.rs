//! `switchyard`: the command-line console. Every write is queued in the local outbox and
//! returns at once (works offline); `sync` sends them; `--wait` syncs right away.

#[macro_use]
mod output;
mod args;
mod commands;
mod signals;
mod table;

use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use serde::Serialize;
use switchyard_core::*;

use args::*;
use commands::profile::pick_profile;
use commands::{
    audit, certs, dlq, doctor, events, first_secrets, gitops, mcp, outbox, profile, resources,
    retire, rotation, secrets, status, sync, targets,
};

/// How the process ends. The codes are part of the CLI's contract (docs/cli.md); clap's own
/// usage errors exit 2 too (with nothing on stdout).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Done (for a sync: drained).
    Ok,
    /// An error; the message is on stderr (or `{"error": …}` on stdout with `--json`).
    Error,
    /// `gitops plan` has changes to apply (`gitops status`: not in sync).
    Changes,
    /// Something needs a person's decision (see `switchyard outbox list`, `switchyard doctor`).
    NeedsAttention,
    /// The sync stopped (timeout, offline) with work left to send; a keyed write (a fix, a
    /// retirement) is saved locally, not confirmed; `doctor` could not reach the control plane.
    Incomplete,
    /// `targets test`: the control plane sent the test webhook and the receiver did not
    /// accept it.
    TestFailed,
    /// Refused because it would lose work still queued (`profile remove` without
    /// `--discard-queued`); nothing changed.
    Refused,
}

impl Exit {
    pub fn code(self) -> u8 {
        match self {
            Exit::Ok => 0,
            Exit::Error => 1,
            Exit::Changes => 2,
            Exit::NeedsAttention => 3,
            Exit::Incomplete => 4,
            Exit::TestFailed => 5,
            Exit::Refused => 6,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            errln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(Exit::Error.code());
        }
    };
    let json = cli.json;
    match runtime.block_on(run(cli)) {
        Ok(exit) => ExitCode::from(exit.code()),
        Err(e) => {
            print_error(json, &e);
            ExitCode::from(Exit::Error.code())
        }
    }
}

/// An error as the CLI reports it: `{"error": {code, class, message, …}}` on stdout with
/// `--json`, else `error: …` on stderr.
pub fn print_error(json: bool, e: &anyhow::Error) {
    if json {
        let body = match e.downcast_ref::<CoreError>() {
            Some(core) => serde_json::to_value(ErrorBody::from(core)).unwrap_or_default(),
            None => serde_json::json!({"code": "error", "message": format!("{e:#}")}),
        };
        outln!("{}", serde_json::json!({ "error": body }));
    } else {
        errln!("error: {e:#}");
    }
}

/// Prints `value` as pretty JSON with `--json`, else the human form.
pub fn emit<T: Serialize>(json: bool, value: &T, human: impl FnOnce(&T)) {
    if json {
        outln!(
            "{}",
            serde_json::to_string_pretty(value).expect("output serializes")
        );
    } else {
        human(value);
    }
}

async fn run(cli: Cli) -> anyhow::Result<Exit> {
    let console = open_console(&cli).await?;
    let json = cli.json;
    match cli.command {
        Command::Profile(cmd) => profile::profile_cmd(&console, json, cmd).await,
        Command::Endpoints(cmd) => {
            resources::resource_cmd(&console, &cli.profile, json, ResourceKind::Endpoint, cmd).await
        }
        Command::Targets(cmd) => targets_cmd(&console, &cli.profile, json, cmd).await,
        Command::Flows(cmd) => {
            resources::resource_cmd(&console, &cli.profile, json, ResourceKind::Flow, cmd).await
        }
        Command::Outbox(cmd) => {
            let profile = pick_profile(&console, &cli.profile).await?;
            outbox::outbox_cmd(&console, &profile, json, cmd).await
        }
        Command::Sync(args) => {
            let profile = pick_profile(&console, &cli.profile).await?;
            let timeout = args.timeout.as_deref().map(parse_duration).transpose()?;
            sync::sync(&console, &profile, json, args.until_drained, timeout).await
        }
        Command::Refresh => {
            let profile = pick_profile(&console, &cli.profile).await?;
            refresh(&console, &profile, json).await
        }
        Command::Dlq(cmd) => {
            let profile = pick_profile(&console, &cli.profile).await?;
            dlq::dlq_cmd(&console, &profile, json, cmd).await
        }
        Command::Replay(cmd) => {
            let profile = pick_profile(&console, &cli.profile).await?;
            dlq::replay_cmd(&console, &profile, json, cmd).await
        }
        Command::Status(args) => {
            let profile = pick_profile(&console, &cli.profile).await?;
            status::status(&console, &profile, json, args).await
        }
        Command::Events(cmd) => {
            let profile = pick_profile(&console, &cli.profile).await?;
            events::events_cmd(&console, &profile, json, cmd).await
        }
        Command::Gitops(cmd) => {
            let profile = pick_profile(&console, &cli.profile).await?;
            gitops::gitops_cmd(&console, &profile, json, cmd).await
        }
        Command::Doctor(args) => {
            let profile = pick_profile(&console, &cli.profile).await?;
            doctor::doctor_cmd(&console, &profile, json, args).await
        }
        Command::Retire(args) => {
            let profile = pick_profile(&console, &cli.profile).await?;
            retire::retire_cmd(&console, &profile, json, args).await
        }
        Command::Rotation(cmd) => {
            let profile = pick_profile(&console, &cli.profile).await?;
            rotation::rotation_cmd(&console, &profile, json, cmd).await
        }
        Command::Audit(args) => audit::audit_cmd(&console, &cli.profile, json, args).await,
        Command::Mcp(args) => {
            let profile = pick_profile(&console, &cli.profile).await?;
            mcp::mcp_cmd(console, profile, args).await
        }
    }
}

/// The console on the data dir, acting as `mcp` or `cli` in the audit log.
async fn open_console(cli: &Cli) -> anyhow::Result<Console> {
    let data_dir = cli.data_dir.clone().unwrap_or_else(default_data_dir);
    // The audit log's actor for what this process does by itself (e.g. sync outcomes).
    let actor = match cli.command {
        Command::Mcp(_) => "mcp",
        _ => "cli",
    };
    Console::open(ConsoleOptions::new(&data_dir, actor))
        .await
        .with_context(|| format!("opening the data dir {}", data_dir.display()))
}

/// `switchyard targets …`: the resource commands, and what only targets have.
async fn targets_cmd(
    console: &Console,
    chosen: &Option<String>,
    json: bool,
    cmd: TargetCmd,
) -> anyhow::Result<Exit> {
    match cmd {
        TargetCmd::Resource(cmd) => {
            resources::resource_cmd(console, chosen, json, ResourceKind::Target, cmd).await
        }
        TargetCmd::Test(args) => {
            let profile = pick_profile(console, chosen).await?;
            targets::test(console, &profile, json, args).await
        }
        TargetCmd::Secrets {
            name,
            reveal_pending,
        } => {
            let profile = pick_profile(console, chosen).await?;
            match name {
                Some(name) if !reveal_pending => {
                    secrets::list(console, &profile, json, &name).await
                }
                _ => first_secrets::reveal_pending(console, &profile, json).await,
            }
        }
        TargetCmd::RotateSecret(args) => {
            let profile = pick_profile(console, chosen).await?;
            secrets::rotate(console, &profile, json, args).await
        }
        TargetCmd::ExpireSecret(args) => {
            let profile = pick_profile(console, chosen).await?;
            secrets::expire(console, &profile, json, args).await
        }
        TargetCmd::Certs { name } => {
            let profile = pick_profile(console, chosen).await?;
            certs::list(console, &profile, json, &name).await
        }
        TargetCmd::UploadCert(args) => {
            let profile = pick_profile(console, chosen).await?;
            certs::upload(console, &profile, json, args).await
        }
        TargetCmd::ActivateCert(args) => {
            let profile = pick_profile(console, chosen).await?;
            certs::activate(console, &profile, json, args).await
        }
    }
}

async fn refresh(console: &Console, profile: &str, json: bool) -> anyhow::Result<Exit> {
    let report = console.refresh(profile).await?;
    emit(json, &report, |r| {
        outln!("refreshed {}: {} resources", r.profile, r.resources)
    });
    Ok(Exit::Ok)
}
