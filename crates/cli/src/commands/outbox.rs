//! `switchyard outbox …`: the queued writes, and a person's decisions on them.

use serde_json::Value;
use switchyard_core::*;

use super::resources::describe_state;
use crate::args::OutboxCmd;
use crate::{Exit, emit, table};

pub async fn outbox_cmd(
    console: &Console,
    profile: &str,
    json: bool,
    cmd: OutboxCmd,
) -> anyhow::Result<Exit> {
    match cmd {
        OutboxCmd::List { all } => list(console, profile, json, all).await?,
        OutboxCmd::Show { id } => show(console, json, id).await?,
        OutboxCmd::Retry { id, new_key } => retry(console, json, id, new_key).await?,
        OutboxCmd::Discard { id } => {
            let op = console.discard(id).await?;
            emit(json, &op, |op| {
                outln!("#{} discarded; the cache shows server truth again", op.id)
            });
        }
    }
    Ok(Exit::Ok)
}

/// The profile's queued writes (every state with `--all`), then its recovery writes.
async fn list(console: &Console, profile: &str, json: bool, all: bool) -> anyhow::Result<()> {
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
    emit(json, &ops, |ops| print_ops(ops));
    if !json {
        print_recovery_writes(console, profile, all).await?;
    }
    Ok(())
}

fn print_ops(ops: &[OutboxOp]) {
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
                o.origin.actor("console"),
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
            "BY",
            "LAST ERROR",
        ],
        &rows,
    );
}

/// One queued write, with the three sides of its conflict when the server refused it with
/// 412.
async fn show(console: &Console, json: bool, id: i64) -> anyhow::Result<()> {
    let op = console.op(id).await?;
    let conflict = if op.last_error.as_ref().and_then(|e| e.status) == Some(412) {
        Some(console.conflict(id).await?)
    } else {
        None
    };
    let value = serde_json::json!({"op": op, "conflict": conflict});
    emit(json, &value, |_| {
        outln!(
            "#{} {} {}/{}: {}",
            op.id,
            op.op.as_str(),
            op.kind,
            op.name,
            describe_state(&op)
        );
        outln!("idempotency key: {}", op.idempotency_key);
        outln!(
            "if-match: {}",
            op.if_match
                .map(|v| v.to_string())
                .unwrap_or_else(|| "-".into())
        );
        outln!("body: {}", op.body);
        if let Some(c) = &conflict {
            print_conflict(id, c);
        }
    });
    Ok(())
}

fn print_conflict(id: i64, c: &ConflictView) {
    outln!(
        "\nconflict (the server changed since you edited version {}):",
        c.base_version.unwrap_or(0)
    );
    outln!("  base:   {}", c.base.clone().unwrap_or(Value::Null));
    outln!("  mine:   {}", c.mine.clone().unwrap_or(Value::Null));
    match &c.theirs {
        Some(t) => outln!(
            "  theirs: {} (version {}{})",
            t.spec,
            t.version,
            if c.theirs_from_cache {
                ", from cache"
            } else {
                ""
            }
        ),
        None => outln!("  theirs: (absent on the server)"),
    }
    if !c.conflicting_fields.is_empty() {
        outln!("  both changed: {}", c.conflicting_fields.join(", "));
    }
    outln!(
        "\nresolve: `switchyard outbox retry {id}` (re-apply mine on their version) or `switchyard outbox discard {id}`"
    );
}

/// Queues a write again: under its own key, or (`--new-key`) as a new write on the
/// server's current version.
async fn retry(console: &Console, json: bool, id: i64, new_key: bool) -> anyhow::Result<()> {
    let op = if new_key {
        console.retry_as_new(id).await?
    } else {
        console.retry(id).await?
    };
    emit(json, &op, |op| {
        if op.id == id {
            outln!("#{id} queued again with the same idempotency key");
        } else {
            outln!(
                "#{id} replaced by #{} (new key, If-Match {})",
                op.id,
                op.if_match
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "-".into())
            );
        }
    });
    Ok(())
}

/// Fixes and retirements queued in `recovery_ops` (not yet confirmed, or every one with
/// `--all`): the same pending-writes view, keyed the same way.
async fn print_recovery_writes(console: &Console, profile: &str, all: bool) -> anyhow::Result<()> {
    let ops: Vec<RecoveryOp> = console
        .recovery_ops(profile, 200)
        .await?
        .into_iter()
        .filter(|o| all || o.state != ActionState::Done)
        .collect();
    if ops.is_empty() {
        return Ok(());
    }
    outln!("\nrecovery writes (fixes, retirements):");
    let rows: Vec<Vec<String>> = ops
        .iter()
        .map(|o| {
            vec![
                format!("r{}", o.id),
                format!("{} {}", o.method, o.path),
                o.state.as_str().to_owned(),
                o.attempts.to_string(),
                table::time(Some(o.created_at)),
                o.idempotency_key.clone(),
                o.last_error
                    .as_ref()
                    .map(|e| e.message.clone())
                    .unwrap_or_default(),
            ]
        })
        .collect();
    table::print(
        &[
            "ID",
            "REQUEST",
            "STATE",
            "ATTEMPTS",
            "QUEUED",
            "KEY",
            "LAST ERROR",
        ],
        &rows,
    );
    Ok(())
}
