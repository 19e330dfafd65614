//! `switchyard mcp`: the console's own Model Context Protocol server (official Rust SDK,
//! `rmcp`), so an AI agent inspects and changes control planes through the same core, outbox
//! and exactly-once sync an operator uses.
//!
//! - Transports: stdio ([`serve_stdio`]) and streamable HTTP ([`http::serve_http`]).
//! - Modes ([`Mode`]): read-only unless writes are allowed; deletes and large replays only
//!   when destructive writes are; a profile an operator marked read-only for agents gets
//!   reads only. A tool outside the mode is not listed and a call to it is refused before
//!   anything is read, queued or sent.
//! - Writes ([`writes`]): keyed by the agent's request key ([`keys`]), queued in the outbox
//!   with origin `mcp (client version)`, then waited for up to `wait_seconds`.
//!
//! The core knows nothing of MCP: this crate turns tool calls into the core's keyed writes.
//! It is a library (used by the `switchyard` binary) so the tests can drive it in-process.

pub mod args;
mod background;
pub mod error;
pub mod http;
pub mod jsonrpc;
pub mod keys;
mod reads;
mod schemas;
mod server;
pub mod stdio;
pub mod tools;
pub mod views;
mod writes;

use rmcp::ServiceExt;

pub use server::{McpConfig, McpServer};
pub use tools::Mode;

/// Serves MCP over this process's stdin/stdout until the client closes stdin. Nothing else
/// may write to stdout meanwhile.
pub async fn serve_stdio(server: McpServer) -> std::io::Result<()> {
    serve_lines(server, tokio::io::stdin(), tokio::io::stdout()).await
}

/// Serves MCP as one JSON-RPC message per line over `read`/`write` (what [`serve_stdio`]
/// does on stdin/stdout) until `read` ends.
pub async fn serve_lines<R, W>(server: McpServer, read: R, write: W) -> std::io::Result<()>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    serve_transport(server, stdio::LineTransport::new(read, write)).await
}

/// Serves MCP over a [`stdio::LineTransport`] (tests lower its line cap).
pub async fn serve_transport<R>(
    server: McpServer,
    transport: stdio::LineTransport<R>,
) -> std::io::Result<()>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
{
    let running = server
        .serve(transport)
        .await
        .map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}
