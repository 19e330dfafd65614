//! Replay sessions: `PUT /v1/replays/{id}`, `GET /v1/replays`, `GET /v1/replays/{id}`,
//! `POST /v1/replays/{id}/cancel` (Idempotency-Key).
//!
//! The session id is the idempotency key of the PUT: its canonical body's fingerprint is
//! stored with the session; the same body again answers 200 with the session and creates
//! nothing, another body answers 422. Each selected dead delivery gets one new delivery,
//! linked to the session, and leaves the DLQ (state `replayed`); the primary key of
//! `replay_items` and the state check, both inside the one write transaction, make a second
//! re-delivery impossible. A re-delivery that dies again is in the DLQ, linked to its session.

use async_trait::async_trait;
use axum::Json;
use axum::Router;
use axum::extract::{OriginalUri, Path, Query, State};
use axum::http::{HeaderMap, Method};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use sqlx::{Row, SqliteConnection};
use switchyard_protocol::{
    FlowMode, Page, ReplayCounts, ReplayDryRun, ReplayItem, ReplayItemStatus, ReplayRequest,
    ReplaySelection, ReplaySession, ReplayStatus,
};

use crate::AppState;
use crate::clock::to_datetime;
use crate::delivery::store::{self as dstore, Bind, NewDelivery};
use crate::error::ApiError;
use crate::extract::{JsonBody, Tenant};
use crate::idempotency::{self, OpContext, Operation};
use crate::store::{StoreError, StoreTx, StoredResponse};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/replays", get(list))
        .route("/v1/replays/{id}", put(start).get(read))
        .route("/v1/replays/{id}/cancel", post(cancel))
}

/// Most deliveries one filter session replays.
pub const MAX_FILTER_SELECTION: u32 = 100_000;
const MAX_IDS: usize = 1_000;

fn check_session_id(id: &str) -> Result<(), ApiError> {
    let ok = !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._:-".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(ApiError::validation(
            "session_id",
            "must be 1-128 characters of letters, digits and . _ : -",
        ))
    }
}

fn check_request(request: &ReplayRequest) -> Result<(), ApiError> {
    if let ReplaySelection::DeliveryIds(ids) = &request.selection
        && (ids.is_empty() || ids.len() > MAX_IDS)
    {
        return Err(ApiError::validation(
            "selection.delivery_ids",
            format!("must name 1 to {MAX_IDS} deliveries"),
        ));
    }
    if let Some(rate) = request.rate_per_s
        && !(rate.is_finite() && rate > 0.0 && rate <= 10_000.0)
    {
        return Err(ApiError::validation(
            "rate_per_s",
            "must be a number above 0 and at most 10000",
        ));
    }
    Ok(())
}

/// The dead deliveries a selection names, oldest death first (ids: in the given order).
async fn selected(
    conn: &mut SqliteConnection,
    tenant: &str,
    selection: &ReplaySelection,
) -> Result<Vec<String>, StoreError> {
    match selection {
        ReplaySelection::DeliveryIds(ids) => {
            let mut seen = std::collections::HashSet::new();
            Ok(ids.iter().filter(|id| seen.insert(*id)).cloned().collect())
        }
        ReplaySelection::Filter(filter) => {
            let (clause, binds) = dstore::dlq_where(filter);
            let sql = format!(
                "SELECT id FROM deliveries WHERE tenant = ? AND state = 'dead'{clause} ORDER BY dead_at, id LIMIT ?"
            );
            let mut query = sqlx::query_scalar::<_, String>(&sql).bind(tenant);
            for b in binds {
                query = match b {
                    Bind::Text(t) => query.bind(t),
                    Bind::Int(i) => query.bind(i),
                };
            }
            Ok(query
                .bind(MAX_FILTER_SELECTION)
                .fetch_all(&mut *conn)
                .await?)
        }
    }
}

async fn dry_run_count(
    conn: &mut SqliteConnection,
    tenant: &str,
    selection: &ReplaySelection,
) -> Result<u64, StoreError> {
    let ids = selected(conn, tenant, selection).await?;
    if matches!(selection, ReplaySelection::Filter(_)) {
        return Ok(ids.len() as u64);
    }
    let mut n = 0;
    for id in ids {
        let dead: Option<i64> = sqlx::query_scalar(
            "SELECT 1 FROM deliveries WHERE tenant = ? AND id = ? AND state = 'dead'",
        )
        .bind(tenant)
        .bind(&id)
        .fetch_optional(&mut *conn)
        .await?;
        n += u64::from(dead.is_some());
    }
    Ok(n)
}

async fn start(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(id): Path<String>,
    body: Result<JsonBody, ApiError>,
) -> Result<Response, ApiError> {
    check_session_id(&id)?;
    let JsonBody(body) = body?;
    let request: ReplayRequest = serde_json::from_value(body.clone())
        .map_err(|e| ApiError::validation("body", e.to_string()))?;
    check_request(&request)?;
    let ctx = &state.delivery;
    if request.dry_run {
        let mut conn = ctx
            .store
            .readers
            .acquire()
            .await
            .map_err(StoreError::from)?;
        let count = dry_run_count(&mut conn, &tenant, &request.selection).await?;
        return Ok(Json(ReplayDryRun {
            session_id: id,
            dry_run: true,
            count,
        })
        .into_response());
    }
    let fingerprint = Sha256::digest(crate::canonical_json::to_vec(&body)).to_vec();
    let now = ctx.clock.now_ms();
    let mut tx = ctx
        .store
        .writer
        .begin_with("BEGIN IMMEDIATE")
        .await
        .map_err(StoreError::from)?;
    let existing: Option<Vec<u8>> =
        sqlx::query_scalar("SELECT fingerprint FROM replay_sessions WHERE tenant = ? AND id = ?")
            .bind(&tenant)
            .bind(&id)
            .fetch_optional(&mut *tx)
            .await
            .map_err(StoreError::from)?;
    if let Some(existing) = existing {
        if existing != fingerprint {
            return Err(ApiError::ReplaySessionReused { id });
        }
        let session = load(&mut tx, &tenant, &id, true, now).await?;
        return Ok(session_response(
            200,
            session.ok_or_else(|| ApiError::Internal("session vanished".into()))?,
        ));
    }
    let originals = selected(&mut tx, &tenant, &request.selection).await?;
    let mut replayed = 0u64;
    for (position, original) in originals.iter().enumerate() {
        let row = sqlx::query(
            "SELECT state, event_id, event_type, endpoint, flow, target, mode, edge FROM deliveries WHERE tenant = ? AND id = ?",
        )
        .bind(&tenant)
        .bind(original)
        .fetch_optional(&mut *tx)
        .await
        .map_err(StoreError::from)?;
        let (delivery_id, skip_reason) = match row {
            None => (None, Some("no such delivery".to_owned())),
            Some(row) if row.get::<String, _>("state") != "dead" => (
                None,
                Some(format!(
                    "not in the DLQ (state {})",
                    row.get::<String, _>("state")
                )),
            ),
            Some(row) => {
                let mode = match row.get::<String, _>("mode").as_str() {
                    "async_relay" => FlowMode::AsyncRelay,
                    // Nobody waits on a replay: sync deliveries replay through the worker.
                    _ => FlowMode::AsyncInline,
                };
                let delay = request
                    .rate_per_s
                    .map_or(0, |rate| ((replayed as f64) * 1000.0 / rate).floor() as i64);
                let edge: Option<String> = row.get("edge");
                let new = NewDelivery {
                    tenant: &tenant,
                    event_id: row.get("event_id"),
                    event_type: row.get("event_type"),
                    endpoint: row.get("endpoint"),
                    flow: row.get("flow"),
                    target: row.get("target"),
                    mode,
                    edge: edge.as_deref(),
                    max_attempts: ctx.policy.max_attempts(),
                    next_attempt_at: now + delay,
                    replay_session: Some(&id),
                    replay_of: Some(original),
                };
                let new_id = dstore::insert_delivery(&mut tx, &new, now).await?;
                sqlx::query(
                    "UPDATE deliveries SET state = 'replayed', replayed_by = ?, updated_at = ? WHERE id = ? AND state = 'dead'",
                )
                .bind(&new_id)
                .bind(now)
                .bind(original)
                .execute(&mut *tx)
                .await
                .map_err(StoreError::from)?;
                replayed += 1;
                (Some(new_id), None)
            }
        };
        sqlx::query(
            "INSERT INTO replay_items (tenant, session_id, original_id, delivery_id, skip_reason, position) \
             VALUES (?, ?, ?, ?, ?, ?)",
        )
        .bind(&tenant)
        .bind(&id)
        .bind(original)
        .bind(delivery_id)
        .bind(skip_reason)
        .bind(position as i64)
        .execute(&mut *tx)
        .await
        .map_err(StoreError::from)?;
    }
    sqlx::query(
        "INSERT INTO replay_sessions (tenant, id, fingerprint, request, rate_per_s, created_at) VALUES (?, ?, ?, ?, ?, ?)",
    )
    .bind(&tenant)
    .bind(&id)
    .bind(&fingerprint)
    .bind(serde_json::to_string(&request).expect("requests serialize"))
    .bind(request.rate_per_s)
    .bind(now)
    .execute(&mut *tx)
    .await
    .map_err(StoreError::from)?;
    let session = load(&mut tx, &tenant, &id, true, now).await?;
    tx.commit().await.map_err(StoreError::from)?;
    ctx.wake.notify_one();
    Ok(session_response(
        201,
        session.ok_or_else(|| ApiError::Internal("session vanished".into()))?,
    ))
}

fn session_stored(status: u16, session: &ReplaySession) -> StoredResponse {
    StoredResponse {
        status,
        headers: vec![
            ("content-type".into(), "application/json".into()),
            ("location".into(), format!("/v1/replays/{}", session.id)),
        ],
        body: serde_json::to_vec(session).expect("sessions serialize"),
    }
}

fn session_response(status: u16, session: ReplaySession) -> Response {
    session_stored(status, &session).into_response()
}

/// Reads a session with its counts (and items when `with_items`).
pub async fn load(
    conn: &mut SqliteConnection,
    tenant: &str,
    id: &str,
    with_items: bool,
    _now: i64,
) -> Result<Option<ReplaySession>, StoreError> {
    let Some(row) = sqlx::query(
        "SELECT request, rate_per_s, created_at, cancelled_at FROM replay_sessions WHERE tenant = ? AND id = ?",
    )
    .bind(tenant)
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?
    else {
        return Ok(None);
    };
    let request: ReplayRequest = serde_json::from_str(row.try_get("request")?)
        .map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let cancelled_at: Option<i64> = row.try_get("cancelled_at")?;
    let items = sqlx::query(
        "SELECT i.original_id, i.delivery_id, i.skip_reason, d.state FROM replay_items i \
         LEFT JOIN deliveries d ON d.id = i.delivery_id WHERE i.tenant = ? AND i.session_id = ? ORDER BY i.position",
    )
    .bind(tenant)
    .bind(id)
    .fetch_all(&mut *conn)
    .await?;
    let mut counts = ReplayCounts::default();
    let mut out = Vec::with_capacity(items.len());
    for item in &items {
        let delivery_id: Option<String> = item.try_get("delivery_id")?;
        let state: Option<String> = item.try_get("state")?;
        let status = match (delivery_id.is_some(), state.as_deref()) {
            (false, _) => ReplayItemStatus::Skipped,
            (true, Some("succeeded")) => ReplayItemStatus::Succeeded,
            (true, Some("dead" | "replayed")) => ReplayItemStatus::Failed,
            (true, Some("cancelled")) => ReplayItemStatus::Cancelled,
            (true, _) => ReplayItemStatus::Pending,
        };
        match status {
            ReplayItemStatus::Skipped => counts.skipped += 1,
            ReplayItemStatus::Succeeded => counts.succeeded += 1,
            ReplayItemStatus::Failed => counts.failed += 1,
            ReplayItemStatus::Cancelled => counts.cancelled += 1,
            ReplayItemStatus::Pending => counts.pending += 1,
        }
        if with_items {
            out.push(ReplayItem {
                original_delivery_id: item.try_get("original_id")?,
                delivery_id,
                status,
                reason: item.try_get("skip_reason")?,
            });
        }
    }
    counts.total = counts.succeeded + counts.failed + counts.cancelled + counts.pending;
    let status = if cancelled_at.is_some() {
        ReplayStatus::Cancelled
    } else if counts.pending > 0 {
        ReplayStatus::Running
    } else {
        ReplayStatus::Completed
    };
    Ok(Some(ReplaySession {
        id: id.to_owned(),
        status,
        selection: request.selection,
        rate_per_s: row.try_get("rate_per_s")?,
        created_at: to_datetime(row.try_get("created_at")?),
        cancelled_at: cancelled_at.map(to_datetime),
        counts,
        items: with_items.then_some(out),
    }))
}

async fn read(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let mut conn = state
        .delivery
        .store
        .readers
        .acquire()
        .await
        .map_err(StoreError::from)?;
    let session = load(&mut conn, &tenant, &id, true, state.clock.now_ms())
        .await?
        .ok_or(ApiError::NotFound {
            kind: "replay session",
            name: id,
        })?;
    Ok(Json(session).into_response())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    pub limit: Option<u32>,
    pub cursor: Option<String>,
}

async fn list(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    query: Result<Query<ListQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Page<ReplaySession>>, ApiError> {
    let Query(query) = query.map_err(|e| ApiError::validation("query", e.body_text()))?;
    let limit = query.limit.unwrap_or(50);
    if !(1..=200).contains(&limit) {
        return Err(ApiError::validation("limit", "must be between 1 and 200"));
    }
    let after = query
        .cursor
        .as_deref()
        .map(|c| {
            URL_SAFE_NO_PAD
                .decode(c)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .and_then(|t| {
                    let (at, id) = t.split_once(':')?;
                    Some((at.parse::<i64>().ok()?, id.to_owned()))
                })
                .ok_or_else(|| ApiError::validation("cursor", "is not a cursor this server issued"))
        })
        .transpose()?;
    let mut conn = state
        .delivery
        .store
        .readers
        .acquire()
        .await
        .map_err(StoreError::from)?;
    let (at, after_id) = after.unwrap_or((i64::MAX, String::new()));
    let rows: Vec<(String, i64)> = sqlx::query_as(
        "SELECT id, created_at FROM replay_sessions WHERE tenant = ? \
         AND (created_at < ? OR (created_at = ? AND (? = '' OR id < ?))) ORDER BY created_at DESC, id DESC LIMIT ?",
    )
    .bind(&tenant)
    .bind(at)
    .bind(at)
    .bind(&after_id)
    .bind(&after_id)
    .bind(limit + 1)
    .fetch_all(&mut *conn)
    .await
    .map_err(StoreError::from)?;
    let more = rows.len() > limit as usize;
    let mut items = Vec::new();
    for (id, _) in rows.iter().take(limit as usize) {
        if let Some(s) = load(&mut conn, &tenant, id, false, 0).await? {
            items.push(s);
        }
    }
    let next_cursor = more
        .then(|| rows.get(limit as usize - 1))
        .flatten()
        .map(|(id, at)| URL_SAFE_NO_PAD.encode(format!("{at}:{id}")));
    Ok(Json(Page { items, next_cursor }))
}

/// Cancels a session: re-deliveries not yet sent become `cancelled` and their originals
/// return to the DLQ; attempts already in flight finish, and are not retried.
struct Cancel {
    id: String,
}

#[async_trait]
impl Operation for Cancel {
    async fn execute(
        &self,
        tx: &mut dyn StoreTx,
        ctx: &OpContext<'_>,
    ) -> Result<StoredResponse, ApiError> {
        let conn = tx
            .sqlite()
            .ok_or_else(|| ApiError::Internal("replay sessions need the SQLite store".into()))?;
        let exists: Option<Option<i64>> = sqlx::query_scalar(
            "SELECT cancelled_at FROM replay_sessions WHERE tenant = ? AND id = ?",
        )
        .bind(ctx.tenant)
        .bind(&self.id)
        .fetch_optional(&mut *conn)
        .await
        .map_err(StoreError::from)?;
        match exists {
            None => {
                return Err(ApiError::NotFound {
                    kind: "replay session",
                    name: self.id.clone(),
                });
            }
            Some(None) => cancel_pending(conn, ctx.tenant, &self.id, ctx.now).await?,
            Some(Some(_)) => {}
        }
        let session = load(conn, ctx.tenant, &self.id, true, ctx.now)
            .await?
            .ok_or_else(|| ApiError::Internal("session vanished".into()))?;
        Ok(session_stored(200, &session))
    }
}

/// Marks the session cancelled and withdraws its unsent re-deliveries.
pub async fn cancel_pending(
    conn: &mut SqliteConnection,
    tenant: &str,
    id: &str,
    now: i64,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE replay_sessions SET cancelled_at = ? WHERE tenant = ? AND id = ? AND cancelled_at IS NULL")
        .bind(now)
        .bind(tenant)
        .bind(id)
        .execute(&mut *conn)
        .await?;
    let originals: Vec<Option<String>> = sqlx::query_scalar(
        "UPDATE deliveries SET state = 'cancelled', next_attempt_at = NULL, updated_at = ? \
         WHERE tenant = ? AND replay_session = ? AND state = 'pending' RETURNING replay_of",
    )
    .bind(now)
    .bind(tenant)
    .bind(id)
    .fetch_all(&mut *conn)
    .await?;
    for original in originals.into_iter().flatten() {
        restore_original(conn, &original, now).await?;
    }
    Ok(())
}

/// Puts a replayed delivery back into the DLQ (its replay was withdrawn).
pub async fn restore_original(
    conn: &mut SqliteConnection,
    original: &str,
    now: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE deliveries SET state = 'dead', replayed_by = NULL, updated_at = ? WHERE id = ? AND state = 'replayed'",
    )
    .bind(now)
    .bind(original)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

async fn cancel(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(id): Path<String>,
    uri: OriginalUri,
    headers: HeaderMap,
) -> Response {
    if let Err(e) = check_session_id(&id) {
        return e.into_response();
    }
    let fp = idempotency::fingerprint(Method::POST.as_str(), uri.path(), None, None);
    idempotency::run(&state, &tenant, &headers, fp, &Cancel { id }).await
}
