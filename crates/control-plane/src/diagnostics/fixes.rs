//! The fixes diagnostics needed a call for: `POST /v1/deliveries/{id}/requeue` (a stuck
//! delivery back to pending) and `POST /v1/dlq/recount` (the DLQ counters recomputed from
//! the rows). Both are keyed writes through the idempotency pipeline: the claim, the guarded
//! statements and the stored answer commit together, so a retry replays the first answer.

use std::sync::Mutex;

use async_trait::async_trait;
use axum::extract::{OriginalUri, Path, State};
use axum::http::{HeaderMap, Method};
use axum::response::{IntoResponse, Response};
use switchyard_protocol::{ErrorClass, Hop, RequeueRequest, Requeued};
use utoipa::openapi::path::HttpMethod;
use utoipa_axum::router::OpenApiRouter;

use crate::AppState;
use crate::delivery::http::AttemptResult;
use crate::error::ApiError;
use crate::extract::{JsonBody, Tenant};
use crate::idempotency::{self, OpContext, Operation};
use crate::store::{Requeue, StoreTx, StoredResponse, Transition};

pub fn routes() -> OpenApiRouter<AppState> {
    use crate::openapi::{diagnostics as doc, route};
    OpenApiRouter::new()
        .routes(route(
            "/v1/deliveries/{id}/requeue",
            HttpMethod::Post,
            requeue,
            doc::requeue(),
        ))
        .routes(route(
            "/v1/dlq/recount",
            HttpMethod::Post,
            recount,
            doc::recount(),
        ))
}

/// Validation runs before the key is looked at: a 400 is never stored.
fn precheck_key(headers: &HeaderMap, state: &AppState) -> Result<(), ApiError> {
    match idempotency::key_from_headers(headers)? {
        None if state.idempotency.require_key => Err(ApiError::KeyMissing),
        _ => Ok(()),
    }
}

/// What the stuck attempt is recorded as.
fn requeued_result(id: &str) -> AttemptResult {
    AttemptResult::failed(
        ErrorClass::Timeout,
        format!("lease expired: requeued by an operator (POST /v1/deliveries/{id}/requeue)"),
    )
}

struct RequeueOp {
    id: String,
    attempt: u32,
    /// Negative control: no lease-expiry guard (`DeliveryConfig::unguarded_requeue`).
    #[cfg(feature = "fault-injection")]
    unguarded: bool,
    /// The hop of the attempt this request recorded, for the metrics once it committed.
    recorded: Mutex<Option<Hop>>,
}

#[async_trait]
impl Operation for RequeueOp {
    async fn execute(
        &self,
        tx: &mut dyn StoreTx,
        ctx: &OpContext<'_>,
    ) -> Result<StoredResponse, ApiError> {
        let result = requeued_result(&self.id);
        #[cfg(feature = "fault-injection")]
        let outcome = if self.unguarded {
            tx.requeue_unguarded(ctx.tenant, &self.id, self.attempt, &result, ctx.now)
                .await?
        } else {
            tx.requeue_stuck(ctx.tenant, &self.id, self.attempt, &result, ctx.now)
                .await?
        };
        #[cfg(not(feature = "fault-injection"))]
        let outcome = tx
            .requeue_stuck(ctx.tenant, &self.id, self.attempt, &result, ctx.now)
            .await?;
        match outcome {
            Requeue::Requeued { hop, state } => {
                *self.recorded.lock().expect("requeue lock") = Some(hop);
                Ok(StoredResponse::json(
                    200,
                    &Requeued {
                        delivery_id: self.id.clone(),
                        attempt: self.attempt,
                        state,
                    },
                ))
            }
            Requeue::NotStuck => Err(ApiError::DeliveryNotStuck {
                id: self.id.clone(),
                attempt: self.attempt,
            }),
            Requeue::Absent => Err(ApiError::NotFound {
                kind: "delivery",
                name: self.id.clone(),
            }),
        }
    }
}

fn parse_requeue(body: Result<JsonBody, ApiError>) -> Result<RequeueRequest, ApiError> {
    let JsonBody(body) = body?;
    if !body.is_object() {
        return Err(ApiError::validation(
            "body",
            "must be an object {\"attempt\": N}",
        ));
    }
    let request: RequeueRequest = serde_json::from_value(body).map_err(|e| {
        let message = e.to_string();
        // serde names an unknown field between backticks: "unknown field `x`, expected …".
        let field = message
            .strip_prefix("unknown field `")
            .and_then(|rest| rest.split('`').next())
            .unwrap_or("attempt")
            .to_owned();
        ApiError::validation(field, message)
    })?;
    if request.attempt == 0 {
        return Err(ApiError::validation(
            "attempt",
            "must be the attempt in flight (1 or more), as the finding shows",
        ));
    }
    Ok(request)
}

async fn requeue(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(id): Path<String>,
    uri: OriginalUri,
    headers: HeaderMap,
    body: Result<JsonBody, ApiError>,
) -> Response {
    let prepared = (|| {
        let request = parse_requeue(body)?;
        precheck_key(&headers, &state)?;
        Ok::<_, ApiError>(request)
    })();
    let request = match prepared {
        Ok(request) => request,
        Err(e) => return e.into_response(),
    };
    let body = serde_json::to_value(request).expect("requests serialize");
    let fp = idempotency::fingerprint(Method::POST.as_str(), uri.path(), None, Some(&body));
    let op = RequeueOp {
        id,
        attempt: request.attempt,
        #[cfg(feature = "fault-injection")]
        unguarded: state.delivery.config.unguarded_requeue,
        recorded: Mutex::new(None),
    };
    let response = idempotency::run(&state, &tenant, &headers, fp, &op).await;
    let fresh = !response
        .headers()
        .contains_key(switchyard_protocol::headers::IDEMPOTENT_REPLAYED);
    let recorded = *op.recorded.lock().expect("requeue lock");
    if let (true, true, Some(hop)) = (fresh, response.status().is_success(), recorded) {
        let now = state.clock.now_ms();
        let telemetry = &state.delivery.telemetry;
        telemetry.attempt_recorded(
            hop,
            &requeued_result(&op.id),
            Transition::RetryAt(now),
            Some(&tenant),
            false,
        );
        telemetry.lease_taken_over();
        state.delivery.wake.notify_one();
    }
    response
}

struct RecountOp;

#[async_trait]
impl Operation for RecountOp {
    async fn execute(
        &self,
        tx: &mut dyn StoreTx,
        ctx: &OpContext<'_>,
    ) -> Result<StoredResponse, ApiError> {
        let recount = tx.recount_dlq(ctx.tenant).await?;
        Ok(StoredResponse::json(200, &recount))
    }
}

async fn recount(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    uri: OriginalUri,
    headers: HeaderMap,
) -> Response {
    if let Err(e) = precheck_key(&headers, &state) {
        return e.into_response();
    }
    let fp = idempotency::fingerprint(Method::POST.as_str(), uri.path(), None, None);
    idempotency::run(&state, &tenant, &headers, fp, &RecountOp).await
}
