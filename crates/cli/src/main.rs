//! `switchyard`: the command-line console. Every write is queued in the local outbox and
//! returns at once (works offline); `sync` sends them; `--wait` syncs right away.
//!
//! Exit codes: 0 ok / drained; 1 error; 2 usage; 3 something needs attention;
//! 4 the sync timed out with work remaining.

mod args;
mod dlq;
mod events;
mod table;

use std::io::{IsTerminal, Read, Write as _};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Parser;
use serde::Serialize;
use serde_json::Value;
use switchyard_core::*;

use args::*;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let json = cli.json;
    match runtime.block_on(run(cli)) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            if json {
                let body = match e.downcast_ref::<CoreError>() {
                    Some(core) => serde_json::to_value(ErrorBody::from(core)).unwrap_or_default(),
                    None => serde_json::json!({"code": "error", "message": format!("{e:#}")}),
                };
                println!("{}", serde_json::json!({ "error": body }));
            } else {
                eprintln!("error: {e:#}");
            }
            ExitCode::from(1)
        }
    }
}

fn emit<T: Serialize>(json: bool, value: &T, human: impl FnOnce(&T)) {
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(value).expect("output serializes")
        );
    } else {
        human(value);
    }
}

async fn run(cli: Cli) -> anyhow::Result<u8> {
    let data_dir = cli.data_dir.clone().unwrap_or_else(default_data_dir);
    let console = Console::open(ConsoleOptions::new(&data_dir, "cli"))
        .await
        .with_context(|| format!("opening the data dir {}", data_dir.display()))?;
    let json = cli.json;
    match cli.command {
        Command::Profile(cmd) => profile_cmd(&console, json, cmd).await,
        Command::Endpoints(cmd) => {
            resource_cmd(&console, &cli.profile, json, ResourceKind::Endpoint, cmd).await
        }
        Command::Targets(cmd) => {
            resource_cmd(&console, &cli.profile, json, ResourceKind::Target, cmd).await
        }
        Command::Flows(cmd) => {
            resource_cmd(&console, &cli.profile, json, ResourceKind::Flow, cmd).await
        }
        Command::Outbox(cmd) => {
            let profile = pick_profile(&console, &cli.profile).await?;
            outbox_cmd(&console, &profile, json, cmd).await
        }
        Command::Sync(args) => {
            let profile = pick_profile(&console, &cli.profile).await?;
            let timeout = args.timeout.as_deref().map(parse_duration).transpose()?;
            sync(&console, &profile, json, args.until_drained, timeout).await
        }
        Command::Refresh => {
            let profile = pick_profile(&console, &cli.profile).await?;
            let report = console.refresh(&profile).await?;
            emit(json, &report, |r| {
                println!("refreshed {}: {} resources", r.profile, r.resources)
            });
            Ok(0)
        }
        Command::Dlq(cmd) => {
            let profile = pick_profile(&console, &cli.profile).await?;
            dlq::dlq_cmd(&console, &profile, json, cmd).await
        }
        Command::Replay(cmd) => {
            let profile = pick_profile(&console, &cli.profile).await?;
            dlq::replay_cmd(&console, &profile, json, cmd).await
        }
        Command::Events(cmd) => {
            let profile = pick_profile(&console, &cli.profile).await?;
            events::events_cmd(&console, &profile, json, cmd).await
        }
        Command::Audit(args) => {
            let entries = console
                .audit(AuditQuery {
                    profile: cli.profile.clone(),
                    op_id: args.op,
                    action_prefix: args.action,
                    limit: Some(args.limit),
                    ..Default::default()
                })
                .await?;
            emit(json, &entries, |entries| {
                let rows = entries
                    .iter()
                    .map(|e| {
                        vec![
                            table::time(Some(e.at)),
                            e.actor.clone(),
                            e.profile.clone().unwrap_or_default(),
                            e.action.clone(),
                            e.op_id.map(|i| i.to_string()).unwrap_or_default(),
                            e.resource.clone().unwrap_or_default(),
                            e.outcome.clone(),
                            e.detail.clone().unwrap_or_default(),
                        ]
                    })
                    .collect::<Vec<_>>();
                table::print(
                    &[
                        "AT", "ACTOR", "PROFILE", "ACTION", "OP", "RESOURCE", "OUTCOME", "DETAIL",
                    ],
                    &rows,
                );
            });
            Ok(0)
        }
    }
}

async fn pick_profile(console: &Console, chosen: &Option<String>) -> anyhow::Result<String> {
    if let Some(p) = chosen {
        return Ok(p.clone());
    }
    let profiles = console.list_profiles().await?;
    match profiles.as_slice() {
        [only] => Ok(only.name.clone()),
        [] => bail!(
            "no profile yet: add one with `switchyard profile add NAME --url URL --token-stdin`"
        ),
        many => bail!(
            "several profiles exist ({}); choose one with --profile NAME",
            many.iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn read_token() -> anyhow::Result<String> {
    let mut token = String::new();
    std::io::stdin()
        .read_to_string(&mut token)
        .context("reading the token from standard input")?;
    let token = token.trim().to_owned();
    if token.is_empty() {
        bail!(
            "no token on standard input (pipe it in: `printf %s \"$TOKEN\" | switchyard profile add …`)"
        );
    }
    Ok(token)
}

fn storage_note(p: &Profile) -> Option<String> {
    match &p.token_storage {
        TokenStorage::File { path } => Some(format!(
            "note: no OS keychain is available here; the token is stored in {path} (mode 0600, readable only by you)"
        )),
        _ => None,
    }
}

async fn profile_cmd(console: &Console, json: bool, cmd: ProfileCmd) -> anyhow::Result<u8> {
    match cmd {
        ProfileCmd::Add {
            name,
            url,
            token_stdin: _,
        } => {
            let token = read_token()?;
            let p = console.add_profile(NewProfile { name, url, token }).await?;
            if let Some(note) = storage_note(&p) {
                eprintln!("{note}");
            }
            emit(json, &p, |p| {
                println!("added profile {} ({})", p.name, p.url)
            });
        }
        ProfileCmd::Edit {
            name,
            url,
            token_stdin,
        } => {
            let token = if token_stdin {
                Some(read_token()?)
            } else {
                None
            };
            let p = console
                .edit_profile(&name, ProfileEdit { url, token })
                .await?;
            emit(json, &p, |p| {
                println!("updated profile {} ({})", p.name, p.url)
            });
        }
        ProfileCmd::List => {
            let profiles = console.list_profiles().await?;
            emit(json, &profiles, |ps| {
                let rows = ps
                    .iter()
                    .map(|p| {
                        let storage = match &p.token_storage {
                            TokenStorage::Keychain => "keychain".to_owned(),
                            TokenStorage::File { .. } => "file (0600)".to_owned(),
                            TokenStorage::Memory => "memory".to_owned(),
                        };
                        vec![
                            p.name.clone(),
                            p.url.clone(),
                            storage,
                            if p.sandbox { "yes".into() } else { "".into() },
                        ]
                    })
                    .collect::<Vec<_>>();
                table::print(&["NAME", "URL", "TOKEN", "SANDBOX"], &rows);
            });
        }
        ProfileCmd::Test { name } => {
            let name = pick_profile(console, &name).await?;
            let r = console.test_connection(&name).await?;
            let ok = r.healthy && r.authenticated;
            emit(json, &r, |r| {
                if ok {
                    let v = r
                        .server
                        .as_ref()
                        .map(|s| s.version.clone())
                        .unwrap_or_default();
                    println!(
                        "{}: healthy, token accepted, {} ms, server {v}",
                        r.profile,
                        r.latency_ms.unwrap_or(0)
                    );
                } else {
                    println!(
                        "{}: FAILED: {}",
                        r.profile,
                        r.error.clone().unwrap_or_default()
                    );
                }
            });
            return Ok(if ok { 0 } else { 1 });
        }
        ProfileCmd::Remove { name } => {
            console.remove_profile(&name).await?;
            emit(json, &serde_json::json!({"removed": name}), |_| {
                println!("removed profile {name}")
            });
        }
    }
    Ok(0)
}

fn read_spec(text: &str) -> anyhow::Result<Value> {
    let raw = if text == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .context("reading --spec from standard input")?;
        s
    } else if let Some(path) = text.strip_prefix('@') {
        std::fs::read_to_string(path).with_context(|| format!("reading --spec file {path}"))?
    } else {
        text.to_owned()
    };
    serde_json::from_str(&raw).map_err(|e| anyhow::anyhow!("--spec is not valid JSON: {e}"))
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

async fn resource_cmd(
    console: &Console,
    profile: &Option<String>,
    json: bool,
    kind: ResourceKind,
    cmd: ResourceCmd,
) -> anyhow::Result<u8> {
    let profile = pick_profile(console, profile).await?;
    let (write, wait) = match cmd {
        ResourceCmd::List => {
            let items = console.list_resources(&profile, kind).await?;
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
            return Ok(0);
        }
        ResourceCmd::Get { name } => {
            let r = console.get_resource(&profile, kind, &name).await?;
            emit(json, &r, |r| {
                println!("{} {}  ({})", kind, r.name, state_word(r.sync_state));
                match &r.server {
                    Some(s) => println!("server version {} (updated {})", s.version, s.updated_at),
                    None => println!("not on the server yet"),
                }
                match &r.local {
                    Some(l) => println!(
                        "spec: {}",
                        serde_json::to_string_pretty(&l.spec).unwrap_or_default()
                    ),
                    None => println!("deleted locally"),
                }
                if let Some(s) = &r.server {
                    println!("status: {}", s.status);
                }
                if !r.pending_ops.is_empty() {
                    println!("queued operations: {:?}", r.pending_ops);
                }
                println!("cache refreshed: {}", table::time(r.refreshed_at));
            });
            return Ok(0);
        }
        ResourceCmd::Create { name, spec, wait } => (
            Write::Create {
                kind,
                name,
                spec: read_spec(&spec)?,
            },
            wait,
        ),
        ResourceCmd::Update { name, spec, wait } => (
            Write::Update {
                kind,
                name,
                patch: read_spec(&spec)?,
            },
            wait,
        ),
        ResourceCmd::Apply { name, spec, wait } => (
            Write::Apply {
                kind,
                name,
                spec: read_spec(&spec)?,
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
    let op = console.enqueue(&profile, write).await?;
    if !wait.wait {
        emit(json, &op, |op| {
            println!(
                "queued #{}: {} {} {} (saved locally; run `switchyard sync` to send)",
                op.id,
                op.op.as_str(),
                op.kind,
                op.name
            )
        });
        return Ok(0);
    }
    let timeout = parse_duration(&wait.timeout)?;
    let sync_result = run_sync(console, &profile, true, Some(timeout), !json).await;
    let op = console.op(op.id).await?;
    emit(json, &op, |op| {
        println!(
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
        OpState::Done => 0,
        OpState::NeedsAttention => 3,
        _ => 4,
    })
}

fn describe_state(op: &OutboxOp) -> String {
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

async fn outbox_cmd(
    console: &Console,
    profile: &str,
    json: bool,
    cmd: OutboxCmd,
) -> anyhow::Result<u8> {
    match cmd {
        OutboxCmd::List { all } => {
            let states = if all {
                vec![
                    OpState::Pending,
                    OpState::Sending,
                    OpState::NeedsAttention,
                    OpState::Done,
                    OpState::Discarded,
                    OpState::Superseded,
                ]
            } else {
                vec![]
            };
            let ops = console
                .list_outbox(OutboxFilter {
                    profile: Some(profile.to_owned()),
                    states,
                    ..Default::default()
                })
                .await?;
            emit(json, &ops, |ops| {
                let rows = ops
                    .iter()
                    .map(|o| {
                        vec![
                            o.id.to_string(),
                            o.op.as_str().to_owned(),
                            format!("{}/{}", o.kind, o.name),
                            o.state.as_str().to_owned(),
                            o.attempts.to_string(),
                            table::time(Some(o.created_at)),
                            o.last_error
                                .as_ref()
                                .map(|e| e.message.clone())
                                .unwrap_or_default(),
                        ]
                    })
                    .collect::<Vec<_>>();
                table::print(
                    &[
                        "ID",
                        "OP",
                        "RESOURCE",
                        "STATE",
                        "ATTEMPTS",
                        "QUEUED",
                        "LAST ERROR",
                    ],
                    &rows,
                );
            });
        }
        OutboxCmd::Show { id } => {
            let op = console.op(id).await?;
            let conflict = if op.last_error.as_ref().and_then(|e| e.status) == Some(412) {
                Some(console.conflict(id).await?)
            } else {
                None
            };
            let value = serde_json::json!({"op": op, "conflict": conflict});
            emit(json, &value, |_| {
                println!(
                    "#{} {} {}/{}: {}",
                    op.id,
                    op.op.as_str(),
                    op.kind,
                    op.name,
                    describe_state(&op)
                );
                println!("idempotency key: {}", op.idempotency_key);
                println!(
                    "if-match: {}",
                    op.if_match
                        .map(|v| v.to_string())
                        .unwrap_or_else(|| "-".into())
                );
                println!("body: {}", op.body);
                if let Some(c) = &conflict {
                    println!(
                        "\nconflict (the server changed since you edited version {}):",
                        c.base_version.unwrap_or(0)
                    );
                    println!("  base:   {}", c.base.clone().unwrap_or(Value::Null));
                    println!("  mine:   {}", c.mine.clone().unwrap_or(Value::Null));
                    match &c.theirs {
                        Some(t) => println!(
                            "  theirs: {} (version {}{})",
                            t.spec,
                            t.version,
                            if c.theirs_from_cache {
                                ", from cache"
                            } else {
                                ""
                            }
                        ),
                        None => println!("  theirs: (absent on the server)"),
                    }
                    if !c.conflicting_fields.is_empty() {
                        println!("  both changed: {}", c.conflicting_fields.join(", "));
                    }
                    println!(
                        "\nresolve: `switchyard outbox retry {id}` (re-apply mine on their version) or `switchyard outbox discard {id}`"
                    );
                }
            });
        }
        OutboxCmd::Retry { id, new_key } => {
            let op = if new_key {
                console.retry_as_new(id).await?
            } else {
                console.retry(id).await?
            };
            emit(json, &op, |op| {
                if op.id == id {
                    println!("#{id} queued again with the same idempotency key");
                } else {
                    println!(
                        "#{id} replaced by #{} (new key, If-Match {})",
                        op.id,
                        op.if_match
                            .map(|v| v.to_string())
                            .unwrap_or_else(|| "-".into())
                    );
                }
            });
        }
        OutboxCmd::Discard { id } => {
            let op = console.discard(id).await?;
            emit(json, &op, |op| {
                println!("#{} discarded; the cache shows server truth again", op.id)
            });
        }
    }
    Ok(0)
}

async fn run_sync(
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
                        eprint!("\r{line}   ");
                        let _ = std::io::stderr().flush();
                    } else if last_line.elapsed().as_secs() >= 2 {
                        eprintln!("{line}");
                        last_line = std::time::Instant::now();
                    }
                }
                Event::Connectivity {
                    online: false,
                    detail,
                    ..
                } if show_progress => {
                    eprintln!(
                        "{}sync: server unreachable, retrying with backoff ({})",
                        if tty { "\r" } else { "" },
                        detail.unwrap_or_default()
                    );
                }
                Event::SyncFinished(_) => break,
                _ => {}
            }
        }
        if tty && show_progress {
            eprintln!();
        }
    });
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
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), progress).await;
    result
}

async fn sync(
    console: &Console,
    profile: &str,
    json: bool,
    until_drained: bool,
    timeout: Option<std::time::Duration>,
) -> anyhow::Result<u8> {
    let report = run_sync(console, profile, until_drained, timeout, !json).await?;
    emit(json, &report, |r| {
        println!(
            "{}: {} confirmed, {} need attention, {} still pending ({} attempts, {} ms)",
            r.profile,
            r.done,
            r.counts.needs_attention,
            r.counts.pending + r.counts.sending,
            r.attempts,
            r.elapsed_ms
        );
        if r.counts.needs_attention > 0 {
            println!("see `switchyard outbox list` and `switchyard outbox show ID`");
        }
    });
    Ok(match report.outcome {
        SyncOutcome::Drained => 0,
        SyncOutcome::NeedsAttention => 3,
        SyncOutcome::Incomplete if report.counts.needs_attention > 0 => 3,
        SyncOutcome::Incomplete => 4,
    })
}
