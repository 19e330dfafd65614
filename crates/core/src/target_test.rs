//! Test webhooks through the outbox ("Send test webhook", `switchyard targets test`).
//!
//! A test webhook is a write with an external effect: the control plane calls the target. It
//! is committed locally first as a row of `target_tests` (works offline) with an
//! Idempotency-Key minted once, and every resend is `POST /v1/targets/{target}/test` with that
//! key and the same body. So a lost response, a retry, a second process sending the same row
//! or a restart never makes the control plane send a second webhook: it answers with the
//! result it stored for the key, and the `webhook-id` the receiver saw is derived from it.
//! A caller that may submit twice (a button, a script) passes its own draft key: queuing the
//! same key again returns the row already queued.
//!
//! A test of a target whose own writes are still queued waits for them (the target may not
//! exist on the server yet, or its URL may be about to change).

use std::time::Duration;

use reqwest::Method;
use serde::{Deserialize, Serialize};
use sqlx::{Sqlite, Transaction};
use switchyard_protocol::{ResourceKind, TargetTestRequest, TargetTestResult};

use crate::Console;
use crate::action::{self, ActionState, Queued};
use crate::audit::Audit;
use crate::error::{CoreError, Result};
use crate::types::OpError;

/// One queued test webhook.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TargetTestOp {
    pub id: i64,
    pub profile: String,
    pub target: String,
    /// The request body sent.
    pub request: TargetTestRequest,
    pub idempotency_key: String,
    pub state: ActionState,
    /// Sends started so far, counted as each request leaves (0 = saved locally, never sent).
    pub attempts: u32,
    pub last_error: Option<OpError>,
    /// What the receiver answered, once the control plane confirmed the test. A receiver that
    /// failed is still a confirmed test (`ok: false`).
    pub result: Option<TargetTestResult>,
    pub next_attempt_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
}

impl Queued for TargetTestOp {
    fn id(&self) -> i64 {
        self.id
    }

    fn due_at(&self) -> Option<i64> {
        self.next_attempt_at
    }
}

const COLUMNS: &str = "id, profile, target, body, idempotency_key, state, attempts, last_error, result, \
    next_attempt_at, created_at, updated_at";
const TABLE: action::Table = action::Table {
    name: "target_tests",
    columns: COLUMNS,
};

#[derive(sqlx::FromRow)]
struct TestRow {
    id: i64,
    profile: String,
    target: String,
    body: String,
    idempotency_key: String,
    state: ActionState,
    attempts: i64,
    last_error: Option<String>,
    result: Option<String>,
    next_attempt_at: i64,
    created_at: i64,
    updated_at: i64,
}

impl TryFrom<TestRow> for TargetTestOp {
    type Error = CoreError;

    fn try_from(r: TestRow) -> Result<Self> {
        let unreadable =
            |what: &str| CoreError::storage(format!("target test row {}: {what}", r.id));
        let request = serde_json::from_str(&r.body).map_err(|_| unreadable("request body"))?;
        let last_error = r
            .last_error
            .as_deref()
            .map(serde_json::from_str)
            .transpose()
            .map_err(|_| unreadable("error"))?;
        let result = r
            .result
            .as_deref()
            .map(serde_json::from_str)
            .transpose()
            .map_err(|_| unreadable("result"))?;
        Ok(Self {
            id: r.id,
            profile: r.profile,
            target: r.target,
            request,
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

/// The control plane's rule for an event type, checked before anything is queued.
fn check_request(request: &TargetTestRequest) -> Result<()> {
    if let Some(t) = &request.event_type {
        if !switchyard_protocol::is_event_type(t) {
            return Err(CoreError::invalid(
                "event type",
                format!("{t:?} must be 1-128 characters of letters, digits and . _ : -"),
            ));
        }
    }
    Ok(())
}

impl Console {
    /// Queues one test webhook to `target` (saved locally; send it with
    /// [`Console::sync_target_tests`]). `key`: the caller's draft key; queuing the same key
    /// again returns the row already queued, and the same key with another target or request
    /// is refused ([`CoreError::KeyReused`]). The target must be known to the cache.
    pub async fn enqueue_target_test(
        &self,
        profile: &str,
        target: &str,
        request: TargetTestRequest,
        key: Option<String>,
    ) -> Result<TargetTestOp> {
        check_request(&request)?;
        let cached = self
            .get_resource(profile, ResourceKind::Target, target)
            .await?;
        if cached.local.is_none() {
            return Err(CoreError::invalid(
                "target",
                format!("{target:?} is deleted locally; its delete is queued"),
            ));
        }
        let key = key.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        let op = self
            .insert_target_test(&mut tx, profile, target, &request, &key)
            .await?;
        tx.commit().await?;
        Ok(op)
    }

    /// Queues a test webhook under `key` inside the caller's transaction (a rotation's verify
    /// step commits its step change and its test together): the row already queued under the
    /// same key for the same test, or [`CoreError::KeyReused`].
    pub(crate) async fn insert_target_test(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        profile: &str,
        target: &str,
        request: &TargetTestRequest,
        key: &str,
    ) -> Result<TargetTestOp> {
        let body = serde_json::to_string(request).expect("request serializes");
        let now = self.now();
        if action::key_used_elsewhere(tx, key, &TABLE).await? {
            return Err(CoreError::KeyReused { key: key.into() });
        }
        let inserted = sqlx::query(
            "INSERT INTO target_tests (profile, target, body, idempotency_key, next_attempt_at, created_at, updated_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (idempotency_key) DO NOTHING",
        )
        .bind(profile)
        .bind(target)
        .bind(&body)
        .bind(key)
        .bind(now)
        .bind(now)
        .bind(now)
        .execute(&mut **tx)
        .await?;
        let row: TestRow = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM target_tests WHERE idempotency_key = ?"
        ))
        .bind(key)
        .fetch_one(&mut **tx)
        .await?;
        if row.profile != profile || row.target != target || row.body != body {
            return Err(CoreError::KeyReused { key: key.into() });
        }
        if inserted.rows_affected() == 1 {
            Audit::new(now, &self.inner.opts.actor, "target.test", "queued")
                .profile(profile)
                .resource(format!("target/{target}"))
                .record(tx)
                .await?;
        }
        row.try_into()
    }

    /// One queued test webhook.
    pub async fn target_test(&self, id: i64) -> Result<TargetTestOp> {
        let row: TestRow =
            sqlx::query_as(&format!("SELECT {COLUMNS} FROM target_tests WHERE id = ?"))
                .bind(id)
                .fetch_optional(&self.inner.pool)
                .await?
                .ok_or_else(|| CoreError::not_found(format!("target test {id}")))?;
        row.try_into()
    }

    /// The profile's test webhooks (of one target, or all), newest first, at most `limit`.
    pub async fn target_tests(
        &self,
        profile: &str,
        target: Option<&str>,
        limit: u32,
    ) -> Result<Vec<TargetTestOp>> {
        let rows: Vec<TestRow> = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM target_tests WHERE profile = ?1 AND (?2 IS NULL OR target = ?2) \
             ORDER BY id DESC LIMIT ?3"
        ))
        .bind(profile)
        .bind(target)
        .bind(limit)
        .fetch_all(&self.inner.pool)
        .await?;
        rows.into_iter().map(TargetTestOp::try_from).collect()
    }

    /// Sends the profile's pending test webhooks until each is confirmed or needs attention,
    /// retrying transient failures with the same key (the core's full-jitter backoff), for at
    /// most `deadline`. Tests of a target with writes still queued are left for later. Returns
    /// the rows it touched.
    pub async fn sync_target_tests(
        &self,
        profile: &str,
        deadline: Duration,
    ) -> Result<Vec<TargetTestOp>> {
        let pending = || -> action::Step<'_, Vec<TargetTestOp>> {
            Box::pin(async move {
                let rows: Vec<TestRow> = sqlx::query_as(&format!(
                    "SELECT {COLUMNS} FROM target_tests t WHERE profile = ? AND state = 'pending' \
                     AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.profile = t.profile AND o.kind = 'target' \
                     AND o.name = t.target AND o.state IN ('pending', 'sending')) ORDER BY id"
                ))
                .bind(profile)
                .fetch_all(&self.inner.pool)
                .await?;
                rows.into_iter().map(TargetTestOp::try_from).collect()
            })
        };
        let send =
            |op| -> action::Step<'_, TargetTestOp> { Box::pin(self.send_target_test(profile, op)) };
        action::drain(deadline, || self.now(), pending, send).await
    }

    /// Sends the one queued test `id` (same key every time) until it is settled or `deadline`
    /// would pass while waiting for a retry; the row as it then stands. A rotation's verify
    /// step uses it: its test goes out on its own, whatever else is queued.
    pub(crate) async fn send_target_test_until(
        &self,
        id: i64,
        deadline: Duration,
    ) -> Result<TargetTestOp> {
        let first = self.target_test(id).await?;
        let profile = first.profile.clone();
        let pending = || -> action::Step<'_, Vec<TargetTestOp>> {
            Box::pin(async move {
                let op = self.target_test(id).await?;
                Ok(if op.state == ActionState::Pending {
                    vec![op]
                } else {
                    Vec::new()
                })
            })
        };
        let profile = profile.as_str();
        let send =
            |op| -> action::Step<'_, TargetTestOp> { Box::pin(self.send_target_test(profile, op)) };
        action::drain(deadline, || self.now(), pending, send).await?;
        self.target_test(id).await
    }

    async fn send_target_test(&self, profile: &str, op: TargetTestOp) -> Result<TargetTestOp> {
        let client = self.client(profile).await?;
        let marked: Option<TestRow> =
            action::mark_sent(&self.inner.writer, &TABLE, op.id, self.now()).await?;
        let Some(marked) = marked else {
            // Another process settled it meanwhile.
            return self.target_test(op.id).await;
        };
        let op = TargetTestOp::try_from(marked)?;
        let body = serde_json::to_value(&op.request).expect("request serializes");
        let result = client
            .send_to(
                Method::POST,
                &format!("/v1/targets/{}/test", op.target),
                &body,
                Some(&op.idempotency_key),
            )
            .await;
        let now = self.now();
        let settled = self.settle_action(result, op.attempts, now, profile)?;
        let result: Option<TargetTestResult> = settled
            .answer
            .clone()
            .and_then(|a| serde_json::from_value(a).ok());
        let kept = result
            .as_ref()
            .map(|r| serde_json::to_string(r).expect("result serializes"));
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        let row: Option<TestRow> =
            action::record(&mut tx, &TABLE, op.id, &settled, kept, now).await?;
        let (state, error) = (settled.state, &settled.error);
        let Some(row) = row else {
            // Another process recorded the outcome first; its record stands.
            tx.commit().await?;
            return self.target_test(op.id).await;
        };
        if state != ActionState::Pending {
            let mut entry = Audit::new(now, &self.inner.opts.actor, "target.test", state.as_str())
                .profile(profile)
                .resource(format!("target/{}", op.target));
            entry.detail = match (&result, error) {
                (Some(r), _) => Some(describe_result(r)),
                (None, Some(e)) => Some(e.message.clone()),
                (None, None) => None,
            };
            entry.record(&mut tx).await?;
        }
        tx.commit().await?;
        row.try_into()
    }
}

/// A test's result in a line: what the receiver answered, and how fast.
pub fn describe_result(r: &TargetTestResult) -> String {
    let answer = match (r.status_code, &r.error) {
        (Some(code), _) => format!("HTTP {code}"),
        (None, Some(e)) => e.clone(),
        (None, None) => "no answer".into(),
    };
    let verdict = if r.ok {
        "receiver accepted it"
    } else {
        "receiver did not accept it"
    };
    format!("{verdict}: {answer} in {} ms", r.duration_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_type_the_server_would_refuse_is_refused_before_queuing() {
        let bad = TargetTestRequest {
            event_type: Some("has space".into()),
            ..TargetTestRequest::default()
        };
        assert!(matches!(
            check_request(&bad),
            Err(CoreError::Invalid { field, .. }) if field == "event type"
        ));
        let good: TargetTestRequest = serde_json::from_value(
            serde_json::json!({"event_type": "order.created:v2", "payload": {"order": 1}}),
        )
        .unwrap();
        assert!(check_request(&good).is_ok());
        assert!(check_request(&TargetTestRequest::default()).is_ok());
    }
}
