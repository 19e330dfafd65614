//! The answers every operation may give because of the server's limits (src/limits.rs),
//! added to the document after its operations.

use utoipa::openapi::OpenApi;

use super::problem_response;

/// The limits' answers (src/limits.rs) apply to every operation: 431 and 503 everywhere,
/// 413 to those with a body, 429 to the rate-limited ones.
pub(super) fn add_limit_responses(doc: &mut OpenApi) {
    for (path, item) in doc.paths.paths.iter_mut() {
        for (method, op) in [
            (axum::http::Method::GET, &mut item.get),
            (axum::http::Method::PUT, &mut item.put),
            (axum::http::Method::POST, &mut item.post),
            (axum::http::Method::DELETE, &mut item.delete),
            (axum::http::Method::PATCH, &mut item.patch),
        ] {
            let Some(op) = op else { continue };
            let responses = &mut op.responses.responses;
            let mut add = |status: &str, description: &str| {
                responses
                    .entry(status.to_owned())
                    .or_insert_with(|| problem_response(description).into());
            };
            add(
                "431",
                "headers_too_large: the request line and headers exceed --max-header-bytes, or the head has more than 100 header fields",
            );
            add(
                "503",
                "unavailable (with Retry-After): the request did not complete within \
                 --request-timeout; a keyed write still completes, so retry with the same key",
            );
            if op.request_body.is_some() {
                add(
                    "413",
                    "payload_too_large: the body exceeds --max-body-bytes",
                );
            }
            if let Some(class) = crate::limits::Class::of(&method, path) {
                add(
                    "429",
                    &format!(
                        "rate_limited (with Retry-After, whole seconds): the tenant is over \
                         --rate-limit-{} on this replica; not stored under the Idempotency-Key",
                        class.name()
                    ),
                );
            }
        }
    }
}
