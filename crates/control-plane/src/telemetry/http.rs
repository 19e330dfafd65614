//! The request-metrics middleware: every answer counted by route template, method and
//! status, and timed. Label values stay bounded: the route is axum's `MatchedPath` (the
//! template, `/v1/endpoints/{name}`, never the raw path), `unmatched` when no route
//! matched; a method outside the standard ones is `other`.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;

use super::Telemetry;

fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

/// Counts and times the request (`axum::middleware::from_fn_with_state`, added with
/// `Router::layer` so that it runs after routing and sees the `MatchedPath`).
pub async fn track(
    State(telemetry): State<Arc<Telemetry>>,
    request: Request,
    next: Next,
) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned());
    let method = method_label(request.method());
    let started = Instant::now();
    let response = next.run(request).await;
    telemetry.http_request(
        &route,
        method,
        response.status().as_u16(),
        started.elapsed().as_secs_f64(),
    );
    response
}
