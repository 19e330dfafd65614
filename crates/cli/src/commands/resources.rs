//! `switchyard endpoints|targets|flows …`: reads from the local cache, writes queued in the
//! outbox (returning at once, offline too), `--wait` to sync right away.

use std::io::Read;

use anyhow::{Context, bail};
use serde_json::Value;
use switchyard_core::*;

use super::profile::pick_profile;
use super::sync::run_sync;
use crate::args::{ResourceCmd, WaitArg, parse_duration};
use crate::{Exit, emit, table};

/// A JSON argument (`--spec`, `--payload`): inline JSON, `@FILE`, or `-` for stdin.
pub fn read_json(text: &str, flag: &str) -> anyhow::Result<Value> {
    let raw = if text == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .with_context(|| format!("reading {flag} from standard input"))?;
        s
    } else if let Some(path) = text.strip_prefix('@') {
        std::fs::read_to_string(path).with_context(|| format!("reading {flag} file {path}"))?
    } else {
        text.to_owned()
    };
    serde_json::from_str(&raw).map_err(|e| anyhow::anyhow!("{flag} is not valid JSON: {e}"))
}

fn state_word(s: SyncState) -> &'static str {
    match s {
        SyncState::Synced => "synced",
        SyncState::Pending => "saved locally",
        SyncState::Sending => "sending",
        SyncState::NeedsAttention => "NEEDS ATTENTION",
    }
}

fn summary(kind: ResourceKind, r: &CachedResource) -> String {
    let Some(local) = &r.local else {
        return "(deleted locally)".into();
    };
    let s = &local.spec;
    match kind {
        ResourceKind::Endpoint => format!(
            "{}{}",
            if local.enabled == Some(false) {
                "[disabled] "
            } else {
                ""
            },
            s["description"].as_str().unwrap_or_default()
        ),
        ResourceKind::Target => s["url"].as_str().unwrap_or_default().to_owned(),
        ResourceKind::Flow => format!(
            "{} -> {} ({})",
            s["endpoint"].as_str().unwrap_or_default(),
            s["target"].as_str().unwrap_or_default(),
            s["mode"].as_str().unwrap_or_default()
        ),
    }
}

pub async fn resource_cmd(
    console: &Console,
    profile: &Option<String>,
    json: bool,
    kind: ResourceKind,
    cmd: ResourceCmd,
) -> anyhow::Result<Exit> {
    let profile = pick_profile(console, profile).await?;
    let (write, wait) = match cmd {
        ResourceCmd::List => return list(console, &profile, json, kind).await,
        ResourceCmd::Get { name } => return get(console, &profile, json, kind, &name).await,
        ResourceCmd::Create { name, spec, wait } => (
            Write::Create {
                kind,
                name,
                spec: read_json(&spec, "--spec")?,
            },
            wait,
        ),
        ResourceCmd::Update { name, spec, wait } => (
            Write::Update {
                kind,
                name,
                patch: read_json(&spec, "--spec")?,
            },
            wait,
        ),
        ResourceCmd::Apply { name, spec, wait } => (
            Write::Apply {
                kind,
                name,
                spec: read_json(&spec, "--spec")?,
            },
            wait,
        ),
        ResourceCmd::Delete { name, wait } => (Write::Delete { kind, name }, wait),
        ResourceCmd::Enable { name, wait } | ResourceCmd::Disable { name, wait }
            if kind != ResourceKind::Endpoint =>
        {
            let _ = (name, wait);
            bail!("only endpoints can be enabled or disabled");
        }
        ResourceCmd::Enable { name, wait } => (Write::Enable { name }, wait),
        ResourceCmd::Disable { name, wait } => (Write::Disable { name }, wait),
    };
    queue(console, &profile, json, write, wait).await
}

async fn list(
    console: &Console,
    profile: &str,
    json: bool,
    kind: ResourceKind,
) -> anyhow::Result<Exit> {
    let items = console.list_resources(profile, kind).await?;
    emit(json, &items, |items| {
        let rows = items
            .iter()
            .map(|r| {
                vec![
                    r.name.clone(),
                    r.server
                        .as_ref()
                        .map(|s| s.version.to_string())
                        .unwrap_or_else(|| "-".into()),
                    state_word(r.sync_state).to_owned(),
                    summary(kind, r),
                ]
            })
            .collect::<Vec<_>>();
        table::print(&["NAME", "VERSION", "STATE", "SUMMARY"], &rows);
    });
    Ok(Exit::Ok)
}

async fn get(
    console: &Console,
    profile: &str,
    json: bool,
    kind: ResourceKind,
    name: &str,
) -> anyhow::Result<Exit> {
    let r = console.get_resource(profile, kind, name).await?;
    emit(json, &r, |r| {
        outln!("{} {}  ({})", kind, r.name, state_word(r.sync_state));
        match &r.server {
            Some(s) => outln!("server version {} (updated {})", s.version, s.updated_at),
            None => outln!("not on the server yet"),
        }
        match &r.local {
            Some(l) => outln!(
                "spec: {}",
                serde_json::to_string_pretty(&l.spec).unwrap_or_default()
            ),
            None => outln!("deleted locally"),
        }
        if let Some(s) = &r.server {
            outln!("status: {}", s.status);
        }
        if !r.pending_ops.is_empty() {
            outln!("queued operations: {:?}", r.pending_ops);
        }
        outln!("cache refreshed: {}", table::time(r.refreshed_at));
    });
    Ok(Exit::Ok)
}

/// Queues the write and returns at once, or with `--wait` syncs until it is confirmed,
/// refused or the timeout passes.
async fn queue(
    console: &Console,
    profile: &str,
    json: bool,
    write: Write,
    wait: WaitArg,
) -> anyhow::Result<Exit> {
    let op = console.enqueue(profile, write).await?;
    if !wait.wait {
        emit(json, &op, |op| {
            outln!(
                "queued #{}: {} {} {} (saved locally; run `switchyard sync` to send)",
                op.id,
                op.op.as_str(),
                op.kind,
                op.name
            )
        });
        return Ok(Exit::Ok);
    }
    let timeout = parse_duration(&wait.timeout)?;
    let sync_result = run_sync(console, profile, true, Some(timeout), !json).await;
    let op = console.op(op.id).await?;
    emit(json, &op, |op| {
        outln!(
            "#{} {} {} {}: {}",
            op.id,
            op.op.as_str(),
            op.kind,
            op.name,
            describe_state(op)
        )
    });
    if let Err(e) = sync_result {
        if op.state != OpState::Done {
            return Err(e.into());
        }
    }
    Ok(match op.state {
        OpState::Done => Exit::Ok,
        OpState::NeedsAttention => Exit::NeedsAttention,
        _ => Exit::Incomplete,
    })
}

pub fn describe_state(op: &OutboxOp) -> String {
    match op.state {
        OpState::Done => format!(
            "confirmed (version {})",
            op.result_version
                .map(|v| v.to_string())
                .unwrap_or_else(|| "-".into())
        ),
        OpState::NeedsAttention => format!(
            "NEEDS ATTENTION: {}",
            op.last_error
                .as_ref()
                .map(|e| e.message.clone())
                .unwrap_or_default()
        ),
        OpState::Pending => match &op.last_error {
            Some(e) => format!("saved locally, will retry ({})", e.message),
            None => "saved locally".into(),
        },
        s => s.as_str().into(),
    }
}
