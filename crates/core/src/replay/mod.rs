//! Replay-session writes through the outbox. Starting and cancelling a replay are writes:
//! each becomes a row of `replay_outbox` committed locally first (works offline), then sent.
//!
//! Exactly once: a start's session id is minted ONCE, when the row is committed, and every
//! resend is `PUT /v1/replays/{session_id}` with the same body (the server answers `200`
//! with the same session, never a second one). Enqueueing the same `session_id` again
//! returns the existing row, so a double click on a dialog holding one draft id, a retry
//! or a restart after a crash never makes a second session. A cancel carries an
//! `Idempotency-Key` minted once, and there is at most one cancel row per session.
//! Two processes sending one row at once is harmless for the same reasons.
//!
//! Here: the rows, reading them and sending them; `enqueue`: queuing a start or a cancel.

mod enqueue;

use std::time::Duration;

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use switchyard_protocol::replay::{ReplayDryRun, ReplayRequest, ReplaySelection};

use crate::Console;
use crate::action::{self, ActionState, Queued, op_error};
use crate::audit::Audit;
use crate::client::SendResult;
use crate::error::{CoreError, Result};
use crate::types::{OpError, Origin};
pub use enqueue::new_session_id;

/// What the operator asks for when starting a replay.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReplayStart {
    /// The session id to use. Leave it empty to have one minted; a caller that may submit
    /// twice (a dialog, a script that retries) mints one draft id and passes it every time.
    pub session_id: Option<String>,
    pub selection: ReplaySelection,
    /// Re-deliveries started per second (none = no limit).
    pub rate_per_s: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, sqlx::Type)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
#[sqlx(type_name = "TEXT", rename_all = "snake_case")]
pub enum ReplayAction {
    Start,
    Cancel,
}

/// The state of a replay write: the state every keyed action of the console shares.
pub type ReplayOpState = ActionState;

impl ReplayAction {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Start => "start",
            Self::Cancel => "cancel",
        }
    }
}

/// One queued replay write.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReplayOp {
    pub id: i64,
    pub profile: String,
    pub action: ReplayAction,
    pub session_id: String,
    /// The request body (a start's `ReplayRequest`; `null` for a cancel).
    pub body: Value,
    pub idempotency_key: String,
    pub state: ReplayOpState,
    /// Sends started so far, counted as each request leaves (0 = saved locally, never sent).
    pub attempts: u32,
    pub last_error: Option<OpError>,
    /// The server's answer once done (the session).
    pub result: Option<Value>,
    pub next_attempt_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
    /// Who queued it.
    #[serde(default)]
    pub origin: Origin,
}

/// What [`Console::enqueue_replay_start_with`] did.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReplayEnqueued {
    pub op: ReplayOp,
    /// The session id already named this start: nothing new was queued.
    pub replayed: bool,
}

const COLUMNS: &str = "id, profile, action, session_id, body, idempotency_key, state, attempts, last_error, \
    result, next_attempt_at, created_at, updated_at, origin";
const TABLE: action::Table = action::Table {
    name: "replay_outbox",
    columns: COLUMNS,
};

/// A `replay_outbox` row as stored.
#[derive(sqlx::FromRow)]
struct ReplayRow {
    id: i64,
    profile: String,
    action: ReplayAction,
    session_id: String,
    body: Option<String>,
    idempotency_key: String,
    state: ReplayOpState,
    attempts: i64,
    last_error: Option<String>,
    result: Option<String>,
    next_attempt_at: i64,
    created_at: i64,
    updated_at: i64,
    origin: Option<String>,
}

impl TryFrom<ReplayRow> for ReplayOp {
    type Error = CoreError;

    fn try_from(r: ReplayRow) -> Result<Self> {
        let parse = |text: Option<String>| -> Option<Value> {
            text.and_then(|s| serde_json::from_str(&s).ok())
        };
        let origin = match r.origin {
            None => Origin::Console,
            Some(text) => serde_json::from_str(&text)
                .map_err(|_| CoreError::storage("replay outbox row has an unknown origin"))?,
        };
        Ok(ReplayOp {
            id: r.id,
            profile: r.profile,
            action: r.action,
            session_id: r.session_id,
            body: parse(r.body).unwrap_or(Value::Null),
            idempotency_key: r.idempotency_key,
            state: r.state,
            attempts: r.attempts as u32,
            last_error: parse(r.last_error).and_then(|v| serde_json::from_value(v).ok()),
            result: parse(r.result),
            next_attempt_at: (r.state == ReplayOpState::Pending).then_some(r.next_attempt_at),
            created_at: r.created_at,
            updated_at: r.updated_at,
            origin,
        })
    }
}

impl Queued for ReplayOp {
    fn id(&self) -> i64 {
        self.id
    }

    fn due_at(&self) -> Option<i64> {
        self.next_attempt_at
    }
}

/// Whether `key` is the session id of a queued replay start (a caller's key names one write,
/// whichever outbox holds it).
pub(crate) async fn key_names_replay(
    tx: &mut sqlx::Transaction<'_, sqlx::Sqlite>,
    key: &str,
) -> Result<bool> {
    let found: Option<i64> = sqlx::query_scalar(
        "SELECT id FROM replay_outbox WHERE action = 'start' AND session_id = ? LIMIT 1",
    )
    .bind(key)
    .fetch_optional(&mut **tx)
    .await?;
    Ok(found.is_some())
}

impl Console {
    /// Tells subscribers (the desktop app's badges) that a replay write moved.
    fn announce(&self, op: &ReplayOp) {
        self.emit(crate::Event::ReplayWrite {
            profile: op.profile.clone(),
            op_id: op.id,
            session_id: op.session_id.clone(),
            state: op.state,
            attempts: op.attempts,
        });
    }

    /// Records that `op` is being handed to the server (its attempt count grows before the
    /// request leaves, so "sent" shows while the server works on it). `None` when another
    /// process already recorded its outcome.
    async fn mark_sending(&self, op: &ReplayOp) -> Result<Option<ReplayOp>> {
        let row: Option<ReplayRow> =
            action::mark_sent(&self.inner.writer, &TABLE, op.id, self.now()).await?;
        let Some(row) = row else { return Ok(None) };
        let op = ReplayOp::try_from(row)?;
        self.announce(&op);
        Ok(Some(op))
    }

    /// Replay writes of a profile, newest first.
    pub async fn replay_ops(&self, profile: &str) -> Result<Vec<ReplayOp>> {
        let rows: Vec<ReplayRow> = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM replay_outbox WHERE profile = ? ORDER BY id DESC LIMIT 200"
        ))
        .bind(profile)
        .fetch_all(&self.inner.pool)
        .await?;
        rows.into_iter().map(ReplayOp::try_from).collect()
    }

    /// The queued start of session `session_id` in `profile`, if this console queued one.
    pub async fn replay_start(&self, profile: &str, session_id: &str) -> Result<Option<ReplayOp>> {
        let row: Option<ReplayRow> = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM replay_outbox WHERE profile = ? AND action = 'start' AND session_id = ?"
        ))
        .bind(profile)
        .bind(session_id)
        .fetch_optional(&self.inner.pool)
        .await?;
        row.map(ReplayOp::try_from).transpose()
    }

    pub async fn replay_op(&self, id: i64) -> Result<ReplayOp> {
        let row: ReplayRow =
            sqlx::query_as(&format!("SELECT {COLUMNS} FROM replay_outbox WHERE id = ?"))
                .bind(id)
                .fetch_optional(&self.inner.pool)
                .await?
                .ok_or_else(|| CoreError::not_found(format!("replay operation {id}")))?;
        row.try_into()
    }

    /// How many dead deliveries a replay of `selection` would take now (creates nothing).
    pub async fn replay_dry_run(&self, profile: &str, selection: ReplaySelection) -> Result<u64> {
        let body = serde_json::to_value(ReplayRequest {
            selection,
            rate_per_s: None,
            dry_run: true,
        })
        .expect("request serializes");
        // A dry run creates nothing, so a throwaway id is fine.
        let path = format!("/v1/replays/dry-{}", uuid::Uuid::new_v4().simple());
        match self
            .client(profile)
            .await?
            .send_to(Method::PUT, &path, &body, None)
            .await
        {
            SendResult::Answered(a) if a.status == 200 => {
                let dry: ReplayDryRun = serde_json::from_value(a.body.unwrap_or_default())
                    .map_err(|e| {
                        CoreError::server(200, None, format!("unreadable dry-run answer: {e}"))
                    })?;
                Ok(dry.count)
            }
            SendResult::Answered(a) => Err(answer_error(a.status, a.body.as_ref())),
            SendResult::Transport(message) => Err(CoreError::Offline {
                profile: profile.to_owned(),
                message,
            }),
        }
    }

    /// Sends the profile's pending replay writes until each is confirmed or needs
    /// attention, retrying transient failures (same session id / same key) with the core's
    /// full-jitter backoff, for at most `deadline`. Returns the rows it touched.
    pub async fn sync_replays(&self, profile: &str, deadline: Duration) -> Result<Vec<ReplayOp>> {
        let pending = || -> action::Step<'_, Vec<ReplayOp>> {
            Box::pin(async move {
                let rows: Vec<ReplayRow> = sqlx::query_as(&format!(
                    "SELECT {COLUMNS} FROM replay_outbox WHERE profile = ? AND state = 'pending' ORDER BY id"
                ))
                .bind(profile)
                .fetch_all(&self.inner.pool)
                .await?;
                rows.into_iter().map(ReplayOp::try_from).collect()
            })
        };
        let send =
            |op| -> action::Step<'_, ReplayOp> { Box::pin(self.send_replay_op(profile, op)) };
        action::drain(deadline, || self.now(), pending, send).await
    }

    async fn send_replay_op(&self, profile: &str, op: ReplayOp) -> Result<ReplayOp> {
        let client = self.client(profile).await?;
        let Some(op) = self.mark_sending(&op).await? else {
            return self.replay_op(op.id).await;
        };
        let result = match op.action {
            ReplayAction::Start => {
                client
                    .send_to(
                        Method::PUT,
                        &format!("/v1/replays/{}", op.session_id),
                        &op.body,
                        None,
                    )
                    .await
            }
            ReplayAction::Cancel => {
                client
                    .send_to(
                        Method::POST,
                        &format!("/v1/replays/{}/cancel", op.session_id),
                        &Value::Null,
                        Some(&op.idempotency_key),
                    )
                    .await
            }
        };
        let now = self.now();
        // `attempts` was counted by `mark_sending`, before the request left.
        let settled = self.settle_action(result, op.attempts, now, profile)?;
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        let kept = settled.answer.as_ref().map(Value::to_string);
        let row: Option<ReplayRow> =
            action::record(&mut tx, &TABLE, op.id, &settled, kept, now).await?;
        let (state, error) = (settled.state, &settled.error);
        let Some(row) = row else {
            // Another process recorded the outcome first; its record stands.
            tx.commit().await?;
            return self.replay_op(op.id).await;
        };
        if state != ReplayOpState::Pending {
            let action = match op.action {
                ReplayAction::Start => "replay.start",
                ReplayAction::Cancel => "replay.cancel",
            };
            let mut entry = Audit::new(now, &self.inner.opts.actor, action, state.as_str())
                .profile(profile)
                .resource(format!("replay/{}", op.session_id));
            entry.detail = error.as_ref().map(|e| e.message.clone());
            entry.record(&mut tx).await?;
        }
        tx.commit().await?;
        let op = ReplayOp::try_from(row)?;
        self.announce(&op);
        Ok(op)
    }
}

fn answer_error(status: u16, body: Option<&Value>) -> CoreError {
    let error = op_error(status, body, false);
    match status {
        400 | 422 => CoreError::invalid("replay request", error.message),
        _ => CoreError::Server {
            status,
            message: error.message,
            problem: error.problem.map(Box::new),
        },
    }
}
