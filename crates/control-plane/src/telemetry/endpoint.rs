//! `GET /metrics`: the scrape token check and the rendered registry, on the API's listener
//! ([`routes`], merged by src/server.rs) or on a listener of its own ([`metrics_router`]).
//! Not part of the tenant API: no tenant token is asked for, only the metrics token when
//! one is configured.

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use utoipa::openapi::path::HttpMethod;
use utoipa_axum::router::OpenApiRouter;

use crate::AppState;
use crate::error::ApiError;
use crate::extract::bearer_token;
use crate::openapi::route;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(route(
        "/metrics",
        HttpMethod::Get,
        metrics,
        crate::openapi::system::metrics(),
    ))
}

/// The router of the separate metrics listener (`--metrics-listen`): `/metrics` and the
/// same problem+json fallbacks as the API, counted and traced like the API's requests.
pub fn metrics_router(state: AppState) -> Router {
    Router::new()
        .merge(routes().split_for_parts().0)
        .fallback(crate::system::not_found)
        .method_not_allowed_fallback(crate::system::method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(
            state.telemetry.clone(),
            super::track,
        ))
        .layer(tower_http::trace::TraceLayer::new_for_http())
        .with_state(state)
}

async fn metrics(State(state): State<AppState>, headers: HeaderMap) -> Response {
    if let Some(token) = state.telemetry.token() {
        let allowed = bearer_token(&headers).is_some_and(|presented| token.matches(presented));
        if !allowed {
            return ApiError::Unauthorized.into_response();
        }
    }
    let text = state.telemetry.render(&*state.store).await;
    (
        StatusCode::OK,
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response()
}
