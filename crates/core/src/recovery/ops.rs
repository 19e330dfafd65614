//! Recovery writes through the outbox (`recovery_ops`): a server finding's fix action, a
//! retirement start (`PUT /v1/retirements/{id}`) and a retirement cancel
//! (`POST /v1/retirements/{id}/cancel`).
//!
//! Each is a row committed locally before anything is sent (works offline), with an
//! Idempotency-Key minted once, at enqueue, and a retirement's id chosen then too; every
//! resend is the same method, path, body and key, so a lost answer, a retry, a second process
//! or a restart makes the control plane act once (it replays its stored answer). A fix first
//! sent longer ago than the server keeps keys is not resent blindly: it needs a person.

use std::time::Duration;

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::{Sqlite, Transaction};

use crate::Console;
use crate::action::{self, ActionState, Queued};
use crate::audit::Audit;
use crate::error::{CoreError, Result};
use crate::types::OpError;

/// What a recovery write does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, sqlx::Type)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
#[sqlx(type_name = "TEXT", rename_all = "snake_case")]
pub enum RecoveryAction {
    /// One of a server finding's fix actions (`subject`: the finding id).
    Fix,
    /// Starts a retirement (`subject`: the retirement id).
    Retire,
    /// Cancels a retirement (`subject`: the retirement id).
    RetireCancel,
}

impl RecoveryAction {
    /// As in the audit log.
    pub fn audit_action(self) -> &'static str {
        match self {
            Self::Fix => "recovery.fix",
            Self::Retire => "retire.start",
            Self::RetireCancel => "retire.cancel",
        }
    }
}

/// One queued recovery write, as the pending-writes view and `switchyard doctor` show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecoveryOp {
    pub id: i64,
    pub profile: String,
    pub action: RecoveryAction,
    /// The finding id (a fix) or the retirement id.
    pub subject: String,
    pub label: String,
    /// The exact request it makes (with `idempotency_key` as its Idempotency-Key).
    pub method: String,
    pub path: String,
    pub body: Option<Value>,
    pub destructive: bool,
    pub idempotency_key: String,
    pub state: ActionState,
    /// Sends started so far, counted as each request leaves (0 = saved locally, never sent).
    pub attempts: u32,
    pub last_error: Option<OpError>,
    /// The server's answer once done.
    pub result: Option<Value>,
    pub next_attempt_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
}

impl Queued for RecoveryOp {
    fn id(&self) -> i64 {
        self.id
    }

    fn due_at(&self) -> Option<i64> {
        self.next_attempt_at
    }
}

const COLUMNS: &str = "id, profile, action, subject, label, method, path, body, destructive, idempotency_key, \
    state, attempts, last_error, result, next_attempt_at, created_at, updated_at";
const TABLE: action::Table = action::Table {
    name: "recovery_ops",
    columns: COLUMNS,
};

#[derive(sqlx::FromRow)]
struct RecoveryRow {
    id: i64,
    profile: String,
    action: RecoveryAction,
    subject: String,
    label: String,
    method: String,
    path: String,
    body: Option<String>,
    destructive: bool,
    idempotency_key: String,
    state: ActionState,
    attempts: i64,
    last_error: Option<String>,
    result: Option<String>,
    next_attempt_at: i64,
    created_at: i64,
    updated_at: i64,
}

impl TryFrom<RecoveryRow> for RecoveryOp {
    type Error = CoreError;

    fn try_from(r: RecoveryRow) -> Result<Self> {
        let unreadable =
            |what: &str| CoreError::storage(format!("recovery operation {}: {what}", r.id));
        let parse = |text: &Option<String>, what: &str| -> Result<Option<Value>> {
            text.as_deref()
                .map(serde_json::from_str)
                .transpose()
                .map_err(|_| unreadable(what))
        };
        let body = parse(&r.body, "body")?;
        let result = parse(&r.result, "result")?;
        let last_error = r
            .last_error
            .as_deref()
            .map(serde_json::from_str)
            .transpose()
            .map_err(|_| unreadable("error"))?;
        Ok(Self {
            id: r.id,
            profile: r.profile,
            action: r.action,
            subject: r.subject,
            label: r.label,
            method: r.method,
            path: r.path,
            body,
            destructive: r.destructive,
            idempotency_key: r.idempotency_key,
            state: r.state,
            attempts: r.attempts as u32,
            last_error,
            result,
            next_attempt_at: (r.state == ActionState::Pending).then_some(r.next_attempt_at),
            created_at: r.created_at,
            updated_at: r.updated_at,
        })
    }
}

/// A recovery write to queue.
pub(crate) struct NewRecoveryOp<'a> {
    pub action: RecoveryAction,
    pub subject: &'a str,
    pub label: &'a str,
    pub method: &'a str,
    pub path: &'a str,
    pub body: Option<&'a Value>,
    pub destructive: bool,
    /// The caller's draft key (a fix); `None` mints one.
    pub key: Option<String>,
}

/// The requests a fix action may make: an ordinary write of this control plane's API.
pub(crate) fn check_request(method: &str, path: &str) -> Result<()> {
    if !matches!(method, "POST" | "PUT" | "PATCH" | "DELETE") {
        return Err(CoreError::invalid(
            "fix action",
            format!("method {method:?} is not a write (POST, PUT, PATCH or DELETE)"),
        ));
    }
    let safe = path.starts_with("/v1/")
        && !path.contains("..")
        && !path.contains("//")
        && path.bytes().all(|b| b.is_ascii_graphic());
    if !safe {
        return Err(CoreError::invalid(
            "fix action",
            format!("path {path:?} is not a path of the control plane's /v1 API"),
        ));
    }
    Ok(())
}

/// A caller's key must be a valid `Idempotency-Key` (1–255 printable ASCII).
pub(crate) fn check_key(key: &str) -> Result<()> {
    if key.is_empty() || key.len() > 255 || !key.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return Err(CoreError::invalid(
            "draft key",
            "must be 1-255 printable ASCII characters",
        ));
    }
    Ok(())
}

impl Console {
    /// Inserts a recovery write, or finds the one its key (a fix) or its retirement id (a
    /// retirement start or cancel) already names. Returns it and whether it is new. The same
    /// key or id for another request is refused and nothing is queued.
    pub(crate) async fn enqueue_recovery(
        &self,
        profile: &str,
        new: NewRecoveryOp<'_>,
    ) -> Result<(RecoveryOp, bool)> {
        check_request(new.method, new.path)?;
        if let Some(key) = &new.key {
            check_key(key)?;
        }
        self.profile(profile).await?;
        let body = new.body.map(Value::to_string);
        let now = self.now();
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        if let Some(row) = existing_recovery(&mut tx, profile, &new).await? {
            return Ok((same_recovery(row, profile, &new, &body)?, false));
        }
        let key = new
            .key
            .clone()
            .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        if action::key_used_elsewhere(&mut tx, &key, &TABLE).await? {
            return Err(CoreError::KeyReused { key });
        }
        let row = self
            .insert_recovery(&mut tx, profile, &new, &body, &key, now)
            .await?;
        tx.commit().await?;
        Ok((row.try_into()?, true))
    }

    /// The row of a new recovery write and its audit entry, in the caller's transaction.
    async fn insert_recovery(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        profile: &str,
        new: &NewRecoveryOp<'_>,
        body: &Option<String>,
        key: &str,
        now: i64,
    ) -> Result<RecoveryRow> {
        let row: RecoveryRow = sqlx::query_as(&format!(
            "INSERT INTO recovery_ops (profile, action, subject, label, method, path, body, destructive, \
             idempotency_key, next_attempt_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) \
             RETURNING {COLUMNS}"
        ))
        .bind(profile)
        .bind(new.action)
        .bind(new.subject)
        .bind(new.label)
        .bind(new.method)
        .bind(new.path)
        .bind(body)
        .bind(new.destructive)
        .bind(key)
        .bind(now)
        .bind(now)
        .bind(now)
        .fetch_one(&mut **tx)
        .await?;
        Audit::new(
            now,
            &self.inner.opts.actor,
            new.action.audit_action(),
            "queued",
        )
        .profile(profile)
        .resource(audit_resource(new.action, new.subject))
        .detail(format!("{} {}: {}", new.method, new.path, new.label))
        .record(tx)
        .await?;
        Ok(row)
    }

    /// One recovery write.
    pub async fn recovery_op(&self, id: i64) -> Result<RecoveryOp> {
        let row: RecoveryRow =
            sqlx::query_as(&format!("SELECT {COLUMNS} FROM recovery_ops WHERE id = ?"))
                .bind(id)
                .fetch_optional(&self.inner.pool)
                .await?
                .ok_or_else(|| CoreError::not_found(format!("recovery operation {id}")))?;
        row.try_into()
    }

    /// The recovery writes of a profile (fixes run, retirements started and cancelled),
    /// newest first, at most `limit`: the Recovery page's "queued fixes" list and the pending
    /// writes view show them with their state.
    pub async fn recovery_ops(&self, profile: &str, limit: u32) -> Result<Vec<RecoveryOp>> {
        let rows: Vec<RecoveryRow> = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM recovery_ops WHERE profile = ? ORDER BY id DESC LIMIT ?"
        ))
        .bind(profile)
        .bind(limit)
        .fetch_all(&self.inner.pool)
        .await?;
        rows.into_iter().map(RecoveryOp::try_from).collect()
    }

    /// The queued write of `action` for retirement `id`, if this console queued one.
    pub(crate) async fn retirement_write(
        &self,
        profile: &str,
        action: RecoveryAction,
        id: &str,
    ) -> Result<Option<RecoveryOp>> {
        let row: Option<RecoveryRow> = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM recovery_ops WHERE profile = ? AND action = ? AND subject = ?"
        ))
        .bind(profile)
        .bind(action)
        .bind(id)
        .fetch_optional(&self.inner.pool)
        .await?;
        row.map(RecoveryOp::try_from).transpose()
    }

    /// Sends the profile's pending recovery writes (same key every time) until each is
    /// confirmed or needs attention, for at most `deadline`, retrying transient failures with
    /// the core's full-jitter backoff. A cancel waits for its retirement's start. The desktop's
    /// sync driver calls this beside `sync_replays`. Returns the rows it touched; none when
    /// the control plane cannot be reached (they stay queued).
    pub async fn sync_recovery(
        &self,
        profile: &str,
        deadline: Duration,
    ) -> Result<Vec<RecoveryOp>> {
        self.drain_recovery(profile, None, deadline).await
    }

    /// Sends one queued recovery write now (see [`Console::sync_recovery`]) and returns it as
    /// it stands: `done`, `needs_attention`, or still `pending` (unreachable: saved locally).
    pub async fn send_recovery_op(&self, id: i64, deadline: Duration) -> Result<RecoveryOp> {
        let op = self.recovery_op(id).await?;
        self.drain_recovery(&op.profile, Some(id), deadline).await?;
        self.recovery_op(id).await
    }

    async fn drain_recovery(
        &self,
        profile: &str,
        only: Option<i64>,
        deadline: Duration,
    ) -> Result<Vec<RecoveryOp>> {
        let retention_ms = match self.client(profile).await?.info().await {
            Ok(info) => (info.idempotency_retention_seconds as i64).saturating_mul(1000),
            // Unreachable: everything stays queued; the next sync sends it.
            Err(CoreError::Offline { .. }) => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let pending = || -> action::Step<'_, Vec<RecoveryOp>> {
            Box::pin(async move {
                let rows: Vec<RecoveryRow> = sqlx::query_as(&format!(
                    "SELECT {COLUMNS} FROM recovery_ops r WHERE profile = ?1 AND state = 'pending' \
                     AND (?2 IS NULL OR id = ?2) AND NOT (action = 'retire_cancel' AND EXISTS ( \
                     SELECT 1 FROM recovery_ops s WHERE s.profile = r.profile AND s.action = 'retire' \
                     AND s.subject = r.subject AND s.state = 'pending')) ORDER BY id"
                ))
                .bind(profile)
                .bind(only)
                .fetch_all(&self.inner.pool)
                .await?;
                rows.into_iter().map(RecoveryOp::try_from).collect()
            })
        };
        let send =
            |op| -> action::Step<'_, RecoveryOp> { Box::pin(self.send_once(op, retention_ms)) };
        action::drain(deadline, || self.now(), pending, send).await
    }

    async fn send_once(&self, op: RecoveryOp, retention_ms: i64) -> Result<RecoveryOp> {
        // A fix sent before, longer ago than the server keeps keys: the server may have
        // forgotten the key and would act again. (A retirement is named by its id, which
        // the server keeps with the retirement, so its PUT is safe to resend.)
        if op.action == RecoveryAction::Fix
            && op.attempts > 0
            && self.now() - op.created_at > retention_ms
        {
            return self.fix_forgotten(op).await;
        }
        let marked: Option<RecoveryRow> =
            action::mark_sent(&self.inner.writer, &TABLE, op.id, self.now()).await?;
        let Some(marked) = marked else {
            // Another process settled it meanwhile.
            return self.recovery_op(op.id).await;
        };
        let op = RecoveryOp::try_from(marked)?;
        let client = self.client(&op.profile).await?;
        let method = Method::from_bytes(op.method.as_bytes())
            .map_err(|_| CoreError::storage(format!("recovery operation {}: method", op.id)))?;
        let body = op.body.clone().unwrap_or(Value::Null);
        let result = client
            .send_to(method, &op.path, &body, Some(&op.idempotency_key))
            .await;
        let now = self.now();
        let settled = self.settle_action(result, op.attempts, now, &op.profile)?;
        let kept = settled.answer.as_ref().map(Value::to_string);
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        let row: Option<RecoveryRow> =
            action::record(&mut tx, &TABLE, op.id, &settled, kept, now).await?;
        let Some(row) = row else {
            // Another process recorded the outcome first; its record stands.
            tx.commit().await?;
            return self.recovery_op(op.id).await;
        };
        if settled.state != ActionState::Pending {
            let mut entry = Audit::new(
                now,
                &self.inner.opts.actor,
                op.action.audit_action(),
                settled.state.as_str(),
            )
            .profile(&op.profile)
            .resource(audit_resource(op.action, &op.subject));
            entry.detail = Some(match &settled.error {
                Some(e) => e.message.clone(),
                None => format!("{} {}", op.method, op.path),
            });
            entry.record(&mut tx).await?;
        }
        tx.commit().await?;
        row.try_into()
    }

    /// A fix sent before and queued longer ago than the server keeps keys: a person decides.
    async fn fix_forgotten(&self, op: RecoveryOp) -> Result<RecoveryOp> {
        let error = OpError {
            status: None,
            problem: None,
            message: "first sent longer ago than the control plane keeps idempotency keys: a resend could \
                      act twice; run `switchyard doctor` again and run the fix anew if it is still listed"
                .into(),
            transient: false,
        };
        let now = self.now();
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        let changed = sqlx::query(
            "UPDATE recovery_ops SET state = 'needs_attention', last_error = ?, updated_at = ? \
             WHERE id = ? AND state = 'pending'",
        )
        .bind(serde_json::to_string(&error).expect("error serializes"))
        .bind(now)
        .bind(op.id)
        .execute(&mut *tx)
        .await?;
        if changed.rows_affected() == 1 {
            Audit::new(
                now,
                &self.inner.opts.actor,
                op.action.audit_action(),
                "needs_attention",
            )
            .profile(&op.profile)
            .resource(audit_resource(op.action, &op.subject))
            .detail(error.message)
            .record(&mut tx)
            .await?;
        }
        tx.commit().await?;
        self.recovery_op(op.id).await
    }
}

/// The row already naming `new`: by its key (a caller's key), or by its retirement id (a
/// retirement start or cancel). A fix without a key is always new.
async fn existing_recovery(
    tx: &mut Transaction<'_, Sqlite>,
    profile: &str,
    new: &NewRecoveryOp<'_>,
) -> Result<Option<RecoveryRow>> {
    Ok(match (&new.key, new.action) {
        (Some(key), _) => {
            sqlx::query_as(&format!(
                "SELECT {COLUMNS} FROM recovery_ops WHERE idempotency_key = ?"
            ))
            .bind(key)
            .fetch_optional(&mut **tx)
            .await?
        }
        (None, RecoveryAction::Fix) => None,
        (None, action) => sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM recovery_ops WHERE profile = ? AND action = ? AND subject = ?"
        ))
        .bind(profile)
        .bind(action)
        .bind(new.subject)
        .fetch_optional(&mut **tx)
        .await?,
    })
}

/// The row found for `new` (see [`existing_recovery`]), when it is the same request; another
/// request under the same key or retirement id is refused.
fn same_recovery(
    row: RecoveryRow,
    profile: &str,
    new: &NewRecoveryOp<'_>,
    body: &Option<String>,
) -> Result<RecoveryOp> {
    let same = row.profile == profile
        && row.action == new.action
        && row.subject == new.subject
        && row.method == new.method
        && row.path == new.path
        && row.body == *body;
    if !same {
        return Err(match new.action {
            RecoveryAction::Fix => CoreError::KeyReused {
                key: row.idempotency_key,
            },
            _ => CoreError::invalid(
                "retirement id",
                format!(
                    "{:?} was already used for another retirement request",
                    new.subject
                ),
            ),
        });
    }
    row.try_into()
}

fn audit_resource(action: RecoveryAction, subject: &str) -> String {
    match action {
        RecoveryAction::Fix => format!("finding/{subject}"),
        RecoveryAction::Retire | RecoveryAction::RetireCancel => format!("retirement/{subject}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_writes_to_the_v1_api_are_queued() {
        assert!(check_request("POST", "/v1/deliveries/dlv_1/requeue").is_ok());
        assert!(check_request("GET", "/v1/deliveries").is_err());
        assert!(check_request("POST", "https://elsewhere/v1/x").is_err());
        assert!(check_request("POST", "/v1/../admin").is_err());
        assert!(check_request("DELETE", "/healthz").is_err());
        assert!(check_request("POST", "/v1/a b").is_err());
        assert!(check_key("").is_err());
        assert!(check_key("draft-1").is_ok());
    }
}
