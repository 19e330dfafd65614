//! Streamable HTTP: `switchyard mcp --http 127.0.0.1:PORT`. Loopback only; every request
//! needs the bearer token (compared in constant time); a request with an `Origin` header
//! must name an allowed origin (none by default: browsers are refused, which stops DNS
//! rebinding and cross-site requests); bodies are capped.

use std::net::SocketAddr;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::model::ErrorCode;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use subtle::ConstantTimeEq;
use tokio_util::sync::CancellationToken;

use crate::McpServer;
use crate::jsonrpc::{self, Checked, Refusal};

/// The request body cap by default: 1 MiB (a tool call's arguments are small).
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;

#[derive(Clone)]
pub struct HttpOptions {
    /// A loopback address (`127.0.0.1:PORT`, `[::1]:PORT`; port 0 picks one).
    pub listen: SocketAddr,
    /// Every request must carry `Authorization: Bearer <token>`.
    pub token: String,
    /// Browser origins allowed to call (`http://localhost:3000`); empty = none.
    pub allowed_origins: Vec<String>,
    pub max_body_bytes: usize,
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token.
        f.debug_struct("HttpOptions")
            .field("listen", &self.listen)
            .field("allowed_origins", &self.allowed_origins)
            .field("max_body_bytes", &self.max_body_bytes)
            .finish_non_exhaustive()
    }
}

/// A running HTTP server: its address (`/mcp` on it) and the handle that stops it.
pub struct HttpServer {
    pub addr: SocketAddr,
    shutdown: CancellationToken,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl HttpServer {
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    pub async fn stop(self) -> std::io::Result<()> {
        self.shutdown.cancel();
        self.task.await.map_err(std::io::Error::other)?
    }

    /// Runs until the process is stopped (or the server fails).
    pub async fn wait(self) -> std::io::Result<()> {
        self.task.await.map_err(std::io::Error::other)?
    }
}

/// Checks the options: loopback only, a token that is not empty.
pub fn check(opts: &HttpOptions) -> Result<(), String> {
    if !opts.listen.ip().is_loopback() {
        return Err(format!(
            "--http {}: only a loopback address (127.0.0.0/8, e.g. 127.0.0.1, or [::1]) is allowed",
            opts.listen
        ));
    }
    let token = opts.token.trim();
    if token.len() < 16 || token.chars().any(|c| c.is_control() || c == ' ') {
        return Err(
            "the bearer token must be at least 16 characters, without spaces or control characters"
                .into(),
        );
    }
    for origin in &opts.allowed_origins {
        if !(origin.starts_with("http://") || origin.starts_with("https://")) {
            return Err(format!(
                "--allow-origin {origin:?}: give a scheme, host and port (http://localhost:3000)"
            ));
        }
    }
    Ok(())
}

/// Starts serving `server` over streamable HTTP at `/mcp`.
pub async fn serve_http(server: McpServer, opts: HttpOptions) -> std::io::Result<HttpServer> {
    check(&opts).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    let shutdown = CancellationToken::new();
    let config = StreamableHttpServerConfig::default()
        .with_allowed_origins(opts.allowed_origins.clone())
        .enforce_origin_validation()
        .with_max_request_body_bytes(opts.max_body_bytes)
        .with_cancellation_token(shutdown.child_token());
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        LocalSessionManager::default().into(),
        config,
    );
    let token = std::sync::Arc::new(opts.token.trim().to_owned());
    // Layers run outside in: the token first, then the JSON-RPC guard, then rmcp.
    let app = Router::new()
        .nest_service("/mcp", service)
        .layer(middleware::from_fn_with_state(opts.max_body_bytes, guard))
        .layer(middleware::from_fn(forbidden_as_json))
        .layer(middleware::from_fn_with_state(token, bearer));
    let listener = tokio::net::TcpListener::bind(opts.listen).await?;
    let addr = listener.local_addr()?;
    let stop = shutdown.clone();
    let task = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await
    });
    Ok(HttpServer {
        addr,
        shutdown,
        task,
    })
}

/// What rmcp's streamable HTTP answers differently from JSON-RPC 2.0 and the MCP spec: a
/// body that is not JSON (415 from rmcp) is 400 with -32700; a known method with params of
/// the wrong shape is -32602 (not -32601); a request other than `initialize` without a
/// session says "initialize first"; a `DELETE` that ended the session is 204 (rmcp's 202
/// makes the Python SDK log "Session termination failed"). The body is read here (capped)
/// and handed on as it came.
async fn guard(State(max_body): State<usize>, req: Request, next: Next) -> Response {
    if req.method() == Method::DELETE {
        let mut resp = next.run(req).await;
        if resp.status() == StatusCode::ACCEPTED {
            *resp.status_mut() = StatusCode::NO_CONTENT;
            *resp.body_mut() = Body::empty();
        }
        return resp;
    }
    let json_body = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if req.method() != Method::POST || !json_body {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    let bytes = match axum::body::to_bytes(body, max_body).await {
        Ok(b) => b,
        Err(_) => {
            return refuse(StatusCode::PAYLOAD_TOO_LARGE, &Refusal::too_long(max_body));
        }
    };
    match jsonrpc::check(&bytes) {
        Checked::Refuse(r) if r.code == ErrorCode::INVALID_PARAMS => refuse(StatusCode::OK, &r),
        Checked::Refuse(r) => refuse(StatusCode::BAD_REQUEST, &r),
        Checked::Ignore => StatusCode::ACCEPTED.into_response(),
        Checked::Message(message) => {
            if !parts.headers.contains_key("mcp-session-id")
                && let Some(r) = jsonrpc::before_initialize(&message)
            {
                return refuse(StatusCode::BAD_REQUEST, &r);
            }
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
    }
}

/// rmcp's `403` (a foreign `Origin`, a `Host` that is not loopback) is plain text; it gets
/// the JSON body the `401` has, with rmcp's sentence as the message.
async fn forbidden_as_json(req: Request, next: Next) -> Response {
    let resp = next.run(req).await;
    if resp.status() != StatusCode::FORBIDDEN {
        return resp;
    }
    let text = axum::body::to_bytes(resp.into_body(), 4096)
        .await
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let body = serde_json::json!({"error": {"code": "forbidden", "message": text}});
    (StatusCode::FORBIDDEN, axum::Json(body)).into_response()
}

fn refuse(status: StatusCode, refusal: &Refusal) -> Response {
    (status, axum::Json(refusal.to_json())).into_response()
}

async fn bearer(State(token): State<std::sync::Arc<String>>, req: Request, next: Next) -> Response {
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    let ok = given.is_some_and(|g| bool::from(g.as_bytes().ct_eq(token.as_bytes())));
    if ok {
        return next.run(req).await;
    }
    let body = serde_json::json!({
        "error": {"code": "unauthorized", "message": "a valid bearer token is required (Authorization: Bearer …)"}
    });
    let mut resp = (StatusCode::UNAUTHORIZED, axum::Json(body)).into_response();
    resp.headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    resp
}
