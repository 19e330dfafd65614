//! The role each route needs: one table for the whole API, so a route's role is decided in
//! one place and a route nobody listed needs `admin` (fail closed). The table-driven test
//! in `crates/control-plane/tests/security/roles.rs` holds its own copy of the expectations
//! and walks every operation of `/openapi.json` with a token of each role.

use axum::http::Method;
use switchyard_protocol::Role;

/// Routes that need no token: liveness, readiness, the API's own description, and
/// `/metrics` (guarded by its own token, docs/prometheus.md).
pub const PUBLIC: &[&str] = &["/healthz", "/readyz", "/openapi.json", "/metrics"];

/// Routes any valid token may call, whatever its role (the edge role included).
pub const ANY_ROLE: &[&str] = &["/v1/whoami"];

/// What a call of `method` on the route `template` (axum's matched path, `/v1/targets/{name}`)
/// needs; `None` for a public route. A route of [`ANY_ROLE`] is listed as `viewer` here (the
/// least of the ordered roles); its handler admits an edge token too.
pub fn needed(method: &Method, template: &str) -> Option<Role> {
    if PUBLIC.contains(&template) {
        return None;
    }
    let read = matches!(*method, Method::GET | Method::HEAD);
    Some(match (read, template) {
        (true, "/v1/tokens") => Role::Admin,
        (true, _) => Role::Viewer,
        (false, "/v1/edges/{name}/lease" | "/v1/edges/{name}/attempts/{attempt_id}") => Role::Edge,
        (false, template) if operator_writes(method, template) => Role::Operator,
        _ => Role::Admin,
    })
}

/// What an on-call operator does to traffic without changing what is configured.
fn operator_writes(method: &Method, template: &str) -> bool {
    let post = *method == Method::POST;
    let put = *method == Method::PUT;
    match template {
        "/v1/events" => post,
        "/v1/replays/{id}" => put,
        "/v1/replays/{id}/cancel" => post,
        "/v1/endpoints/{name}/enable" | "/v1/endpoints/{name}/disable" => post,
        "/v1/targets/{name}/test" => post,
        "/v1/targets/{name}/secrets/rotate" | "/v1/targets/{name}/secrets/{id}/expire" => post,
        "/v1/targets/{name}/client-certificates/{id}" => put,
        "/v1/targets/{name}/client-certificates/{id}/activate" => post,
        "/v1/deliveries/{id}/requeue" | "/v1/dlq/recount" => post,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unlisted_writes_need_admin_and_reads_a_viewer() {
        assert_eq!(needed(&Method::GET, "/v1/anything/new"), Some(Role::Viewer));
        assert_eq!(needed(&Method::POST, "/v1/anything/new"), Some(Role::Admin));
        assert_eq!(
            needed(&Method::DELETE, "/v1/replays/{id}"),
            Some(Role::Admin)
        );
        assert_eq!(needed(&Method::POST, "/v1/replays/{id}"), Some(Role::Admin));
        assert_eq!(
            needed(&Method::PUT, "/v1/replays/{id}"),
            Some(Role::Operator)
        );
        assert_eq!(needed(&Method::GET, "/v1/tokens"), Some(Role::Admin));
        assert_eq!(needed(&Method::GET, "/healthz"), None);
    }
}
