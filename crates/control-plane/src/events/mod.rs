//! `POST /v1/events`, `GET /v1/events/{id}`, `GET /v1/deliveries/{id}`; the lookup by event
//! key (`GET /v1/events?event_key=`) is in [`lookup`].
//!
//! Submission dedups on (tenant, endpoint, event_key) inside the retention window; the claim
//! of the key, the event and its deliveries commit in one transaction on the single writer,
//! so concurrent duplicates serialise and the loser finds the winner's event (never a 500).
//! A matching `sync` flow's first attempt is committed as in flight under a lease *before*
//! the request leaves (the recovery point); if this process dies mid-call, the lease expires
//! and the worker retries the delivery with the same `webhook-id`.

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::Value;
use switchyard_protocol::{EndpointSpec, FlowMode, SubmitEventRequest, SubmitEventResponse};

use crate::AppState;
use crate::delivery::store::{self, Claimed, NewDelivery};
use crate::delivery::worker;
use crate::error::ApiError;
use crate::extract::{JsonBody, Tenant};
use crate::store::StoredResponse;

pub mod lookup;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/events", post(submit).get(lookup::find))
        .route("/v1/events/{id}", get(read_event))
        .route("/v1/deliveries/{id}", get(read_delivery))
}

/// An event type: 1-128 characters of letters, digits and `. _ : -`.
pub(crate) fn check_event_type(t: &str) -> Result<(), ApiError> {
    let ok = !t.is_empty()
        && t.len() <= 128
        && t.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._:-".contains(&b));
    if ok {
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
        && (key.is_empty() || key.len() > 255 || !key.bytes().all(|b| (0x20..=0x7e).contains(&b)))
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
    let event = ctx
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

/// Dedups, checks the endpoint, and commits the event with its deliveries.
async fn accept(
    state: &AppState,
    tenant: &str,
    request: &SubmitEventRequest,
) -> Result<Submitted, ApiError> {
    let ctx = &state.delivery;
    let now = ctx.clock.now_ms();
    let mut tx = ctx
        .store
        .writer
        .begin_with("BEGIN IMMEDIATE")
        .await
        .map_err(crate::store::StoreError::from)?;
    let (spec, status) = store::resource_json(&mut tx, tenant, "endpoint", &request.endpoint)
        .await?
        .ok_or_else(|| ApiError::NotFound {
            kind: "endpoint",
            name: request.endpoint.clone(),
        })?;
    let event_id = store::new_id("evt");
    if let Some(key) = &request.event_key {
        let retention =
            i64::try_from(state.idempotency.retention.as_millis()).unwrap_or(i64::MAX / 2);
        if let Some(existing) = store::claim_event_key(
            &mut tx,
            tenant,
            &request.endpoint,
            key,
            &event_id,
            now,
            now - retention,
        )
        .await?
        {
            return Ok(Submitted::Duplicate(existing));
        }
    }
    if status.get("enabled").and_then(Value::as_bool) == Some(false) {
        return Err(ApiError::EndpointDisabled {
            name: request.endpoint.clone(),
        });
    }
    let spec: EndpointSpec =
        serde_json::from_value(spec).map_err(|e| ApiError::Internal(e.to_string()))?;
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
    store::insert_event(
        &mut tx,
        &store::NewEvent {
            tenant,
            id: &event_id,
            endpoint: &request.endpoint,
            event_type: &request.event_type,
            event_key: request.event_key.as_deref(),
            payload: &request.payload,
        },
        now,
    )
    .await?;
    let mut sync = Vec::new();
    for (flow, flow_spec) in store::flows_of_endpoint(&mut tx, tenant, &request.endpoint).await? {
        if !flow_spec.matches(&request.event_type) {
            continue;
        }
        let new = NewDelivery {
            tenant,
            event_id: &event_id,
            event_type: &request.event_type,
            endpoint: &request.endpoint,
            flow: &flow,
            target: &flow_spec.target,
            mode: flow_spec.mode,
            edge: flow_spec.edge.as_deref(),
            max_attempts: ctx.policy.max_attempts(),
            next_attempt_at: now + ctx.policy.delay_before_ms(1),
            replay_session: None,
            replay_of: None,
        };
        let delivery_id = store::insert_delivery(&mut tx, &new, now).await?;
        if flow_spec.mode == FlowMode::Sync {
            // Commit the first attempt as in flight before calling out (the recovery point).
            if let Some(claimed) = store::begin_attempt(
                &mut tx,
                &delivery_id,
                "control-plane",
                now,
                ctx.lease_margin_ms(),
            )
            .await?
            {
                sync.push(claimed);
            }
        }
    }
    tx.commit().await.map_err(crate::store::StoreError::from)?;
    ctx.wake.notify_one();
    Ok(Submitted::New { event_id, sync })
}

async fn read_event(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let event = state
        .delivery
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
    let delivery =
        state
            .delivery
            .store
            .delivery(&tenant, &id)
            .await?
            .ok_or(ApiError::NotFound {
                kind: "delivery",
                name: id,
            })?;
    Ok(Json(delivery).into_response())
}
