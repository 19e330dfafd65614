//! `/healthz`, `/v1/info`, `/openapi.json` and the problem+json fallbacks.

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use switchyard_protocol::ServerInfo;
use utoipa::openapi::path::HttpMethod::Get;
use utoipa_axum::router::OpenApiRouter;

use crate::AppState;
use crate::error::ApiError;
use crate::extract::Tenant;
use crate::openapi::{route, system as doc};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(route("/healthz", Get, healthz, doc::healthz()))
        .routes(route("/readyz", Get, readyz, doc::readyz()))
        .routes(route("/v1/info", Get, info, doc::info()))
}

/// `GET /openapi.json`: the document of the routes this listener serves, rendered once
/// when the router is built (src/server.rs).
pub fn openapi_route(document: &serde_json::Value) -> Router<AppState> {
    // Bytes: each request clones the handler, and with it a reference, not the document.
    let body = axum::body::Bytes::from(
        serde_json::to_string_pretty(document).expect("the OpenAPI document serializes"),
    );
    Router::new().route(
        "/openapi.json",
        get(move || std::future::ready(([("content-type", "application/json")], body))),
    )
}

async fn healthz(State(state): State<AppState>) -> Response {
    match state.store.ping().await {
        Ok(()) => (StatusCode::OK, Json(serde_json::json!({"status": "ok"}))).into_response(),
        Err(e) => {
            tracing::error!(error = %e, "health check: store unreachable");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(serde_json::json!({"status": "store_unreachable"})),
            )
                .into_response()
        }
    }
}

/// Readiness for a load balancer: 503 from the moment a drain begins (while `/healthz`
/// stays live), or while the store is unreachable.
async fn readyz(State(state): State<AppState>) -> Response {
    if state.delivery.is_draining() {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(serde_json::json!({"status": "draining"})),
        )
            .into_response();
    }
    healthz(State(state)).await
}

pub const FEATURES: &[&str] = &[
    "idempotency-key",
    "merge-patch",
    "if-match",
    "cursor-pagination",
    "events",
    "event-dedup",
    "sync-delivery",
    "edge-relay",
    "standard-webhooks-signatures",
    // GET /v1/targets/{name}/secrets, …/secrets/rotate, …/secrets/{id}/expire, and the
    // target test's secret_id: a console checks for it before offering a rotation.
    "signing-secret-rotation",
    // PUT/GET /v1/targets/{name}/client-certificates, …/{id}/activate, and the target test's
    // client_certificate_id: deliveries present the target's active certificate (mTLS).
    "client-certificates",
    "dlq",
    "replay-sessions",
    // PUT/GET /v1/retirements and their cancel: a console checks for it before offering
    // "Retire…".
    "retirement-sessions",
];

async fn info(State(state): State<AppState>, _tenant: Tenant) -> Json<ServerInfo> {
    let mut info = ServerInfo {
        version: switchyard_build_info::VERSION.to_owned(),
        commit: switchyard_build_info::commit().map(str::to_owned),
        build_date: Some(switchyard_build_info::BUILD_DATE.to_owned()),
        idempotency_retention_seconds: state.idempotency.retention.as_secs(),
        retry_schedule: state.retry_schedule.clone(),
        features: FEATURES.iter().map(|f| (*f).to_owned()).collect(),
        target_addresses: None,
        forbidden_target_cidrs: Vec::new(),
    };
    // The policy target writes are judged by, so a client (`gitops plan`) refuses what this
    // server would refuse before queuing it.
    state.delivery.http.policy().advertise(&mut info);
    Json(info)
}

pub async fn not_found() -> ApiError {
    ApiError::RouteNotFound
}

pub async fn method_not_allowed() -> ApiError {
    ApiError::MethodNotAllowed
}
