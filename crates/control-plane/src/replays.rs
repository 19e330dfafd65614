//! Replay sessions: `PUT /v1/replays/{id}`, `GET /v1/replays`, `GET /v1/replays/{id}`,
//! `POST /v1/replays/{id}/cancel` (Idempotency-Key).
//!
//! The session id is the idempotency key of the PUT: its canonical body's fingerprint is
//! stored with the session; the same body again answers 200 with the session and creates
//! nothing, another body answers 422. Each selected dead delivery gets one new delivery,
//! linked to the session, and leaves the DLQ (state `replayed`). The session is created by
//! one guarded insert and each original leaves the DLQ by one guarded update, all in one
//! commit (`ReplayStore::start_replay`), so a second re-delivery is impossible, whichever
//! replica the copies reach. A re-delivery that dies again is in the DLQ, linked to its
//! session.

use async_trait::async_trait;
use axum::Json;
use axum::extract::{OriginalUri, Path, Query, State};
use axum::http::{HeaderMap, Method};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use switchyard_protocol::{
    DeliveryState, Page, ReplayCounts, ReplayDryRun, ReplayItem, ReplayItemStatus, ReplayRequest,
    ReplaySelection, ReplaySession, ReplayStatus,
};
use utoipa::openapi::path::HttpMethod::{Get, Post, Put};
use utoipa_axum::router::OpenApiRouter;

use crate::AppState;
use crate::clock::to_datetime;
use crate::error::ApiError;
use crate::extract::{JsonBody, Tenant};
use crate::idempotency::{self, OpContext, Operation};
use crate::openapi::{delivery as doc, route};
use crate::store::{NewReplay, ReplayRow, ReplayStart, StoreTx, StoredResponse};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(route("/v1/replays", Get, list, doc::replay_list()))
        .routes(route("/v1/replays/{id}", Put, start, doc::replay_start()))
        .routes(route("/v1/replays/{id}", Get, read, doc::replay_read()))
        .routes(route(
            "/v1/replays/{id}/cancel",
            Post,
            cancel,
            doc::replay_cancel(),
        ))
}

/// Most deliveries one filter session replays by default (`--max-replay-selection`).
pub const MAX_FILTER_SELECTION: u32 = 100_000;
const MAX_IDS: usize = switchyard_protocol::replay::MAX_DELIVERY_IDS;
/// The most sessions one page of `GET /v1/replays` lists.
pub const MAX_PAGE: u32 = 200;

fn check_session_id(id: &str) -> Result<(), ApiError> {
    if switchyard_protocol::replay::is_session_id(id) {
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
        && !(rate.is_finite()
            && (switchyard_protocol::replay::MIN_RATE_PER_S
                ..=switchyard_protocol::replay::MAX_RATE_PER_S)
                .contains(&rate))
    {
        return Err(ApiError::validation(
            "rate_per_s",
            "must be a number from 0.001 to 10000 (re-deliveries per second)",
        ));
    }
    Ok(())
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
        let count = state
            .store
            .count_replayable(&tenant, &request, state.limits.max_replay_selection)
            .await?;
        return Ok(Json(ReplayDryRun {
            session_id: id,
            dry_run: true,
            count,
        })
        .into_response());
    }
    let fingerprint = Sha256::digest(crate::canonical_json::to_vec(&body)).to_vec();
    let new = NewReplay {
        tenant: &tenant,
        id: &id,
        fingerprint: &fingerprint,
        request: &request,
        filter_limit: state.limits.max_replay_selection,
        max_attempts: ctx.policy.max_attempts(),
        now: ctx.clock.now_ms(),
        #[cfg(feature = "fault-injection")]
        overwrite: ctx.config.unguarded_replay,
    };
    match state.store.start_replay(&new).await? {
        ReplayStart::Created(row) => {
            ctx.wake.notify_one();
            Ok(session_response(201, session(row, true)))
        }
        ReplayStart::Exists {
            fingerprint: existing,
            session: row,
        } if existing == fingerprint => Ok(session_response(200, session(row, true))),
        ReplayStart::Exists { .. } => Err(ApiError::ReplaySessionReused { id }),
    }
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

/// A stored session with its counts (and items when `with_items`): each item's status
/// follows from its re-delivery's state.
pub fn session(row: ReplayRow, with_items: bool) -> ReplaySession {
    let mut counts = ReplayCounts::default();
    let mut out = Vec::with_capacity(row.items.len());
    for item in row.items {
        let status = match (item.delivery_id.is_some(), item.state) {
            (false, _) => ReplayItemStatus::Skipped,
            (true, Some(DeliveryState::Succeeded)) => ReplayItemStatus::Succeeded,
            (true, Some(DeliveryState::Dead | DeliveryState::Replayed)) => ReplayItemStatus::Failed,
            (true, Some(DeliveryState::Cancelled)) => ReplayItemStatus::Cancelled,
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
                original_delivery_id: item.original_id,
                delivery_id: item.delivery_id,
                status,
                reason: item.skip_reason,
            });
        }
    }
    counts.total = counts.succeeded + counts.failed + counts.cancelled + counts.pending;
    let status = if row.cancelled_at.is_some() {
        ReplayStatus::Cancelled
    } else if counts.pending > 0 {
        ReplayStatus::Running
    } else {
        ReplayStatus::Completed
    };
    ReplaySession {
        id: row.id,
        status,
        selection: row.request.selection,
        rate_per_s: row.rate_per_s,
        created_at: to_datetime(row.created_at),
        cancelled_at: row.cancelled_at.map(to_datetime),
        counts,
        items: with_items.then_some(out),
    }
}

async fn read(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let row = state
        .store
        .replay(&tenant, &id)
        .await?
        .ok_or(ApiError::NotFound {
            kind: "replay session",
            name: id,
        })?;
    let session = session(row, true);
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
    if !(1..=MAX_PAGE).contains(&limit) {
        return Err(ApiError::validation(
            "limit",
            format!("must be between 1 and {MAX_PAGE}"),
        ));
    }
    let after = query
        .cursor
        .as_deref()
        .map(crate::cursor::decode_at)
        .transpose()?;
    let rows = state.store.list_replays(&tenant, after, limit + 1).await?;
    let more = rows.len() > limit as usize;
    let page: Vec<(i64, String)> = rows.iter().map(|r| (r.created_at, r.id.clone())).collect();
    let items = rows
        .into_iter()
        .take(limit as usize)
        .map(|r| session(r, false))
        .collect();
    let next_cursor = more
        .then(|| page.get(limit as usize - 1))
        .flatten()
        .map(|(at, id)| crate::cursor::encode_at(*at, id));
    Ok(Json(Page { items, next_cursor }))
}

/// Cancels a session: re-deliveries not yet sent become `cancelled` and their originals
/// return to the DLQ; attempts already in flight finish, and are not retried.
struct Cancel {
    id: String,
    /// The re-deliveries this request withdrew, set by `execute`; counted in the metrics
    /// (`switchyard_deliveries_finished_total{outcome="cancelled"}`) only once its answer is
    /// the fresh one, i.e. committed.
    withdrawn: std::sync::atomic::AtomicU64,
}

#[async_trait]
impl Operation for Cancel {
    async fn execute(
        &self,
        tx: &mut dyn StoreTx,
        ctx: &OpContext<'_>,
    ) -> Result<StoredResponse, ApiError> {
        let row = tx
            .cancel_replay(ctx.tenant, &self.id, ctx.now)
            .await?
            .ok_or_else(|| ApiError::NotFound {
                kind: "replay session",
                name: self.id.clone(),
            })?;
        // The store keeps the first cancel's time: only the request that cancelled the
        // session withdrew anything (the items cancelled now are the ones it withdrew).
        let withdrawn = if row.cancelled_at == Some(ctx.now) {
            row.items
                .iter()
                .filter(|i| i.state == Some(DeliveryState::Cancelled))
                .count() as u64
        } else {
            0
        };
        self.withdrawn
            .store(withdrawn, std::sync::atomic::Ordering::Relaxed);
        Ok(session_stored(200, &session(row, true)))
    }
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
    let op = Cancel {
        id,
        withdrawn: Default::default(),
    };
    let response = idempotency::run(&state, &tenant, &headers, fp, &op).await;
    let fresh = !response
        .headers()
        .contains_key(switchyard_protocol::headers::IDEMPOTENT_REPLAYED);
    if fresh && response.status().is_success() {
        state.telemetry.deliveries_cancelled(
            &tenant,
            op.withdrawn.load(std::sync::atomic::Ordering::Relaxed),
        );
    }
    response
}
