//! Loopback-only servers (the desktop's embedded sandbox, `serve --demo`) answer only requests
//! whose `Host` names loopback. Their token is public, so without this a web page the operator
//! opens could reach them through DNS rebinding: its own name, re-resolved to 127.0.0.1, makes
//! the browser send the page's requests to the loopback port with the page's name as `Host`.

use std::net::IpAddr;

use axum::extract::Request;
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

/// Refuses (400 `validation_failed` naming `Host`) a request whose `Host` is not a loopback
/// name: `localhost`, a 127.0.0.0/8 address or `[::1]`, with any port.
pub async fn loopback_hosts_only(request: Request, next: Next) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .or_else(|| request.uri().authority().map(|a| a.as_str()));
    if host.is_some_and(is_loopback_host) {
        return next.run(request).await;
    }
    tracing::warn!(
        host = host.unwrap_or("(none)"),
        "refused a request to a loopback-only server: its Host header is not a loopback name"
    );
    ApiError::validation(
        "Host",
        "this server answers only requests addressed to loopback (Host localhost, 127.0.0.1 or [::1])",
    )
    .into_response()
}

/// Whether `host` (a `Host` header: a name or address and an optional port) names loopback.
fn is_loopback_host(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(rest) => match rest.split_once(']') {
            Some((inside, port)) if port.is_empty() || port.starts_with(':') => inside,
            _ => return false,
        },
        None => host.rsplit_once(':').map_or(host, |(name, _port)| name),
    };
    name.eq_ignore_ascii_case("localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::is_loopback_host;

    #[test]
    fn only_loopback_names_pass() {
        for host in [
            "localhost",
            "LOCALHOST:8080",
            "127.0.0.1",
            "127.0.0.1:49152",
            "127.9.9.9:1",
            "[::1]",
            "[::1]:8080",
        ] {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in [
            "evil.example:8080",
            "localhost.evil.example",
            "127.0.0.1.nip.io:80",
            "10.0.0.1:80",
            "[::2]:80",
            "[::1]x",
            "",
        ] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }
}
