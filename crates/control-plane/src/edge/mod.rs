//! The edge plane: the control plane's side of the relay protocol (`/v1/edges/{name}/…`)
//! and, in [`agent`], the edge process itself.
//!
//! Protocol (types in `switchyard_protocol::edge`):
//! 1. `POST /v1/edges/{name}/lease {max}`: the control plane claims up to `max` due
//!    `async_relay` attempts of flows naming this edge, exactly as its own worker claims
//!    (attempt row committed in flight, lease = target timeout + margin, fencing token
//!    bumped) and answers with the signed requests. Secrets never leave the control plane.
//! 2. The edge sends each request and reports `POST /v1/edges/{name}/attempts/{attempt_id}`
//!    with the lease token. The report is idempotent: repeating it answers `recorded: true,
//!    duplicate: true`; a report after the lease expired (and the attempt was counted failed)
//!    answers `recorded: false, reason: lease_lost`. The edge retries a report that got no
//!    answer on the delivery retry schedule (5 attempts).
//! 3. A lease that expires unreported counts as a failed attempt (`timeout`); a due relay
//!    attempt that no edge leases within the pickup timeout counts as a failed control
//!    plane → edge hop (`connect`). Both consume the delivery's attempts, then the DLQ.

pub mod agent;

use axum::Json;
use axum::extract::{Path, State};
use switchyard_protocol::{
    AttemptOutcome, EdgeAttemptAck, EdgeAttemptReport, EdgeLease, EdgeLeaseRequest, RelayedAttempt,
};
use utoipa::openapi::path::HttpMethod::Post;
use utoipa_axum::router::OpenApiRouter;

use crate::AppState;
use crate::clock::to_datetime;
use crate::delivery::http::AttemptResult;
use crate::delivery::{decide, reaper};
use crate::error::ApiError;
use crate::extract::{JsonBody, Tenant};
use crate::openapi::{delivery as doc, route};
use crate::store::{DueScope, Fence, FinishedBy, RelayedAttemptRow};

/// The most attempts one lease takes.
pub const MAX_LEASE: u32 = 100;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(route(
            "/v1/edges/{name}/lease",
            Post,
            lease,
            doc::edge_lease(),
        ))
        .routes(route(
            "/v1/edges/{name}/attempts/{attempt_id}",
            Post,
            report,
            doc::edge_report(),
        ))
}

fn performer(name: &str) -> String {
    format!("edge:{name}")
}

async fn lease(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(name): Path<String>,
    body: Result<JsonBody, ApiError>,
) -> Result<Json<EdgeLease>, ApiError> {
    switchyard_protocol::validate_name(&name)
        .map_err(|e| ApiError::validation("name", e.to_string()))?;
    let JsonBody(body) = body?;
    let request: EdgeLeaseRequest =
        serde_json::from_value(body).map_err(|e| ApiError::validation("body", e.to_string()))?;
    if !(1..=MAX_LEASE).contains(&request.max) {
        return Err(ApiError::validation(
            "max",
            format!("must be between 1 and {MAX_LEASE}"),
        ));
    }
    let ctx = &state.delivery;
    let now = ctx.clock.now_ms();
    // What tells a silent edge from an idle one (`edge_unreachable`, src/diagnostics/).
    state.store.edge_seen(&tenant, &name, now).await?;
    reaper::reap_expired_leases(ctx, now).await?;
    let claimed = state
        .store
        .claim_due(
            DueScope::Relay {
                tenant: &tenant,
                edge: &name,
            },
            now,
            request.max,
            &performer(&name),
            ctx.lease_margin_ms(),
        )
        .await?;
    let mut attempts = Vec::with_capacity(claimed.len());
    for c in claimed {
        let Some(target) = &c.target else {
            let result = AttemptResult::failed(
                switchyard_protocol::ErrorClass::Connect,
                format!("target {:?} no longer exists", c.target_name),
            );
            let next = decide(&result, c.hop_number, c.max_attempts, &ctx.policy, now);
            if state
                .store
                .finish_attempt(c.fence(), &result, FinishedBy::Sender, next, now)
                .await?
            {
                ctx.telemetry
                    .attempt_recorded(c.hop, &result, next, Some(&tenant), false);
            }
            continue;
        };
        attempts.push(RelayedAttempt {
            delivery_id: c.delivery_id.clone(),
            attempt_id: c.attempt_id.clone(),
            attempt_number: c.hop_number,
            lease_token: c.lease_token,
            lease_until: to_datetime(c.lease_until),
            url: target.url.clone(),
            timeout_ms: target.timeout_ms,
            headers: c.signed_headers(now),
            body: c.body.clone(),
        });
    }
    Ok(Json(EdgeLease { attempts }))
}

async fn find_attempt(
    state: &AppState,
    tenant: &str,
    attempt_id: &str,
    performer: &str,
) -> Result<RelayedAttemptRow, ApiError> {
    state
        .store
        .relayed_attempt(tenant, attempt_id, performer)
        .await?
        .ok_or_else(|| ApiError::NotFound {
            kind: "attempt",
            name: attempt_id.to_owned(),
        })
}

/// The answer to a report of an attempt whose outcome is recorded already: a repeat of the
/// edge's own report, or too late (the reaper counted it when the lease expired).
fn already_recorded(attempt: &RelayedAttemptRow) -> EdgeAttemptAck {
    let by_sender = attempt.finished_by == Some(FinishedBy::Sender);
    EdgeAttemptAck {
        recorded: by_sender,
        duplicate: by_sender,
        reason: (!by_sender).then(|| "lease_lost".to_owned()),
    }
}

async fn report(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path((name, attempt_id)): Path<(String, String)>,
    body: Result<JsonBody, ApiError>,
) -> Result<Json<EdgeAttemptAck>, ApiError> {
    let JsonBody(body) = body?;
    let report: EdgeAttemptReport =
        serde_json::from_value(body).map_err(|e| ApiError::validation("body", e.to_string()))?;
    if report.status_code.is_none() && report.error_class.is_none() {
        return Err(ApiError::validation(
            "status_code",
            "a report has a status_code, an error_class, or both",
        ));
    }
    let ctx = &state.delivery;
    let now = ctx.clock.now_ms();
    let performer = performer(&name);
    let attempt = find_attempt(&state, &tenant, &attempt_id, &performer).await?;
    if attempt.outcome != AttemptOutcome::InFlight {
        return Ok(Json(already_recorded(&attempt)));
    }
    // A 2xx only counts when nothing else says it failed.
    let error_class = match (report.error_class, report.status_code) {
        (Some(c), _) => Some(c),
        (None, Some(200..=299)) => None,
        (None, Some(500..=599)) => Some(switchyard_protocol::ErrorClass::Http5xx),
        (None, _) => Some(switchyard_protocol::ErrorClass::Http4xx),
    };
    let result = AttemptResult {
        duration_ms: report.duration_ms,
        status_code: report.status_code,
        error_class,
        error: report
            .error
            .map(|e| e.chars().take(500).collect())
            .or_else(|| {
                error_class
                    .map(|_| format!("receiver answered HTTP {}", report.status_code.unwrap_or(0)))
            }),
    };
    let next = decide(
        &result,
        attempt.hop_number,
        attempt.max_attempts,
        &ctx.policy,
        now,
    );
    let fence = Fence {
        delivery_id: &attempt.delivery_id,
        attempt_id: &attempt_id,
        lease_token: report.lease_token,
    };
    let recorded = state
        .store
        .finish_attempt(fence, &result, FinishedBy::Sender, next, now)
        .await?;
    if recorded {
        ctx.telemetry
            .attempt_recorded(attempt.hop, &result, next, Some(&tenant), true);
    } else {
        // Fenced out: by the reaper (lease lost), or by a copy of this report that was
        // recorded a moment ago (a duplicate). The attempt says which.
        let now_recorded = find_attempt(&state, &tenant, &attempt_id, &performer).await?;
        if now_recorded.outcome != AttemptOutcome::InFlight {
            return Ok(Json(already_recorded(&now_recorded)));
        }
    }
    ctx.wake.notify_one();
    Ok(Json(EdgeAttemptAck {
        recorded,
        duplicate: false,
        reason: (!recorded).then(|| "lease_lost".to_owned()),
    }))
}
