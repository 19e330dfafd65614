//! SQL of the delivery pipeline (SQLite). Every state change of a delivery happens in one
//! write transaction on the single writer; every attempt is claimed under a lease whose
//! token fences the completion, so a stale worker or edge can never record over a newer one.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use sqlx::sqlite::SqliteRow;
use sqlx::{Row, SqliteConnection, SqlitePool};
use switchyard_protocol::{
    Attempt, AttemptOutcome, Delivery, DeliveryState, DlqEntry, DlqFilter, ErrorClass, Event,
    FlowMode, FlowSpec, TargetSpec,
};

use super::http::AttemptResult;
use super::schedule::RetryPolicy;
use super::signing;
use crate::clock::to_datetime;
use crate::store::StoreError;

/// A new id: `prefix_` + a time-ordered UUIDv7 in hex.
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", uuid::Uuid::now_v7().simple())
}

fn corrupt(what: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(what.to_string())
}

pub fn mode_str(mode: FlowMode) -> &'static str {
    match mode {
        FlowMode::Sync => "sync",
        FlowMode::AsyncInline => "async_inline",
        FlowMode::AsyncRelay => "async_relay",
    }
}

fn mode_from_str(text: &str) -> Result<FlowMode, StoreError> {
    match text {
        "sync" => Ok(FlowMode::Sync),
        "async_inline" => Ok(FlowMode::AsyncInline),
        "async_relay" => Ok(FlowMode::AsyncRelay),
        other => Err(corrupt(format!("unknown mode {other:?}"))),
    }
}

fn class_from(text: Option<String>) -> Result<Option<ErrorClass>, StoreError> {
    text.filter(|t| !t.is_empty())
        .map(|t| ErrorClass::parse(&t).ok_or_else(|| corrupt(format!("error class {t:?}"))))
        .transpose()
}

/// The pools of the SQLite store.
#[derive(Clone)]
pub struct DeliveryStore {
    pub writer: SqlitePool,
    pub readers: SqlitePool,
}

/// A delivery to insert.
pub struct NewDelivery<'a> {
    pub tenant: &'a str,
    pub event_id: &'a str,
    pub event_type: &'a str,
    pub endpoint: &'a str,
    pub flow: &'a str,
    pub target: &'a str,
    pub mode: FlowMode,
    pub edge: Option<&'a str>,
    pub max_attempts: u32,
    pub next_attempt_at: i64,
    pub replay_session: Option<&'a str>,
    pub replay_of: Option<&'a str>,
}

pub async fn insert_delivery(
    conn: &mut SqliteConnection,
    d: &NewDelivery<'_>,
    now: i64,
) -> Result<String, StoreError> {
    let id = new_id("dlv");
    sqlx::query(
        "INSERT INTO deliveries (id, tenant, event_id, event_type, endpoint, flow, target, mode, edge, state, \
         attempts_made, max_attempts, next_attempt_at, created_at, updated_at, replay_session, replay_of) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?, ?, ?, ?)",
    )
    .bind(&id)
    .bind(d.tenant)
    .bind(d.event_id)
    .bind(d.event_type)
    .bind(d.endpoint)
    .bind(d.flow)
    .bind(d.target)
    .bind(mode_str(d.mode))
    .bind(d.edge)
    .bind(d.max_attempts)
    .bind(d.next_attempt_at)
    .bind(now)
    .bind(now)
    .bind(d.replay_session)
    .bind(d.replay_of)
    .execute(&mut *conn)
    .await?;
    Ok(id)
}

/// The enabled flows of `endpoint` (flows have no disabled state; the endpoint does).
pub async fn flows_of_endpoint(
    conn: &mut SqliteConnection,
    tenant: &str,
    endpoint: &str,
) -> Result<Vec<(String, FlowSpec)>, StoreError> {
    let rows = sqlx::query(
        "SELECT name, spec FROM resources WHERE tenant = ? AND kind = 'flow' AND ref_endpoint = ? ORDER BY name",
    )
    .bind(tenant)
    .bind(endpoint)
    .fetch_all(&mut *conn)
    .await?;
    rows.iter()
        .map(|r| {
            let spec: String = r.try_get("spec")?;
            let spec: FlowSpec = serde_json::from_str(&spec).map_err(corrupt)?;
            Ok((r.try_get("name")?, spec))
        })
        .collect()
}

/// An attempt claimed under a lease, with everything needed to send it.
#[derive(Debug, Clone)]
pub struct Claimed {
    pub tenant: String,
    pub delivery_id: String,
    pub attempt_id: String,
    pub number: u32,
    pub lease_token: i64,
    pub lease_until: i64,
    pub event_id: String,
    pub target_name: String,
    /// `None` when the target was deleted since the delivery was created.
    pub target: Option<TargetSpec>,
    pub secrets: Vec<String>,
    pub body: String,
    pub edge: Option<String>,
}

impl Claimed {
    /// The full header list of the webhook request, signed at `now_ms`.
    pub fn signed_headers(&self, now_ms: i64) -> Vec<(String, String)> {
        let mut headers = signing::webhook_headers(
            self.target.as_ref().map(|t| &t.headers),
            &self.event_id,
            now_ms,
            &self.secrets,
            self.body.as_bytes(),
        );
        headers.push(("switchyard-attempt-id".into(), self.attempt_id.clone()));
        headers.push(("switchyard-attempt".into(), self.number.to_string()));
        headers.push(("switchyard-delivery-id".into(), self.delivery_id.clone()));
        headers
    }
}

/// The webhook body: the same bytes on every attempt and replay of an event.
pub fn webhook_body(
    event_id: &str,
    event_type: &str,
    endpoint: &str,
    created_at: i64,
    payload: &str,
) -> String {
    let data: Value = serde_json::from_str(payload).unwrap_or(Value::Null);
    json!({
        "id": event_id,
        "type": event_type,
        "endpoint": endpoint,
        "timestamp": to_datetime(created_at).to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        "data": data,
    })
    .to_string()
}

/// Starts the next attempt of a `pending` delivery: records an in-flight attempt, moves the
/// delivery to `in_flight` under a lease held by `owner` and bumps its fencing token.
/// `None` when the delivery is not pending (someone else claimed it).
pub async fn begin_attempt(
    conn: &mut SqliteConnection,
    delivery_id: &str,
    owner: &str,
    now: i64,
    lease_margin_ms: i64,
) -> Result<Option<Claimed>, StoreError> {
    begin_attempt_checked(conn, delivery_id, owner, now, lease_margin_ms, true).await
}

/// The negative control of the claim: starts an attempt whatever state the delivery is in,
/// the way a worker that decided from a stale read would. Only tests use it, to prove the
/// two-worker test catches double delivery.
#[doc(hidden)]
pub async fn begin_attempt_unchecked(
    conn: &mut SqliteConnection,
    delivery_id: &str,
    owner: &str,
    now: i64,
    lease_margin_ms: i64,
) -> Result<Option<Claimed>, StoreError> {
    begin_attempt_checked(conn, delivery_id, owner, now, lease_margin_ms, false).await
}

async fn begin_attempt_checked(
    conn: &mut SqliteConnection,
    delivery_id: &str,
    owner: &str,
    now: i64,
    lease_margin_ms: i64,
    require_pending: bool,
) -> Result<Option<Claimed>, StoreError> {
    let Some(row) = sqlx::query(
        "SELECT d.tenant, d.target, d.edge, d.attempts_made, d.lease_token, d.event_id, d.event_type, \
         e.endpoint, e.created_at AS event_created_at, e.payload \
         FROM deliveries d JOIN events e ON e.id = d.event_id WHERE d.id = ? AND (d.state = 'pending' OR NOT ?)",
    )
    .bind(delivery_id)
    .bind(require_pending)
    .fetch_optional(&mut *conn)
    .await?
    else {
        return Ok(None);
    };
    let tenant: String = row.try_get("tenant")?;
    let target_name: String = row.try_get("target")?;
    let attempts_made: i64 = row.try_get("attempts_made")?;
    let number = u32::try_from(attempts_made + 1).map_err(corrupt)?;
    let lease_token: i64 = row.try_get::<i64, _>("lease_token")? + 1;
    let event_id: String = row.try_get("event_id")?;
    let event_type: String = row.try_get("event_type")?;
    let endpoint: String = row.try_get("endpoint")?;
    let payload: String = row.try_get("payload")?;
    let body = webhook_body(
        &event_id,
        &event_type,
        &endpoint,
        row.try_get("event_created_at")?,
        &payload,
    );

    let target: Option<TargetSpec> = sqlx::query_scalar::<_, String>(
        "SELECT spec FROM resources WHERE tenant = ? AND kind = 'target' AND name = ?",
    )
    .bind(&tenant)
    .bind(&target_name)
    .fetch_optional(&mut *conn)
    .await?
    .map(|s| serde_json::from_str(&s).map_err(corrupt))
    .transpose()?;
    let secrets: Vec<String> = sqlx::query_scalar(
        "SELECT secret FROM signing_secrets WHERE tenant = ? AND target = ? \
         AND (expires_at IS NULL OR expires_at > ?) ORDER BY created_at",
    )
    .bind(&tenant)
    .bind(&target_name)
    .bind(now)
    .fetch_all(&mut *conn)
    .await?;
    let timeout_ms = i64::from(target.as_ref().map_or(1_000, |t| t.timeout_ms));
    let lease_until = now + timeout_ms + lease_margin_ms;
    let attempt_id = new_id("att");
    sqlx::query(
        "INSERT INTO attempts (id, delivery_id, number, started_at, outcome, performed_by) \
         VALUES (?, ?, ?, ?, 'in_flight', ?)",
    )
    .bind(&attempt_id)
    .bind(delivery_id)
    .bind(number)
    .bind(now)
    .bind(owner)
    .execute(&mut *conn)
    .await?;
    sqlx::query(
        "UPDATE deliveries SET state = 'in_flight', attempts_made = ?, lease_owner = ?, lease_until = ?, \
         lease_token = ?, current_attempt = ?, next_attempt_at = NULL, updated_at = ? WHERE id = ?",
    )
    .bind(i64::from(number))
    .bind(owner)
    .bind(lease_until)
    .bind(lease_token)
    .bind(&attempt_id)
    .bind(now)
    .bind(delivery_id)
    .execute(&mut *conn)
    .await?;
    Ok(Some(Claimed {
        tenant,
        delivery_id: delivery_id.to_owned(),
        attempt_id,
        number,
        lease_token,
        lease_until,
        event_id,
        target_name,
        target,
        secrets,
        body,
        edge: row.try_get("edge")?,
    }))
}

/// Who records an attempt's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishedBy {
    /// The worker, sync request or edge that sent it.
    Sender,
    /// The reaper, after the lease expired unreported.
    Reaper,
}

/// Records the outcome of attempt `attempt_id` if the delivery is still in flight under
/// `lease_token` (the fence): success ends the delivery; a failure schedules the next
/// attempt or, after the last one, moves it to the DLQ. `false`: fenced out, nothing written.
/// Names an attempt and the lease it was claimed under (the fence of its completion).
#[derive(Debug, Clone, Copy)]
pub struct Fence<'a> {
    pub delivery_id: &'a str,
    pub attempt_id: &'a str,
    pub lease_token: i64,
}

impl Claimed {
    pub fn fence(&self) -> Fence<'_> {
        Fence {
            delivery_id: &self.delivery_id,
            attempt_id: &self.attempt_id,
            lease_token: self.lease_token,
        }
    }
}

pub async fn finish_attempt(
    conn: &mut SqliteConnection,
    fence: Fence<'_>,
    result: &AttemptResult,
    now: i64,
    policy: &RetryPolicy,
    finished_by: FinishedBy,
) -> Result<bool, StoreError> {
    let Fence {
        delivery_id,
        attempt_id,
        lease_token,
    } = fence;
    let Some(row) = sqlx::query(
        "SELECT attempts_made, max_attempts, tenant, replay_session, replay_of FROM deliveries \
         WHERE id = ? AND state = 'in_flight' AND lease_token = ? AND current_attempt = ?",
    )
    .bind(delivery_id)
    .bind(lease_token)
    .bind(attempt_id)
    .fetch_optional(&mut *conn)
    .await?
    else {
        return Ok(false);
    };
    let made: i64 = row.try_get("attempts_made")?;
    let max: i64 = row.try_get("max_attempts")?;
    sqlx::query(
        "UPDATE attempts SET outcome = ?, duration_ms = ?, status_code = ?, error_class = ?, error = ?, finished_by = ? \
         WHERE id = ?",
    )
    .bind(if result.succeeded() { "succeeded" } else { "failed" })
    .bind(i64::try_from(result.duration_ms).unwrap_or(i64::MAX))
    .bind(result.status_code.map(i64::from))
    .bind(result.error_class.map(ErrorClass::as_str))
    .bind(result.error.as_deref())
    .bind(match finished_by {
        FinishedBy::Sender => "sender",
        FinishedBy::Reaper => "reaper",
    })
    .bind(attempt_id)
    .execute(&mut *conn)
    .await?;
    let status = result.status_code.map(i64::from);
    if result.succeeded() {
        sqlx::query(
            "UPDATE deliveries SET state = 'succeeded', lease_owner = NULL, lease_until = NULL, \
             current_attempt = NULL, last_status = ?, error_class = NULL, updated_at = ? WHERE id = ?",
        )
        .bind(status)
        .bind(now)
        .bind(delivery_id)
        .execute(&mut *conn)
        .await?;
    } else if made >= max {
        sqlx::query(
            "UPDATE deliveries SET state = 'dead', dead_at = ?, lease_owner = NULL, lease_until = NULL, \
             current_attempt = NULL, last_status = ?, error_class = ?, updated_at = ? WHERE id = ?",
        )
        .bind(now)
        .bind(status)
        .bind(result.error_class.map(ErrorClass::as_str))
        .bind(now)
        .bind(delivery_id)
        .execute(&mut *conn)
        .await?;
    } else if replay_cancelled(conn, &row).await? {
        // Its session was cancelled while this attempt ran: no retry; back to the DLQ.
        sqlx::query(
            "UPDATE deliveries SET state = 'cancelled', lease_owner = NULL, lease_until = NULL, \
             current_attempt = NULL, last_status = ?, error_class = ?, updated_at = ? WHERE id = ?",
        )
        .bind(status)
        .bind(result.error_class.map(ErrorClass::as_str))
        .bind(now)
        .bind(delivery_id)
        .execute(&mut *conn)
        .await?;
        if let Some(original) = row.try_get::<Option<String>, _>("replay_of")? {
            crate::replays::restore_original(conn, &original, now).await?;
        }
    } else {
        let next_number = u32::try_from(made + 1).unwrap_or(u32::MAX);
        let next_at = now + policy.delay_before_ms(next_number);
        sqlx::query(
            "UPDATE deliveries SET state = 'pending', next_attempt_at = ?, lease_owner = NULL, lease_until = NULL, \
             current_attempt = NULL, last_status = ?, error_class = ?, updated_at = ? WHERE id = ?",
        )
        .bind(next_at)
        .bind(status)
        .bind(result.error_class.map(ErrorClass::as_str))
        .bind(now)
        .bind(delivery_id)
        .execute(&mut *conn)
        .await?;
    }
    Ok(true)
}

async fn replay_cancelled(
    conn: &mut SqliteConnection,
    delivery: &SqliteRow,
) -> Result<bool, StoreError> {
    let Some(session) = delivery.try_get::<Option<String>, _>("replay_session")? else {
        return Ok(false);
    };
    let tenant: String = delivery.try_get("tenant")?;
    let cancelled: Option<Option<i64>> =
        sqlx::query_scalar("SELECT cancelled_at FROM replay_sessions WHERE tenant = ? AND id = ?")
            .bind(tenant)
            .bind(session)
            .fetch_optional(&mut *conn)
            .await?;
    Ok(matches!(cancelled, Some(Some(_))))
}

/// Counts every in-flight attempt whose lease expired as failed (`timeout`): its worker or
/// edge vanished (crash, kill -9, partition). The delivery is retried per the schedule, so
/// the receiver may see the event again, with the same `webhook-id`.
pub async fn reap_expired_leases(
    conn: &mut SqliteConnection,
    now: i64,
    policy: &RetryPolicy,
) -> Result<u64, StoreError> {
    let rows = sqlx::query(
        "SELECT id, lease_token, current_attempt, lease_owner FROM deliveries \
         WHERE state = 'in_flight' AND lease_until <= ? ORDER BY lease_until LIMIT 200",
    )
    .bind(now)
    .fetch_all(&mut *conn)
    .await?;
    let mut reaped = 0;
    for row in rows {
        let id: String = row.try_get("id")?;
        let owner: Option<String> = row.try_get("lease_owner")?;
        let attempt: Option<String> = row.try_get("current_attempt")?;
        let Some(attempt) = attempt else { continue };
        let result = AttemptResult::failed(
            ErrorClass::Timeout,
            format!(
                "lease expired: {} stopped before recording the outcome",
                owner.as_deref().unwrap_or("the sender")
            ),
        );
        if finish_attempt(
            conn,
            Fence {
                delivery_id: &id,
                attempt_id: &attempt,
                lease_token: row.try_get("lease_token")?,
            },
            &result,
            now,
            policy,
            FinishedBy::Reaper,
        )
        .await?
        {
            reaped += 1;
        }
    }
    Ok(reaped)
}

/// Counts a relay attempt that no edge plane leased within `pickup_ms` of being due as a
/// failed control plane → edge hop (`connect`).
pub async fn fail_unpicked_relays(
    conn: &mut SqliteConnection,
    now: i64,
    pickup_ms: i64,
    policy: &RetryPolicy,
    lease_margin_ms: i64,
) -> Result<u64, StoreError> {
    let ids: Vec<(String, Option<String>)> = sqlx::query_as(
        "SELECT id, edge FROM deliveries WHERE state = 'pending' AND next_attempt_at <= ? \
         AND mode = 'async_relay' ORDER BY next_attempt_at LIMIT 200",
    )
    .bind(now - pickup_ms)
    .fetch_all(&mut *conn)
    .await?;
    let mut failed = 0;
    for (id, edge) in ids {
        if let Some(claimed) =
            begin_attempt(conn, &id, "control-plane", now, lease_margin_ms).await?
        {
            let result = AttemptResult::failed(
                ErrorClass::Connect,
                format!(
                    "no edge plane {:?} took the attempt within {pickup_ms} ms",
                    edge.unwrap_or_default()
                ),
            );
            finish_attempt(
                conn,
                Fence {
                    delivery_id: &id,
                    attempt_id: &claimed.attempt_id,
                    lease_token: claimed.lease_token,
                },
                &result,
                now,
                policy,
                FinishedBy::Sender,
            )
            .await?;
            failed += 1;
        }
    }
    Ok(failed)
}

/// Claims up to `limit` due deliveries. `relay`: `None` claims the control plane's own
/// (sync and async_inline); `Some((tenant, edge))` claims that edge's async_relay ones.
pub async fn claim_due(
    conn: &mut SqliteConnection,
    now: i64,
    limit: u32,
    owner: &str,
    lease_margin_ms: i64,
    relay: Option<(&str, &str)>,
) -> Result<Vec<Claimed>, StoreError> {
    let ids: Vec<String> = match relay {
        None => {
            sqlx::query_scalar(
                "SELECT id FROM deliveries WHERE state = 'pending' AND next_attempt_at <= ? \
             AND mode <> 'async_relay' ORDER BY next_attempt_at LIMIT ?",
            )
            .bind(now)
            .bind(limit)
            .fetch_all(&mut *conn)
            .await?
        }
        Some((tenant, edge)) => {
            sqlx::query_scalar(
                "SELECT id FROM deliveries WHERE state = 'pending' AND next_attempt_at <= ? \
             AND mode = 'async_relay' AND tenant = ? AND edge = ? ORDER BY next_attempt_at LIMIT ?",
            )
            .bind(now)
            .bind(tenant)
            .bind(edge)
            .bind(limit)
            .fetch_all(&mut *conn)
            .await?
        }
    };
    let mut claimed = Vec::with_capacity(ids.len());
    for id in ids {
        if let Some(c) = begin_attempt(conn, &id, owner, now, lease_margin_ms).await? {
            claimed.push(c);
        }
    }
    Ok(claimed)
}

/// When the worker should look again: the earliest due attempt or lease expiry.
pub async fn next_wakeup(pool: &SqlitePool, pickup_ms: i64) -> Result<Option<i64>, StoreError> {
    let due: Option<i64> = sqlx::query_scalar(
        "SELECT MIN(CASE WHEN mode = 'async_relay' THEN next_attempt_at + ? ELSE next_attempt_at END) \
         FROM deliveries WHERE state = 'pending'",
    )
    .bind(pickup_ms)
    .fetch_one(pool)
    .await?;
    let lease: Option<i64> =
        sqlx::query_scalar("SELECT MIN(lease_until) FROM deliveries WHERE state = 'in_flight'")
            .fetch_one(pool)
            .await?;
    Ok(match (due, lease) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    })
}

const DELIVERY_COLUMNS: &str = "id, event_id, event_type, endpoint, flow, target, mode, edge, state, attempts_made, \
     max_attempts, next_attempt_at, created_at, updated_at, dead_at, error_class, last_status, replay_session, \
     replay_of, replayed_by";

fn delivery_from_row(row: &SqliteRow) -> Result<Delivery, StoreError> {
    let state: String = row.try_get("state")?;
    let opt_time = |name: &str| -> Result<Option<chrono::DateTime<chrono::Utc>>, StoreError> {
        Ok(row.try_get::<Option<i64>, _>(name)?.map(to_datetime))
    };
    Ok(Delivery {
        id: row.try_get("id")?,
        event_id: row.try_get("event_id")?,
        event_type: row.try_get("event_type")?,
        endpoint: row.try_get("endpoint")?,
        flow: row.try_get("flow")?,
        target: row.try_get("target")?,
        mode: mode_from_str(row.try_get("mode")?)?,
        edge: row.try_get("edge")?,
        state: DeliveryState::parse(&state).ok_or_else(|| corrupt(format!("state {state:?}")))?,
        attempts_made: row
            .try_get::<i64, _>("attempts_made")?
            .try_into()
            .map_err(corrupt)?,
        max_attempts: row
            .try_get::<i64, _>("max_attempts")?
            .try_into()
            .map_err(corrupt)?,
        next_attempt_at: opt_time("next_attempt_at")?,
        created_at: to_datetime(row.try_get("created_at")?),
        updated_at: to_datetime(row.try_get("updated_at")?),
        dead_at: opt_time("dead_at")?,
        error_class: class_from(row.try_get("error_class")?)?,
        last_status_code: row
            .try_get::<Option<i64>, _>("last_status")?
            .and_then(|s| u16::try_from(s).ok()),
        replay_session: row.try_get("replay_session")?,
        replay_of: row.try_get("replay_of")?,
        replayed_by: row.try_get("replayed_by")?,
        attempts: Vec::new(),
    })
}

fn attempt_from_row(row: &SqliteRow) -> Result<Attempt, StoreError> {
    let outcome = match row.try_get::<&str, _>("outcome")? {
        "in_flight" => AttemptOutcome::InFlight,
        "succeeded" => AttemptOutcome::Succeeded,
        "failed" => AttemptOutcome::Failed,
        other => return Err(corrupt(format!("attempt outcome {other:?}"))),
    };
    Ok(Attempt {
        id: row.try_get("id")?,
        number: row
            .try_get::<i64, _>("number")?
            .try_into()
            .map_err(corrupt)?,
        started_at: to_datetime(row.try_get("started_at")?),
        duration_ms: row
            .try_get::<Option<i64>, _>("duration_ms")?
            .and_then(|d| u64::try_from(d).ok()),
        outcome,
        status_code: row
            .try_get::<Option<i64>, _>("status_code")?
            .and_then(|s| u16::try_from(s).ok()),
        error_class: class_from(row.try_get("error_class")?)?,
        error: row.try_get("error")?,
        performed_by: row.try_get("performed_by")?,
    })
}

async fn attach_attempts(pool: &SqlitePool, deliveries: &mut [Delivery]) -> Result<(), StoreError> {
    for d in deliveries.iter_mut() {
        let rows = sqlx::query(
            "SELECT id, number, started_at, duration_ms, outcome, status_code, error_class, error, performed_by \
             FROM attempts WHERE delivery_id = ? ORDER BY number",
        )
        .bind(&d.id)
        .fetch_all(pool)
        .await?;
        d.attempts = rows
            .iter()
            .map(attempt_from_row)
            .collect::<Result<_, _>>()?;
    }
    Ok(())
}

impl DeliveryStore {
    /// The target's signing secrets that have not expired at `now`, oldest first.
    pub async fn active_secrets(
        &self,
        tenant: &str,
        target: &str,
        now: i64,
    ) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT secret FROM signing_secrets WHERE tenant = ? AND target = ? \
             AND (expires_at IS NULL OR expires_at > ?) ORDER BY created_at",
        )
        .bind(tenant)
        .bind(target)
        .bind(now)
        .fetch_all(&self.readers)
        .await?)
    }

    pub async fn delivery(&self, tenant: &str, id: &str) -> Result<Option<Delivery>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {DELIVERY_COLUMNS} FROM deliveries WHERE tenant = ? AND id = ?"
        ))
        .bind(tenant)
        .bind(id)
        .fetch_optional(&self.readers)
        .await?;
        let Some(row) = row else { return Ok(None) };
        let mut d = [delivery_from_row(&row)?];
        attach_attempts(&self.readers, &mut d).await?;
        let [d] = d;
        Ok(Some(d))
    }

    pub async fn event(&self, tenant: &str, id: &str) -> Result<Option<Event>, StoreError> {
        let Some(row) = sqlx::query(
            "SELECT id, endpoint, event_type, event_key, payload, created_at FROM events WHERE tenant = ? AND id = ?",
        )
        .bind(tenant)
        .bind(id)
        .fetch_optional(&self.readers)
        .await?
        else {
            return Ok(None);
        };
        let rows = sqlx::query(&format!(
            "SELECT {DELIVERY_COLUMNS} FROM deliveries WHERE event_id = ? ORDER BY created_at, id"
        ))
        .bind(id)
        .fetch_all(&self.readers)
        .await?;
        let mut deliveries = rows
            .iter()
            .map(delivery_from_row)
            .collect::<Result<Vec<_>, _>>()?;
        attach_attempts(&self.readers, &mut deliveries).await?;
        let payload: String = row.try_get("payload")?;
        Ok(Some(Event {
            id: row.try_get("id")?,
            endpoint: row.try_get("endpoint")?,
            event_type: row.try_get("event_type")?,
            event_key: row.try_get("event_key")?,
            payload: serde_json::from_str(&payload).map_err(corrupt)?,
            created_at: to_datetime(row.try_get("created_at")?),
            deliveries,
        }))
    }

    /// Deliveries of `endpoint` still pending or in flight.
    pub async fn pending_count(&self, tenant: &str, endpoint: &str) -> Result<u64, StoreError> {
        let n: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM deliveries WHERE tenant = ? AND endpoint = ? AND state IN ('pending', 'in_flight')",
        )
        .bind(tenant)
        .bind(endpoint)
        .fetch_one(&self.readers)
        .await?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    /// One DLQ page, newest first, after the `(dead_at, id)` position `after`.
    pub async fn dlq_page(
        &self,
        tenant: &str,
        filter: &DlqFilter,
        after: Option<(i64, String)>,
        limit: u32,
    ) -> Result<Vec<DlqEntry>, StoreError> {
        let (clause, binds) = dlq_where(filter);
        let mut sql = format!(
            "SELECT id, event_id, event_type, endpoint, flow, target, error_class, last_status, attempts_made, \
             dead_at, replay_session FROM deliveries WHERE tenant = ? AND state = 'dead'{clause}"
        );
        if after.is_some() {
            sql.push_str(" AND (dead_at, id) < (?, ?)");
        }
        sql.push_str(" ORDER BY dead_at DESC, id DESC LIMIT ?");
        let mut query = sqlx::query(&sql).bind(tenant);
        for b in binds {
            query = match b {
                Bind::Text(t) => query.bind(t),
                Bind::Int(i) => query.bind(i),
            };
        }
        if let Some((at, id)) = after {
            query = query.bind(at).bind(id);
        }
        let rows = query.bind(limit).fetch_all(&self.readers).await?;
        rows.iter()
            .map(|r| {
                Ok(DlqEntry {
                    delivery_id: r.try_get("id")?,
                    event_id: r.try_get("event_id")?,
                    event_type: r.try_get("event_type")?,
                    endpoint: r.try_get("endpoint")?,
                    flow: r.try_get("flow")?,
                    target: r.try_get("target")?,
                    error_class: class_from(r.try_get("error_class")?)?
                        .unwrap_or(ErrorClass::Connect),
                    last_status_code: r
                        .try_get::<Option<i64>, _>("last_status")?
                        .and_then(|s| u16::try_from(s).ok()),
                    attempts: r
                        .try_get::<i64, _>("attempts_made")?
                        .try_into()
                        .map_err(corrupt)?,
                    dead_at: to_datetime(r.try_get("dead_at")?),
                    replay_session: r.try_get("replay_session")?,
                })
            })
            .collect()
    }
}

pub enum Bind {
    Text(String),
    Int(i64),
}

/// The SQL condition (with a leading ` AND`) and binds of a DLQ filter.
pub fn dlq_where(filter: &DlqFilter) -> (String, Vec<Bind>) {
    let mut clause = String::new();
    let mut binds = Vec::new();
    let mut text = |column: &str, value: &Option<String>, clause: &mut String| {
        if let Some(v) = value {
            clause.push_str(&format!(" AND {column} = ?"));
            binds.push(Bind::Text(v.clone()));
        }
    };
    text("endpoint", &filter.endpoint, &mut clause);
    text("target", &filter.target, &mut clause);
    text("flow", &filter.flow, &mut clause);
    text(
        "error_class",
        &filter.error_class.map(|c| c.as_str().to_owned()),
        &mut clause,
    );
    if let Some(since) = filter.since {
        clause.push_str(" AND dead_at >= ?");
        binds.push(Bind::Int(since.timestamp_millis()));
    }
    if let Some(until) = filter.until {
        clause.push_str(" AND dead_at < ?");
        binds.push(Bind::Int(until.timestamp_millis()));
    }
    (clause, binds)
}

/// An event to insert.
pub struct NewEvent<'a> {
    pub tenant: &'a str,
    pub id: &'a str,
    pub endpoint: &'a str,
    pub event_type: &'a str,
    pub event_key: Option<&'a str>,
    pub payload: &'a Value,
}

/// Inserts the event row.
pub async fn insert_event(
    conn: &mut SqliteConnection,
    event: &NewEvent<'_>,
    now: i64,
) -> Result<(), StoreError> {
    let NewEvent {
        tenant,
        id,
        endpoint,
        event_type,
        event_key,
        payload,
    } = *event;
    sqlx::query(
        "INSERT INTO events (tenant, id, endpoint, event_type, event_key, payload, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(tenant)
    .bind(id)
    .bind(endpoint)
    .bind(event_type)
    .bind(event_key)
    .bind(payload.to_string())
    .bind(now)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Claims `(tenant, endpoint, key)` for `event_id`: `None` when claimed (new, or the old
/// claim was older than `cutoff`), else the id of the event that holds it.
pub async fn claim_event_key(
    conn: &mut SqliteConnection,
    tenant: &str,
    endpoint: &str,
    key: &str,
    event_id: &str,
    now: i64,
    cutoff: i64,
) -> Result<Option<String>, StoreError> {
    let done = sqlx::query(
        "INSERT INTO event_keys (tenant, endpoint, event_key, event_id, created_at) VALUES (?, ?, ?, ?, ?) \
         ON CONFLICT (tenant, endpoint, event_key) DO UPDATE SET event_id = excluded.event_id, \
         created_at = excluded.created_at WHERE event_keys.created_at < ?",
    )
    .bind(tenant)
    .bind(endpoint)
    .bind(key)
    .bind(event_id)
    .bind(now)
    .bind(cutoff)
    .execute(&mut *conn)
    .await?;
    if done.rows_affected() == 1 {
        return Ok(None);
    }
    let existing: String = sqlx::query_scalar(
        "SELECT event_id FROM event_keys WHERE tenant = ? AND endpoint = ? AND event_key = ?",
    )
    .bind(tenant)
    .bind(endpoint)
    .bind(key)
    .fetch_one(&mut *conn)
    .await?;
    Ok(Some(existing))
}

/// Reads a resource's spec and status inside a transaction.
pub async fn resource_json(
    conn: &mut SqliteConnection,
    tenant: &str,
    kind: &str,
    name: &str,
) -> Result<Option<(Value, Value)>, StoreError> {
    let row: Option<(String, String)> = sqlx::query_as(
        "SELECT spec, status FROM resources WHERE tenant = ? AND kind = ? AND name = ?",
    )
    .bind(tenant)
    .bind(kind)
    .bind(name)
    .fetch_optional(&mut *conn)
    .await?;
    row.map(|(spec, status)| {
        Ok((
            serde_json::from_str(&spec).map_err(corrupt)?,
            serde_json::from_str(&status).map_err(corrupt)?,
        ))
    })
    .transpose()
}

/// Headers as a map, for tests and the edge.
pub fn header_map(headers: &[(String, String)]) -> BTreeMap<String, String> {
    headers.iter().cloned().collect()
}
