//! Retirement sessions: `PUT /v1/retirements/{id}`, `GET /v1/retirements`,
//! `GET /v1/retirements/{id}`, `POST /v1/retirements/{id}/cancel` (Idempotency-Key).
//!
//! The id is chosen by the client and is the retirement's idempotency key: the request's
//! fingerprint (SHA-256 of the canonical JSON of the request with its defaults filled in,
//! so `{"kind":"target","name":"crm"}` and the same with `"dlq":"keep"` are one request) is
//! stored with it; the same request again answers 200 with the retirement, another answers
//! 422 `retirement_reused`. The server walks it (`advance`, decided by `machine`):
//! `blocked → draining → disabled → scheduled → deleted`, or `cancelled` (`cancel`).
//! Handlers parse, validate and render; the units of work are in `advance` and `cancel`.

pub mod advance;
pub mod cancel;
pub mod machine;

use axum::Json;
use axum::extract::{OriginalUri, Path, Query, State};
use axum::http::{HeaderMap, Method};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use switchyard_protocol::{
    Retirement, RetirementDryRun, RetirementList, RetirementRequest, RetirementState,
    RetirementStep, validate_name,
};
use utoipa::openapi::path::HttpMethod::{Get, Post, Put};
use utoipa_axum::router::OpenApiRouter;

use crate::AppState;
use crate::clock::to_datetime;
use crate::error::ApiError;
use crate::extract::{JsonBody, Tenant};
use crate::idempotency;
use crate::openapi::{retirements as doc, route};
use crate::store::{RetirementRow, StoredResponse};

/// The longest grace period: 7 days.
pub const MAX_GRACE_SECONDS: u64 = 604_800;
/// The most retirements one `GET /v1/retirements` lists.
pub const MAX_PAGE: u32 = 200;

/// Where a test's `SWITCHYARD_TEST_CRASH_AT=retirement_before:STATE` (or `retirement_after:`)
/// aborts the control plane: just before, or just after, the commit of the transition into
/// `state`. Tests only: a release build has no crash points.
#[cfg(feature = "fault-injection")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrashPoint {
    pub state: RetirementState,
    pub after_commit: bool,
}

#[cfg(feature = "fault-injection")]
impl CrashPoint {
    /// `retirement_before:draining`, `retirement_after:deleted`, …
    pub fn parse(text: &str) -> Option<Self> {
        let (when, state) = text.split_once(':')?;
        let after_commit = match when {
            "retirement_before" => false,
            "retirement_after" => true,
            _ => return None,
        };
        let state = serde_json::from_value(serde_json::Value::String(state.to_owned())).ok()?;
        Some(Self {
            state,
            after_commit,
        })
    }
}

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(route("/v1/retirements", Get, list, doc::list()))
        .routes(route("/v1/retirements/{id}", Put, start, doc::start()))
        .routes(route("/v1/retirements/{id}", Get, read, doc::read()))
        .routes(route(
            "/v1/retirements/{id}/cancel",
            Post,
            cancel,
            doc::cancel(),
        ))
}

/// A retirement id has the replay session id's form.
fn check_id(id: &str) -> Result<(), ApiError> {
    if switchyard_protocol::replay::is_session_id(id) {
        Ok(())
    } else {
        Err(ApiError::validation(
            "id",
            "must be 1-128 characters of letters, digits and . _ : -",
        ))
    }
}

fn check_request(request: &RetirementRequest) -> Result<(), ApiError> {
    validate_name(&request.name).map_err(|e| ApiError::validation("name", e.to_string()))?;
    if request.grace_seconds > MAX_GRACE_SECONDS {
        return Err(ApiError::validation(
            "grace_seconds",
            format!("must be between 0 and {MAX_GRACE_SECONDS} (7 days)"),
        ));
    }
    Ok(())
}

/// The wire form of a stored retirement.
pub fn render(row: RetirementRow) -> Retirement {
    Retirement {
        id: row.id,
        kind: row.kind,
        name: row.name,
        state: row.state,
        grace_seconds: row.grace_seconds,
        cascade_flows: row.cascade_flows,
        dlq: row.dlq,
        blockers: row.blockers,
        impact: row.impact,
        drain_eta: row.drain_eta.map(to_datetime),
        delete_at: row.delete_at.map(to_datetime),
        cascaded_flows: row.cascaded_flows,
        created_at: to_datetime(row.created_at),
        updated_at: to_datetime(row.updated_at),
        history: row
            .history
            .into_iter()
            .map(|(state, at)| RetirementStep {
                state,
                at: to_datetime(at),
            })
            .collect(),
    }
}

pub(crate) fn stored(status: u16, retirement: &Retirement) -> StoredResponse {
    StoredResponse {
        status,
        headers: vec![
            ("content-type".into(), "application/json".into()),
            (
                "location".into(),
                format!("/v1/retirements/{}", retirement.id),
            ),
        ],
        body: serde_json::to_vec(retirement).expect("retirements serialize"),
    }
}

async fn start(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(id): Path<String>,
    body: Result<JsonBody, ApiError>,
) -> Result<Response, ApiError> {
    check_id(&id)?;
    let JsonBody(body) = body?;
    let request: RetirementRequest =
        serde_json::from_value(body).map_err(|e| ApiError::validation("body", e.to_string()))?;
    check_request(&request)?;
    let ctx = &state.delivery;
    if request.dry_run {
        let facts = state
            .store
            .retirement_facts(&tenant, request.kind, &request.name)
            .await?;
        if !facts.exists {
            return Err(ApiError::NotFound {
                kind: request.kind.as_str(),
                name: request.name,
            });
        }
        return Ok(Json(RetirementDryRun {
            id,
            dry_run: true,
            would_start: machine::initial_state(request.cascade_flows, &facts),
            blockers: machine::blockers(request.cascade_flows, &facts),
            impact: machine::impact(&facts),
        })
        .into_response());
    }
    let normalized = serde_json::to_value(&request).expect("requests serialize");
    let fingerprint = Sha256::digest(crate::canonical_json::to_vec(&normalized)).to_vec();
    match advance::start(ctx, &tenant, &id, &fingerprint, &request).await? {
        advance::Started::Created(row) => {
            ctx.wake.notify_one();
            Ok(stored(201, &render(row)).into_response())
        }
        advance::Started::Exists(row) if row.fingerprint == fingerprint => {
            Ok(stored(200, &render(row)).into_response())
        }
        advance::Started::Exists(_) => Err(ApiError::RetirementReused { id }),
    }
}

async fn read(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let row = state
        .store
        .retirement(&tenant, &id)
        .await?
        .ok_or(ApiError::NotFound {
            kind: "retirement",
            name: id,
        })?;
    Ok(Json(render(row)).into_response())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    pub state: Option<String>,
    pub limit: Option<u32>,
}

async fn list(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    query: Result<Query<ListQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<RetirementList>, ApiError> {
    let Query(query) = query.map_err(|e| ApiError::validation("query", e.body_text()))?;
    let limit = query.limit.unwrap_or(50);
    if !(1..=MAX_PAGE).contains(&limit) {
        return Err(ApiError::validation(
            "limit",
            format!("must be between 1 and {MAX_PAGE}"),
        ));
    }
    let filter = query
        .state
        .map(|s| {
            serde_json::from_value::<RetirementState>(serde_json::Value::String(s)).map_err(|_| {
                ApiError::validation(
                    "state",
                    "must be blocked, draining, disabled, scheduled, deleted or cancelled",
                )
            })
        })
        .transpose()?;
    let rows = state.store.list_retirements(&tenant, filter, limit).await?;
    Ok(Json(RetirementList {
        items: rows.into_iter().map(render).collect(),
    }))
}

async fn cancel(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(id): Path<String>,
    uri: OriginalUri,
    headers: HeaderMap,
) -> Response {
    if let Err(e) = check_id(&id) {
        return e.into_response();
    }
    let fp = idempotency::fingerprint(Method::POST.as_str(), uri.path(), None, None);
    idempotency::run(&state, &tenant, &headers, fp, &cancel::Cancel { id }).await
}
