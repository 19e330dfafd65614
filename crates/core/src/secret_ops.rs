//! Signing-secret rotations and expiries of a target (`switchyard targets rotate-secret`,
//! `expire-secret`), as keyed writes committed locally first (`secret_ops`) and then sent.
//!
//! Exactly once: the Idempotency-Key is minted when the row is committed and every resend uses
//! it, so a timeout, a lost answer or a crash followed by a resend rotates once — the control
//! plane answers the resend with the response it stored, the same secret. The new secret's value
//! is shown once and never written to disk by the console: the row keeps the server's answer
//! without it, and the value reaches the caller only in memory, from the answer to its own send
//! (a resend of a pending rotation shows it then). A row first queued longer ago than the server
//! keeps keys is not resent blindly (the server may have forgotten the key and would rotate
//! again): it needs a person, who checks `targets secrets`.

use std::time::Duration;

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::{Sqlite, Transaction};
use switchyard_protocol::SigningSecretInfo;
use switchyard_protocol::secrets::{RotateSecretRequest, SigningSecretList};

use crate::Console;
use crate::action::{self, ActionState, SendOne, Step};
use crate::audit::Audit;
use crate::client::SendResult;
use crate::error::{CoreError, Result};
use crate::types::OpError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, sqlx::Type)]
#[serde(rename_all = "snake_case")]
#[sqlx(type_name = "TEXT", rename_all = "snake_case")]
pub enum SecretAction {
    /// `POST /v1/targets/{name}/secrets/rotate`: stage a new secret beside the old ones.
    Rotate,
    /// `POST /v1/targets/{name}/secrets/{id}/expire`: end one secret now (promote / roll back).
    Expire,
}

/// One queued rotation or expiry.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SecretOp {
    pub id: i64,
    pub profile: String,
    pub target: String,
    pub action: SecretAction,
    /// The secret an expiry ends.
    pub secret_id: Option<String>,
    pub idempotency_key: String,
    pub state: ActionState,
    pub attempts: u32,
    pub last_error: Option<OpError>,
    /// The server's answer once done, without the new secret's value.
    pub result: Option<Value>,
    pub created_at: i64,
}

/// What a send left: the row, and the new secret's value when this send's answer carried it.
#[derive(Clone)]
pub struct SecretSent {
    pub op: SecretOp,
    /// Shown once to the person; never stored, never in a log line (see the `Debug` below).
    pub value: Option<String>,
}

impl std::fmt::Debug for SecretSent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecretSent")
            .field("op", &self.op)
            .field("value", &self.value.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

#[derive(sqlx::FromRow)]
struct SecretOpRow {
    id: i64,
    profile: String,
    target: String,
    action: SecretAction,
    secret_id: Option<String>,
    body: Option<String>,
    idempotency_key: String,
    state: ActionState,
    attempts: i64,
    last_error: Option<String>,
    result: Option<String>,
    next_attempt_at: i64,
    created_at: i64,
}

const COLUMNS: &str = "id, profile, target, action, secret_id, body, idempotency_key, state, attempts, \
    last_error, result, next_attempt_at, created_at";
const TABLE: action::Table = action::Table {
    name: "secret_ops",
    columns: COLUMNS,
};

impl action::Row for SecretOpRow {
    fn profile(&self) -> &str {
        &self.profile
    }
    fn state(&self) -> ActionState {
        self.state
    }
    fn created_at(&self) -> i64 {
        self.created_at
    }
    fn next_attempt_at(&self) -> i64 {
        self.next_attempt_at
    }
}

impl SecretOpRow {
    fn op(&self) -> SecretOp {
        fn parse<T: serde::de::DeserializeOwned>(t: &Option<String>) -> Option<T> {
            t.as_deref().and_then(|s| serde_json::from_str(s).ok())
        }
        SecretOp {
            id: self.id,
            profile: self.profile.clone(),
            target: self.target.clone(),
            action: self.action,
            secret_id: self.secret_id.clone(),
            idempotency_key: self.idempotency_key.clone(),
            state: self.state,
            attempts: self.attempts as u32,
            last_error: parse(&self.last_error),
            result: parse(&self.result),
            created_at: self.created_at,
        }
    }
}

/// The answer as the row keeps it: the new secret's value taken out (and handed back).
fn without_value(mut answer: Value) -> (Value, Option<String>) {
    let value = answer
        .get_mut("secret")
        .and_then(Value::as_object_mut)
        .and_then(|s| s.remove("value"))
        .and_then(|v| v.as_str().map(str::to_owned));
    (answer, value)
}

impl Console {
    /// The target's signing secrets, live from the control plane (ids and times, never values).
    pub async fn signing_secrets(
        &self,
        profile: &str,
        target: &str,
    ) -> Result<Vec<SigningSecretInfo>> {
        let list: SigningSecretList = self
            .client(profile)
            .await?
            .get_json(&format!("/v1/targets/{target}/secrets"))
            .await?
            .ok_or_else(|| CoreError::not_found(format!("target {target:?} on {profile:?}")))?;
        Ok(list.items)
    }

    /// Queues a rotation (`secret_id: None`, `rotate` the request) or an expiry of `secret_id`.
    /// `key`: the caller's key; the same key again returns the row already queued, the same key
    /// for another write is refused ([`CoreError::KeyReused`]).
    pub async fn enqueue_secret_op(
        &self,
        profile: &str,
        target: &str,
        write: SecretWrite,
        key: Option<String>,
    ) -> Result<SecretOp> {
        self.profile(profile).await?;
        let key = key.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        let op = self
            .insert_secret_op(&mut tx, profile, target, &write, &key)
            .await?;
        tx.commit().await?;
        Ok(op)
    }

    /// Queues a secret write under `key` inside the caller's transaction (a rotation step
    /// commits its step change and its request together): the row already queued under the
    /// same key for the same write, or [`CoreError::KeyReused`].
    pub(crate) async fn insert_secret_op(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        profile: &str,
        target: &str,
        write: &SecretWrite,
        key: &str,
    ) -> Result<SecretOp> {
        let (action, secret_id, body) = match write {
            SecretWrite::Rotate(r) => (
                SecretAction::Rotate,
                None,
                Some(serde_json::to_string(r).expect("request serializes")),
            ),
            SecretWrite::Expire { secret_id } => {
                (SecretAction::Expire, Some(secret_id.clone()), None)
            }
        };
        let now = self.now();
        if action::key_used_elsewhere(tx, key, &TABLE).await? {
            return Err(CoreError::KeyReused { key: key.into() });
        }
        let inserted = sqlx::query(
            "INSERT INTO secret_ops (profile, target, action, secret_id, body, idempotency_key, next_attempt_at, \
             created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (idempotency_key) DO NOTHING",
        )
        .bind(profile)
        .bind(target)
        .bind(action)
        .bind(&secret_id)
        .bind(&body)
        .bind(key)
        .bind(now)
        .bind(now)
        .bind(now)
        .execute(&mut **tx)
        .await?;
        let row: SecretOpRow = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM secret_ops WHERE idempotency_key = ?"
        ))
        .bind(key)
        .fetch_one(&mut **tx)
        .await?;
        let same = row.profile == profile
            && row.target == target
            && row.action == action
            && row.secret_id == secret_id
            && row.body == body;
        if !same {
            return Err(CoreError::KeyReused { key: key.into() });
        }
        if inserted.rows_affected() == 1 {
            Audit::new(now, &self.inner.opts.actor, audit_action(action), "queued")
                .profile(profile)
                .resource(format!("target/{target}"))
                .record(tx)
                .await?;
        }
        Ok(row.op())
    }

    pub async fn secret_op(&self, id: i64) -> Result<SecretOp> {
        Ok(self.secret_op_row(id).await?.op())
    }

    /// The op queued under `key`, if any.
    pub(crate) async fn secret_op_by_key(&self, key: &str) -> Result<Option<SecretOp>> {
        let row: Option<SecretOpRow> = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM secret_ops WHERE idempotency_key = ?"
        ))
        .bind(key)
        .fetch_optional(&self.inner.pool)
        .await?;
        Ok(row.map(|r| r.op()))
    }

    async fn secret_op_row(&self, id: i64) -> Result<SecretOpRow> {
        sqlx::query_as(&format!("SELECT {COLUMNS} FROM secret_ops WHERE id = ?"))
            .bind(id)
            .fetch_optional(&self.inner.pool)
            .await?
            .ok_or_else(|| CoreError::not_found(format!("secret operation {id}")))
    }

    /// Sends the queued op `id` (same key every time) until it is settled or `deadline`
    /// would pass while waiting for a retry.
    pub async fn send_secret_op(&self, id: i64, deadline: Duration) -> Result<SecretSent> {
        let load = || -> Step<'_, SecretOpRow> { Box::pin(self.secret_op_row(id)) };
        let send = |row| -> Step<'_, Option<SecretSent>> { Box::pin(self.send_secret_once(row)) };
        let row = match action::send_one(self, deadline, load, send).await? {
            SendOne::Settled(sent) => return Ok(sent),
            SendOne::AsItIs(row) => row,
            // A resend could rotate a second time, so a person decides.
            SendOne::Forgotten(row) => {
                let message = "queued longer ago than the control plane keeps idempotency keys: a resend could \
                               act twice; check `switchyard targets secrets` and queue it again if it is still \
                               needed";
                action::needs_attention(&self.inner.writer, &TABLE, row.id, message, self.now())
                    .await?;
                self.secret_op_row(row.id).await?
            }
        };
        Ok(SecretSent {
            op: row.op(),
            value: None,
        })
    }

    /// One send; `Some` once the op is settled (by this send or another process).
    async fn send_secret_once(&self, row: SecretOpRow) -> Result<Option<SecretSent>> {
        let marked: Option<SecretOpRow> =
            action::mark_sent(&self.inner.writer, &TABLE, row.id, self.now()).await?;
        let Some(row) = marked else {
            return Ok(Some(SecretSent {
                op: self.secret_op(row.id).await?,
                value: None,
            }));
        };
        let client = self.client(&row.profile).await?;
        let (path, body) = match row.action {
            SecretAction::Rotate => (
                format!("/v1/targets/{}/secrets/rotate", row.target),
                row.body
                    .as_deref()
                    .and_then(|b| serde_json::from_str(b).ok())
                    .unwrap_or_else(|| serde_json::json!({})),
            ),
            SecretAction::Expire => (
                format!(
                    "/v1/targets/{}/secrets/{}/expire",
                    row.target,
                    row.secret_id.as_deref().unwrap_or_default()
                ),
                Value::Null,
            ),
        };
        let result = client
            .send_to(Method::POST, &path, &body, Some(&row.idempotency_key))
            .await;
        let now = self.now();
        let settled = self.settle_action(result, row.attempts as u32, now, &row.profile)?;
        let (kept, value) = match settled.answer.clone() {
            Some(a) => {
                let (kept, value) = without_value(a);
                (Some(kept), value)
            }
            None => (None, None),
        };
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        let text = kept.as_ref().map(Value::to_string);
        let updated: Option<SecretOpRow> =
            action::record(&mut tx, &TABLE, row.id, &settled, text, now).await?;
        let (state, error) = (settled.state, &settled.error);
        if state != ActionState::Pending {
            let mut entry = Audit::new(
                now,
                &self.inner.opts.actor,
                audit_action(row.action),
                state.as_str(),
            )
            .profile(&row.profile)
            .resource(format!("target/{}", row.target));
            entry.detail = error.as_ref().map(|e| e.message.clone()).or_else(|| {
                kept.as_ref()
                    .and_then(|k| k["secret"]["id"].as_str().map(|id| format!("secret {id}")))
            });
            entry.record(&mut tx).await?;
        }
        tx.commit().await?;
        let op = match updated {
            Some(r) => r.op(),
            None => self.secret_op(row.id).await?,
        };
        Ok((op.state != ActionState::Pending).then_some(SecretSent { op, value }))
    }
}

impl Console {
    /// The value of the secret a confirmed rotation `id` minted, asked of the control plane
    /// again: the same request with the same key, which the server answers from the response
    /// it stored for the key (never a second secret). `None` when it cannot be shown: the op is
    /// no rotation or not confirmed, it was queued longer ago than the server keeps keys (a
    /// resend could then rotate again, so it is not sent), the server cannot be reached, or
    /// its answer names another secret.
    pub(crate) async fn rotation_value_again(&self, id: i64) -> Result<Option<String>> {
        let row = self.secret_op_row(id).await?;
        let kept: Option<Value> = row
            .result
            .as_deref()
            .and_then(|r| serde_json::from_str(r).ok());
        let Some(new_id) = kept
            .as_ref()
            .and_then(|k| k["secret"]["id"].as_str())
            .map(str::to_owned)
        else {
            return Ok(None);
        };
        if row.action != SecretAction::Rotate || row.state != ActionState::Done {
            return Ok(None);
        }
        let client = self.client(&row.profile).await?;
        let retention_ms = match client.info().await {
            Ok(info) => (info.idempotency_retention_seconds as i64).saturating_mul(1000),
            Err(CoreError::Offline { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        if self.now() - row.created_at > retention_ms {
            return Ok(None);
        }
        let body = row
            .body
            .as_deref()
            .and_then(|b| serde_json::from_str(b).ok())
            .unwrap_or_else(|| serde_json::json!({}));
        let path = format!("/v1/targets/{}/secrets/rotate", row.target);
        let SendResult::Answered(answer) = client
            .send_to(Method::POST, &path, &body, Some(&row.idempotency_key))
            .await
        else {
            return Ok(None);
        };
        let Some(answer) = answer.body.filter(|_| (200..300).contains(&answer.status)) else {
            return Ok(None);
        };
        let (again, value) = without_value(answer);
        Ok(value.filter(|_| again["secret"]["id"].as_str() == Some(new_id.as_str())))
    }
}

/// A signing-secret write to queue.
#[derive(Debug, Clone)]
pub enum SecretWrite {
    Rotate(RotateSecretRequest),
    Expire { secret_id: String },
}

fn audit_action(action: SecretAction) -> &'static str {
    match action {
        SecretAction::Rotate => "secret.rotate",
        SecretAction::Expire => "secret.expire",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_value_is_taken_out_of_what_is_kept() {
        let answer = serde_json::json!({
            "secret": {"id": "sec_1", "value": "whsec_abc", "created_at": "2026-12-02T00:00:00Z"},
            "previous": [{"id": "sec_0", "expires_at": "2026-12-03T00:00:00Z"}]
        });
        let (kept, value) = without_value(answer);
        assert_eq!(value.as_deref(), Some("whsec_abc"));
        assert!(!kept.to_string().contains("whsec_abc"));
        assert_eq!(kept["secret"]["id"], "sec_1");
        assert_eq!(kept["previous"][0]["id"], "sec_0");
    }

    #[test]
    fn a_sent_rotation_prints_without_its_value() {
        let op: SecretOp = serde_json::from_value(serde_json::json!({
            "id": 1, "profile": "p", "target": "t", "action": "rotate", "secret_id": null,
            "idempotency_key": "k", "state": "done", "attempts": 1, "last_error": null,
            "result": null, "created_at": 0
        }))
        .unwrap();
        let sent = SecretSent {
            op,
            value: Some("whsec_abc".into()),
        };
        let printed = format!("{sent:?}");
        assert!(!printed.contains("whsec_abc"), "{printed}");
        assert!(printed.contains("<redacted>"), "{printed}");
    }
}
