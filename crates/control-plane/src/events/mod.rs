//! `POST /v1/events`, `GET /v1/events/{id}`, `GET /v1/deliveries/{id}`; the lookup by event
//! key (`GET /v1/events?event_key=`) is in [`lookup`].
//!
//! Submission dedups on (tenant, endpoint, event_key) inside the retention window; the claim
//! of the key, the event and its deliveries commit together (`EventStore::accept_event`), so
//! of concurrent duplicates one wins and the others find its event (never a 500).
//! A matching `sync` flow's first attempt is committed as in flight under a lease *before*
//! the request leaves (the recovery point); if this process dies mid-call, the lease expires
//! and the worker retries the delivery with the same `webhook-id`.

use axum::Json;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use switchyard_protocol::{
    EndpointSpec, FlowMode, FlowSpec, ResourceKind, SubmitEventRequest, SubmitEventResponse,
};
use utoipa::openapi::path::HttpMethod::{Get, Post};
use utoipa_axum::router::OpenApiRouter;

use crate::AppState;
use crate::delivery::{RetryPolicy, worker};
use crate::error::ApiError;
use crate::extract::{JsonBody, Tenant};
use crate::openapi::{delivery as doc, route};
use crate::store::{
    Acceptance, Accepted, Claimed, NewEvent, PlannedDelivery, ResourceRow, StoredResponse, new_id,
};

pub mod lookup;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(route("/v1/events", Post, submit, doc::submit_event()))
        .routes(route("/v1/events", Get, lookup::find, doc::find_events()))
        .routes(route("/v1/events/{id}", Get, read_event, doc::read_event()))
        .routes(route(
            "/v1/deliveries/{id}",
            Get,
            read_delivery,
            doc::read_delivery(),
        ))
}

/// An event type: 1-128 characters of letters, digits and `. _ : -`.
pub(crate) fn check_event_type(t: &str) -> Result<(), ApiError> {
    if switchyard_protocol::is_event_type(t) {
        Ok(())
    } else {
        Err(ApiError::validation(
            "event_type",
            "must be 1-128 characters of letters, digits and . _ : -",
        ))
    }
}

fn check_request(request: &SubmitEventRequest) -> Result<(), ApiError> {
    switchyard_protocol::validate_name(&request.endpoint)
        .map_err(|e| ApiError::validation("endpoint", e.to_string()))?;
    check_event_type(&request.event_type)?;
    if let Some(key) = &request.event_key
        && !switchyard_protocol::events::is_event_key(key)
    {
        return Err(ApiError::validation(
            "event_key",
            "must be 1-255 printable ASCII characters",
        ));
    }
    Ok(())
}

enum Submitted {
    Duplicate(String),
    New {
        event_id: String,
        sync: Vec<Claimed>,
    },
}

async fn submit(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    body: Result<JsonBody, ApiError>,
) -> Result<Response, ApiError> {
    let JsonBody(body) = body?;
    let request: SubmitEventRequest =
        serde_json::from_value(body).map_err(|e| ApiError::validation("body", e.to_string()))?;
    check_request(&request)?;
    let submitted = accept(&state, &tenant, &request).await?;
    let ctx = &state.delivery;
    let (event_id, duplicate, sync) = match submitted {
        Submitted::Duplicate(id) => (id, true, Vec::new()),
        Submitted::New { event_id, sync } => (event_id, false, sync),
    };
    // The sync flows' first attempts: sent now, answered with the first one's outcome.
    let results = futures::future::join_all(sync.iter().map(|c| worker::perform(ctx, c))).await;
    let mut sync_succeeded = None;
    for r in &results {
        if let Err(e) = r {
            tracing::warn!(error = %e, "recording a sync attempt failed; its lease will expire and it is retried");
        }
    }
    if let Some(Ok((result, _))) = results.first() {
        sync_succeeded = Some(result.succeeded());
    }
    let event = state
        .store
        .event(&tenant, &event_id)
        .await?
        .ok_or_else(|| ApiError::Internal("accepted event vanished".into()))?;
    let sync_attempt = sync.first().and_then(|c| {
        event
            .deliveries
            .iter()
            .find(|d| d.id == c.delivery_id)
            .and_then(|d| d.attempts.iter().find(|a| a.id == c.attempt_id).cloned())
    });
    let status = if duplicate || sync_succeeded == Some(true) {
        200
    } else {
        202
    };
    let location = format!("/v1/events/{}", event.id);
    let response = SubmitEventResponse {
        event,
        duplicate,
        sync_attempt,
    };
    Ok(StoredResponse {
        status,
        headers: vec![
            ("content-type".into(), "application/json".into()),
            ("location".into(), location),
        ],
        body: serde_json::to_vec(&response).expect("events serialize"),
    }
    .into_response())
}

/// Checks the endpoint, plans the deliveries, and has the store commit the event with them
/// (deduplicated by its key).
async fn accept(
    state: &AppState,
    tenant: &str,
    request: &SubmitEventRequest,
) -> Result<Submitted, ApiError> {
    let ctx = &state.delivery;
    let now = ctx.clock.now_ms();
    let endpoint = state
        .store
        .get_resource(tenant, ResourceKind::Endpoint, &request.endpoint)
        .await?
        .ok_or_else(|| ApiError::NotFound {
            kind: "endpoint",
            name: request.endpoint.clone(),
        })?;
    let retention = i64::try_from(state.idempotency.retention.as_millis()).unwrap_or(i64::MAX / 2);
    let dedup_cutoff = now - retention;
    let flows = state
        .store
        .flows_of_endpoint(tenant, &request.endpoint)
        .await?;
    let deliveries = match plan(&endpoint, &flows, request, &ctx.policy, now) {
        Ok(deliveries) => deliveries,
        Err(refused) => {
            // A copy of an event accepted earlier is still answered as that event.
            return earlier_copy(state, tenant, request, dedup_cutoff)
                .await?
                .ok_or(refused);
        }
    };
    #[cfg(feature = "fault-injection")]
    let dedup_cutoff = if ctx.config.unguarded_event_dedup {
        // Check, then insert: the key is read here and claimed below whoever holds it.
        if let Some(copy) = earlier_copy(state, tenant, request, dedup_cutoff).await? {
            return Ok(copy);
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        i64::MAX
    } else {
        dedup_cutoff
    };
    let event_id = new_id("evt");
    let acceptance = Acceptance {
        event: NewEvent {
            tenant,
            id: &event_id,
            endpoint: &request.endpoint,
            event_type: &request.event_type,
            event_key: request.event_key.as_deref(),
            payload: &request.payload,
        },
        dedup_cutoff,
        deliveries,
        owner: "control-plane",
        lease_margin_ms: ctx.lease_margin_ms(),
        now,
    };
    let accepted = state
        .telemetry
        .store("accept_event", state.store.accept_event(&acceptance))
        .await?;
    match accepted {
        Accepted::Duplicate(existing) => Ok(Submitted::Duplicate(existing)),
        // Disabled (by hand or by a retirement's drain) between the plan and the commit.
        Accepted::EndpointClosed => Err(ApiError::EndpointDisabled {
            name: request.endpoint.clone(),
        }),
        Accepted::New { sync } => {
            ctx.wake.notify_one();
            state.telemetry.event_accepted(tenant);
            Ok(Submitted::New { event_id, sync })
        }
    }
}

/// The event accepted under this request's event key since `dedup_cutoff`, if any.
async fn earlier_copy(
    state: &AppState,
    tenant: &str,
    request: &SubmitEventRequest,
    dedup_cutoff: i64,
) -> Result<Option<Submitted>, ApiError> {
    let Some(key) = &request.event_key else {
        return Ok(None);
    };
    Ok(state
        .store
        .event_key_holder(tenant, &request.endpoint, key, dedup_cutoff)
        .await?
        .map(Submitted::Duplicate))
}

/// The deliveries of an event: one per flow of the endpoint that routes its type; a `sync`
/// flow's first attempt is claimed with the event (the recovery point before the call).
/// Refused when the endpoint is disabled or does not accept the type.
fn plan(
    endpoint: &ResourceRow,
    flows: &[(String, FlowSpec)],
    request: &SubmitEventRequest,
    policy: &RetryPolicy,
    now: i64,
) -> Result<Vec<PlannedDelivery>, ApiError> {
    if endpoint.status.get("enabled").and_then(Value::as_bool) == Some(false) {
        return Err(ApiError::EndpointDisabled {
            name: request.endpoint.clone(),
        });
    }
    let spec: EndpointSpec = serde_json::from_value(endpoint.spec.clone())
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    if !spec.event_types.is_empty() && !spec.event_types.iter().any(|t| t == &request.event_type) {
        return Err(ApiError::validation(
            "event_type",
            format!(
                "{:?} is not accepted by endpoint {:?} (accepts: {})",
                request.event_type,
                request.endpoint,
                spec.event_types.join(", ")
            ),
        ));
    }
    Ok(flows
        .iter()
        .filter(|(_, flow)| flow.matches(&request.event_type))
        .map(|(name, flow)| PlannedDelivery {
            flow: name.clone(),
            target: flow.target.clone(),
            mode: flow.mode,
            edge: flow.edge.clone(),
            max_attempts: policy.max_attempts(),
            next_attempt_at: now + policy.delay_before_ms(1),
            begin_now: flow.mode == FlowMode::Sync,
        })
        .collect())
}

async fn read_event(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let event = state
        .store
        .event(&tenant, &id)
        .await?
        .ok_or(ApiError::NotFound {
            kind: "event",
            name: id,
        })?;
    Ok(Json(event).into_response())
}

async fn read_delivery(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let delivery = state
        .store
        .delivery(&tenant, &id)
        .await?
        .ok_or(ApiError::NotFound {
            kind: "delivery",
            name: id,
        })?;
    Ok(Json(delivery).into_response())
}
