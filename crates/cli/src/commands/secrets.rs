//! `switchyard targets secrets | rotate-secret | expire-secret`: a target's signing secrets and
//! the steps of a rotation (docs/rotation.md). Rotations and expiries are keyed writes queued
//! in the console's data dir and sent at once; a rotation's new value is printed once, from the
//! answer, and never stored.

use serde_json::json;
use switchyard_core::protocol_secrets::RotateSecretRequest;
use switchyard_core::secret_ops::{SecretOp, SecretSent, SecretWrite};
use switchyard_core::*;

use crate::args::{ExpireSecretArgs, KeyedArgs, RotateSecretArgs, parse_duration};
use crate::{Exit, emit, table};

pub async fn list(
    console: &Console,
    profile: &str,
    json: bool,
    name: &str,
) -> anyhow::Result<Exit> {
    let items = console.signing_secrets(profile, name).await?;
    let now = chrono::Utc::now();
    emit(json, &items, |items| {
        let rows: Vec<Vec<String>> = items
            .iter()
            .map(|s| {
                let state = match s.expires_at {
                    None => "valid".to_owned(),
                    Some(at) if at > now => format!("valid, expires {}", at.to_rfc3339()),
                    Some(at) => format!("expired {}", at.to_rfc3339()),
                };
                vec![s.id.clone(), s.created_at.to_rfc3339(), state]
            })
            .collect();
        table::print(&["ID", "CREATED", "STATE"], &rows);
    });
    Ok(Exit::Ok)
}

pub async fn rotate(
    console: &Console,
    profile: &str,
    json: bool,
    args: RotateSecretArgs,
) -> anyhow::Result<Exit> {
    let overlap_seconds = args
        .overlap
        .as_deref()
        .map(parse_duration)
        .transpose()?
        .map(|d| d.as_secs() as i64);
    let request = RotateSecretRequest {
        overlap_seconds,
        force: args.force.then_some(true),
    };
    let write = SecretWrite::Rotate(request);
    let sent = send(console, profile, &args.name, write, &args.keyed).await?;
    report(json, &sent)
}

pub async fn expire(
    console: &Console,
    profile: &str,
    json: bool,
    args: ExpireSecretArgs,
) -> anyhow::Result<Exit> {
    let write = SecretWrite::Expire { secret_id: args.id };
    let sent = send(console, profile, &args.name, write, &args.keyed).await?;
    report(json, &sent)
}

async fn send(
    console: &Console,
    profile: &str,
    target: &str,
    write: SecretWrite,
    keyed: &KeyedArgs,
) -> anyhow::Result<SecretSent> {
    let timeout = parse_duration(&keyed.timeout)?;
    let op = console
        .enqueue_secret_op(profile, target, write, keyed.key.clone())
        .await?;
    Ok(console.send_secret_op(op.id, timeout).await?)
}

fn report(json: bool, sent: &SecretSent) -> anyhow::Result<Exit> {
    let op = &sent.op;
    if json {
        // The value is in this output only: it is shown once.
        outln!(
            "{}",
            serde_json::to_string_pretty(&json!({"op": op, "value": sent.value}))?
        );
    } else {
        outln!("{}", describe(sent));
    }
    Ok(match op.state {
        ActionState::Done => Exit::Ok,
        ActionState::NeedsAttention => Exit::NeedsAttention,
        ActionState::Pending => Exit::Incomplete,
    })
}

fn describe(sent: &SecretSent) -> String {
    let op = &sent.op;
    let what = match (&op.secret_id, op.action) {
        (Some(id), _) => format!("expire {id} of {}", op.target),
        (None, _) => format!("rotate the signing secret of {}", op.target),
    };
    let head = format!("#{} {what}", op.id);
    match op.state {
        ActionState::Done => done(head, sent),
        ActionState::NeedsAttention => format!(
            "{head}: NEEDS ATTENTION: {}",
            op.last_error
                .as_ref()
                .map(|e| e.message.as_str())
                .unwrap_or("refused")
        ),
        ActionState::Pending => format!(
            "{head}: saved locally, not confirmed yet{}\n  run the same command with --key {} to resume it \
             (the control plane acts once)",
            op.last_error
                .as_ref()
                .map(|e| format!(" ({})", e.message))
                .unwrap_or_default(),
            op.idempotency_key
        ),
    }
}

fn done(head: String, sent: &SecretSent) -> String {
    let op: &SecretOp = &sent.op;
    let result = op.result.clone().unwrap_or_default();
    let Some(new_id) = result["secret"]["id"]
        .as_str()
        .filter(|_| op.secret_id.is_none())
    else {
        return format!("{head}: confirmed");
    };
    let mut out = format!("{head}: confirmed; new secret {new_id}");
    match &sent.value {
        Some(value) => out.push_str(&format!(
            "\n  value (shown once, not stored; give it to the receiver now): {value}"
        )),
        None => out.push_str("\n  value: already shown when the rotation was confirmed"),
    }
    for p in result["previous"].as_array().into_iter().flatten() {
        out.push_str(&format!(
            "\n  {} keeps signing until {}",
            p["id"].as_str().unwrap_or("?"),
            p["expires_at"].as_str().unwrap_or("?")
        ));
    }
    out.push_str(&format!(
        "\nnext: verify with `switchyard targets test {t} --secret {new_id}`, then promote with \
         `switchyard targets expire-secret {t} OLD_ID` (or roll back: `… expire-secret {t} {new_id}`)",
        t = op.target
    ));
    out
}
