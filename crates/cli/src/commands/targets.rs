//! `switchyard targets test NAME`: one signed test webhook, queued like every write (saved
//! locally with its key, then sent), and what the receiver answered.

use switchyard_core::target_test::describe_result;
use switchyard_core::*;

use super::resources::read_json;
use super::sync::run_sync;
use crate::args::{TargetTestArgs, parse_duration};
use crate::{Exit, emit};

pub async fn test(
    console: &Console,
    profile: &str,
    json: bool,
    args: TargetTestArgs,
) -> anyhow::Result<Exit> {
    let timeout = parse_duration(&args.timeout)?;
    let request = TargetTestRequest {
        event_type: args.event_type,
        payload: args
            .payload
            .as_deref()
            .map(|p| read_json(p, "--payload"))
            .transpose()?,
        secret_id: args.secret,
        client_certificate_id: args.cert,
    };
    let op = console
        .enqueue_target_test(profile, &args.name, request, args.key)
        .await?;
    let started = std::time::Instant::now();
    if op.state == ActionState::Pending {
        // The target's own queued writes go first (it may not exist on the server yet).
        let counts = console.pending_counts(profile).await?;
        if counts.pending + counts.sending > 0 {
            run_sync(console, profile, true, Some(timeout), !json).await?;
        }
        let left = timeout.saturating_sub(started.elapsed());
        console.sync_target_tests(profile, left).await?;
    }
    let op = console.target_test(op.id).await?;
    emit(json, &op, |op| outln!("{}", describe(op)));
    Ok(match (&op.state, &op.result) {
        (ActionState::Done, Some(r)) if r.ok => Exit::Ok,
        (ActionState::Done, _) => Exit::TestFailed,
        (ActionState::NeedsAttention, _) => Exit::NeedsAttention,
        (ActionState::Pending, _) => Exit::Incomplete,
    })
}

fn describe(op: &TargetTestOp) -> String {
    let head = format!("test webhook #{} to {}", op.id, op.target);
    match (&op.state, &op.result) {
        (ActionState::Done, Some(r)) => {
            let class = r
                .error_class
                .map(|c| format!(" ({})", c.as_str()))
                .unwrap_or_default();
            format!(
                "{head}: {}{class}\n  webhook-id: {}",
                describe_result(r),
                r.webhook_id
            )
        }
        (ActionState::Done, None) => format!("{head}: confirmed (the answer was unreadable)"),
        (ActionState::NeedsAttention, _) => format!(
            "{head}: NEEDS ATTENTION: {}",
            op.last_error
                .as_ref()
                .map(|e| e.message.as_str())
                .unwrap_or("refused")
        ),
        (ActionState::Pending, _) => format!(
            "{head}: saved locally, not confirmed yet{}\n  run the same command with --key {} to resume it \
             (the receiver gets it once)",
            op.last_error
                .as_ref()
                .map(|e| format!(" ({})", e.message))
                .unwrap_or_default(),
            op.idempotency_key
        ),
    }
}
