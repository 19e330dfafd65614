//! What the keyed action outboxes share (replay writes in `replay`, test webhooks in
//! `target_test`, signing-secret writes in `secret_ops`, certificate activations in
//! `cert_ops`, fixes and retirements in `recovery::ops`): the state of a queued action, how one answer of the server moves it, and
//! the loops that send a profile's pending actions, or one of them, until settled or time runs out.
//! Each action is a row committed locally before it is sent, with a key minted once, so every
//! resend is the same request and the server's stored answer settles it exactly once.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use sqlx::sqlite::SqliteRow;
use sqlx::{FromRow, Sqlite, SqlitePool, Transaction};

use crate::Console;
use crate::client::SendResult;
use crate::error::{CoreError, Result};
use crate::retry::{AttemptOutcome, RetryPolicy, classify_status, parse_retry_after};
use crate::types::OpError;

/// `pending` (saved locally, not yet confirmed) → `done` (the server confirmed) or
/// `needs_attention` (the server refused it; the row's error says why).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, sqlx::Type)]
#[serde(rename_all = "snake_case")]
#[sqlx(type_name = "TEXT", rename_all = "snake_case")]
pub enum ActionState {
    Pending,
    Done,
    NeedsAttention,
}

impl ActionState {
    /// As stored and in the audit log's outcome.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Done => "done",
            Self::NeedsAttention => "needs_attention",
        }
    }
}

/// How one send of an action ended, after the retry rules.
pub(crate) struct Settled {
    pub state: ActionState,
    pub error: Option<OpError>,
    /// The server's answer when done.
    pub answer: Option<Value>,
    /// When a still-pending action is due again.
    pub next_attempt_at: i64,
}

impl Console {
    /// [`settle`] with this console's retry policy and randomness; the server refusing the
    /// token is `CoreError::Unauthorized` for `profile`.
    pub(crate) fn settle_action(
        &self,
        result: SendResult,
        attempts: u32,
        now: i64,
        profile: &str,
    ) -> Result<Settled> {
        settle(
            result,
            attempts,
            now,
            &self.inner.opts.retry,
            self.inner.opts.rng.as_ref(),
        )
        .ok_or_else(|| CoreError::Unauthorized {
            profile: profile.to_owned(),
        })
    }
}

/// Classifies one send of an action that has now been sent `attempts` times; `None` when the
/// server refused the token (the caller stops and says so). A transient failure stays pending
/// (same key) until the policy's attempts are spent, then needs a person.
pub(crate) fn settle(
    result: SendResult,
    attempts: u32,
    now: i64,
    policy: &RetryPolicy,
    rng: &dyn crate::RandomSource,
) -> Option<Settled> {
    let (state, error, answer, retry_after) = match result {
        SendResult::Transport(message) => (
            ActionState::Pending,
            Some(OpError {
                status: None,
                problem: None,
                message,
                transient: true,
            }),
            None,
            None,
        ),
        SendResult::Answered(a) => {
            let code = a
                .body
                .as_ref()
                .and_then(|b| b.get("code"))
                .and_then(Value::as_str);
            let retry_after = a
                .retry_after
                .as_deref()
                .and_then(|v| parse_retry_after(v, now));
            match classify_status(a.status, code, retry_after) {
                AttemptOutcome::Success => (ActionState::Done, None, a.body, None),
                AttemptOutcome::Unauthorized => return None,
                AttemptOutcome::Transient { retry_after_ms } => (
                    ActionState::Pending,
                    Some(op_error(a.status, a.body.as_ref(), true)),
                    None,
                    retry_after_ms,
                ),
                AttemptOutcome::Permanent => (
                    ActionState::NeedsAttention,
                    Some(op_error(a.status, a.body.as_ref(), false)),
                    None,
                    None,
                ),
            }
        }
    };
    let state = if state == ActionState::Pending && attempts >= policy.max_attempts {
        ActionState::NeedsAttention
    } else {
        state
    };
    let backoff = retry_after
        .map(|ms| ms.min(policy.max_retry_after_ms))
        .unwrap_or_else(|| policy.backoff_ms(attempts, rng));
    Some(Settled {
        state,
        error,
        answer,
        next_attempt_at: now + backoff as i64,
    })
}

/// One keyed-action outbox's table and the columns its rows are read with. Each has
/// `id, attempts, state, last_error, result, next_attempt_at, updated_at`.
pub(crate) struct Table {
    pub name: &'static str,
    pub columns: &'static str,
}

/// Counts a send before the request leaves (so "sent" shows while the server works on it).
/// `None`: the row is no longer pending (another process settled it).
pub(crate) async fn mark_sent<R>(
    writer: &SqlitePool,
    table: &Table,
    id: i64,
    now: i64,
) -> Result<Option<R>>
where
    R: for<'r> FromRow<'r, SqliteRow> + Send + Unpin,
{
    let sql = format!(
        "UPDATE {} SET attempts = attempts + 1, updated_at = ? WHERE id = ? AND state = 'pending' RETURNING {}",
        table.name, table.columns
    );
    Ok(sqlx::query_as(&sql)
        .bind(now)
        .bind(id)
        .fetch_optional(writer)
        .await?)
}

/// Records how a send settled (`result`: the answer as the row keeps it), in `tx`, if the row
/// is still pending. `None`: another process recorded the outcome first; its record stands.
pub(crate) async fn record<R>(
    tx: &mut Transaction<'_, Sqlite>,
    table: &Table,
    id: i64,
    settled: &Settled,
    result: Option<String>,
    now: i64,
) -> Result<Option<R>>
where
    R: for<'r> FromRow<'r, SqliteRow> + Send + Unpin,
{
    let sql = format!(
        "UPDATE {} SET state = ?, last_error = ?, result = COALESCE(?, result), next_attempt_at = ?, \
         updated_at = ? WHERE id = ? AND state = 'pending' RETURNING {}",
        table.name, table.columns
    );
    let error = settled
        .error
        .as_ref()
        .map(|e| serde_json::to_string(e).expect("error serializes"));
    Ok(sqlx::query_as(&sql)
        .bind(settled.state)
        .bind(error)
        .bind(result)
        .bind(settled.next_attempt_at)
        .bind(now)
        .bind(id)
        .fetch_optional(&mut **tx)
        .await?)
}

/// Whether `key` already names a write in another of the console's outboxes (one key names
/// one write, whichever outbox holds it). `own`: the table the caller inserts into, whose
/// conflicts its own `ON CONFLICT` decides.
pub(crate) async fn key_used_elsewhere(
    tx: &mut Transaction<'_, Sqlite>,
    key: &str,
    own: &Table,
) -> Result<bool> {
    let found: Option<i64> = sqlx::query_scalar(
        "SELECT 1 FROM outbox WHERE idempotency_key = ?1 AND ?2 <> 'outbox' \
         UNION ALL SELECT 1 FROM replay_outbox WHERE (idempotency_key = ?1 OR session_id = ?1) AND ?2 <> 'replay_outbox' \
         UNION ALL SELECT 1 FROM target_tests WHERE idempotency_key = ?1 AND ?2 <> 'target_tests' \
         UNION ALL SELECT 1 FROM secret_ops WHERE idempotency_key = ?1 AND ?2 <> 'secret_ops' \
         UNION ALL SELECT 1 FROM cert_ops WHERE idempotency_key = ?1 AND ?2 <> 'cert_ops' \
         UNION ALL SELECT 1 FROM recovery_ops WHERE idempotency_key = ?1 AND ?2 <> 'recovery_ops' LIMIT 1",
    )
    .bind(key)
    .bind(own.name)
    .fetch_optional(&mut **tx)
    .await?;
    Ok(found.is_some())
}

/// The server's refusal as an outbox error: its problem kept whole (`code`, `field`).
pub(crate) fn op_error(status: u16, body: Option<&Value>, transient: bool) -> OpError {
    let problem = body.and_then(|b| serde_json::from_value(b.clone()).ok());
    let message = match &problem {
        Some(p) => format!("HTTP {status}: {p}"),
        None => format!("HTTP {status}"),
    };
    OpError {
        status: Some(status),
        problem,
        message,
        transient,
    }
}

/// A queued action as the drain loop sees it.
pub(crate) trait Queued {
    fn id(&self) -> i64;
    /// When it is due, while it is pending; `None` once settled.
    fn due_at(&self) -> Option<i64>;
}

/// A boxed, sendable future of a store read or a send (the drain loop's two steps).
pub(crate) type Step<'a, T> = Pin<Box<dyn Future<Output = Result<T>> + Send + 'a>>;

/// Sends pending actions until each is settled or `deadline` would pass while waiting for the
/// next one's backoff. `pending` lists the rows to send (read again every round: another
/// process may have settled some); `send` sends one and returns the row as it now stands.
/// Returns every row it touched, by id.
pub(crate) async fn drain<'a, Op: Queued + Send>(
    deadline: Duration,
    now: impl Fn() -> i64,
    pending: impl Fn() -> Step<'a, Vec<Op>>,
    send: impl Fn(Op) -> Step<'a, Op>,
) -> Result<Vec<Op>> {
    let started = Instant::now();
    let mut touched = BTreeMap::new();
    loop {
        let ops = pending().await?;
        if ops.is_empty() {
            break;
        }
        let mut soonest = i64::MAX;
        for op in ops {
            let at = now();
            let due = op.due_at().unwrap_or(at);
            if due > at {
                soonest = soonest.min(due);
                continue;
            }
            let op = send(op).await?;
            if let Some(next) = op.due_at() {
                soonest = soonest.min(next);
            }
            touched.insert(op.id(), op);
        }
        if soonest == i64::MAX {
            continue;
        }
        let wait = (soonest - now()).max(0) as u64;
        if started.elapsed() + Duration::from_millis(wait) > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(wait)).await;
    }
    Ok(touched.into_values().collect())
}

/// A keyed action's row as [`send_one`] reads it.
pub(crate) trait Row {
    fn profile(&self) -> &str;
    fn state(&self) -> ActionState;
    fn created_at(&self) -> i64;
    fn next_attempt_at(&self) -> i64;
}

/// How [`send_one`] ended.
pub(crate) enum SendOne<R, T> {
    /// A send of this call settled it.
    Settled(T),
    /// Left as it stands: settled before (here or by another process), the control plane
    /// unreachable, or the deadline came before the next resend.
    AsItIs(R),
    /// Queued longer ago than the control plane keeps keys: a resend could act twice, so
    /// the caller hands it to a person ([`needs_attention`]).
    Forgotten(R),
}

/// Sends one queued action (same key every time) until a send settles it or `deadline` would
/// pass while waiting for the next resend. `load` reads the row again before every send
/// (another process may have settled it); `send` sends once, `Some` once settled.
pub(crate) async fn send_one<'a, R: Row, T>(
    console: &'a Console,
    deadline: Duration,
    load: impl Fn() -> Step<'a, R>,
    send: impl Fn(R) -> Step<'a, Option<T>>,
) -> Result<SendOne<R, T>> {
    let started = Instant::now();
    let first = load().await?;
    let retention_ms = match console.client(first.profile()).await?.info().await {
        Ok(info) => (info.idempotency_retention_seconds as i64).saturating_mul(1000),
        // Unreachable: the row stays queued, and the caller says how to resume it.
        Err(CoreError::Offline { .. }) => return Ok(SendOne::AsItIs(first)),
        Err(e) => return Err(e),
    };
    let mut tried = false;
    loop {
        let row = load().await?;
        if row.state() != ActionState::Pending {
            return Ok(SendOne::AsItIs(row));
        }
        if console.now() - row.created_at() > retention_ms {
            return Ok(SendOne::Forgotten(row));
        }
        let wait = (row.next_attempt_at() - console.now()).max(0) as u64;
        // A resend due at once (full jitter can draw ~0 ms) is bound by the deadline too:
        // only the first send goes out whatever the deadline.
        if (tried || wait > 0) && started.elapsed() + Duration::from_millis(wait) > deadline {
            return Ok(SendOne::AsItIs(row));
        }
        if wait > 0 {
            tokio::time::sleep(Duration::from_millis(wait)).await;
        }
        tried = true;
        if let Some(settled) = send(row).await? {
            return Ok(SendOne::Settled(settled));
        }
    }
}

/// Moves pending row `id` of `table` to `needs_attention` with `message` (a person decides
/// what a blind resend could not).
pub(crate) async fn needs_attention(
    writer: &SqlitePool,
    table: &Table,
    id: i64,
    message: &str,
    now: i64,
) -> Result<()> {
    let error = OpError {
        status: None,
        problem: None,
        message: message.to_owned(),
        transient: false,
    };
    let sql = format!(
        "UPDATE {} SET state = 'needs_attention', last_error = ?, updated_at = ? \
         WHERE id = ? AND state = 'pending'",
        table.name
    );
    sqlx::query(&sql)
        .bind(serde_json::to_string(&error).expect("error serializes"))
        .bind(now)
        .bind(id)
        .execute(writer)
        .await?;
    Ok(())
}
