//! `switchyard mcp` in-process: the rmcp client talks to the server over a duplex pipe (or
//! streamable HTTP), and the server acts on a real control plane on loopback through a real
//! console data dir.

mod http;
mod jsonrpc;
mod modes;
mod outbox;
mod reads;
mod replay;
mod writes;

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    NumberOrString, ProgressNotificationParam, ProgressToken, RequestMetaObject,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use switchyard_control_plane::extract::Tenants;
use switchyard_control_plane::{Server, ServerConfig};
use switchyard_core::{Console, ConsoleOptions, NewProfile, OpState, OutboxFilter, Resource};
use switchyard_mcp::{McpConfig, McpServer, Mode};

pub const TOKEN: &str = "mcp-test-token-0123456789";

/// The bearer token of the tests' streamable HTTP servers.
pub const HTTP_TOKEN: &str = "http-bearer-token-0123456789";

/// A JSON-RPC `initialize` request with this id, from client `client`.
pub fn initialize_request(id: i64, client: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": client, "version": "1"}}})
}

/// A read-only MCP server over streamable HTTP on loopback (token [`HTTP_TOKEN`], bodies up
/// to 64 KiB, these origins allowed), its profile's control plane unreachable.
pub async fn read_only_http(
    data: &Path,
    allowed_origins: Vec<String>,
) -> switchyard_mcp::http::HttpServer {
    let c = console_with_profile(data, "http://127.0.0.1:9").await;
    let server = McpServer::new(c, McpConfig::new("p", Mode::ReadOnly))
        .await
        .unwrap();
    switchyard_mcp::http::serve_http(
        server,
        switchyard_mcp::http::HttpOptions {
            listen: "127.0.0.1:0".parse().unwrap(),
            token: HTTP_TOKEN.into(),
            allowed_origins,
            max_body_bytes: 64 * 1024,
        },
    )
    .await
    .unwrap()
}

/// A control plane on 127.0.0.1:0 with its own SQLite file (restartable on it).
pub struct Plane {
    pub db: PathBuf,
    pub server: Option<Server>,
}

impl Plane {
    pub async fn start(dir: &Path) -> Self {
        let mut plane = Self {
            db: dir.join("cp.db"),
            server: None,
        };
        plane.restart().await;
        plane
    }

    pub fn config(db: &Path) -> ServerConfig {
        let mut tenants = Tenants::default();
        tenants.add("acme", TOKEN);
        ServerConfig::new(
            SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            format!("sqlite://{}", db.display()),
            tenants,
        )
        .local_only()
    }

    pub async fn restart(&mut self) {
        if let Some(s) = self.server.take() {
            s.stop().await.unwrap();
        }
        self.server = Some(Server::start(Self::config(&self.db)).await.unwrap());
    }

    pub fn url(&self) -> String {
        self.server.as_ref().unwrap().url()
    }

    /// Every resource of a kind the control plane has, read directly.
    pub async fn list(&self, plural: &str) -> Vec<Resource> {
        let page: Value = reqwest::Client::new()
            .get(format!("{}/v1/{plural}?limit=500", self.url()))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        serde_json::from_value(page["items"].clone()).unwrap()
    }
}

pub async fn console(data: &Path) -> Console {
    Console::open(ConsoleOptions::new(data, "mcp"))
        .await
        .unwrap()
}

/// A console on `data` with profile `p` pointing at `url`.
pub async fn console_with_profile(data: &Path, url: &str) -> Console {
    let c = console(data).await;
    c.add_profile(NewProfile {
        name: "p".into(),
        url: url.into(),
        token: TOKEN.into(),
    })
    .await
    .unwrap();
    c
}

/// An agent: records the progress notifications it receives, and counts
/// `notifications/tools/list_changed`.
#[derive(Clone, Default)]
pub struct Agent {
    pub progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    pub tools_changed: Arc<AtomicUsize>,
}

impl ClientHandler for Agent {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("test-agent", "1.0"),
        )
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params);
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.fetch_add(1, Ordering::SeqCst);
    }
}

pub type Client = RunningService<RoleClient, Agent>;

/// Starts an MCP server for profile `p` in `mode` and connects an agent to it.
pub async fn connect(console: &Console, mode: Mode) -> Client {
    connect_with(console, McpConfig::new("p", mode)).await
}

pub async fn connect_with(console: &Console, config: McpConfig) -> Client {
    connect_agent(console, config, Agent::default()).await
}

pub async fn connect_agent(console: &Console, config: McpConfig, agent: Agent) -> Client {
    let server = McpServer::new(console.clone(), config).await.unwrap();
    let (server_end, client_end) = tokio::io::duplex(256 * 1024);
    // The server end speaks through the stdio transport (`serve_stdio`'s, on a pipe).
    let (read, write) = tokio::io::split(server_end);
    tokio::spawn(switchyard_mcp::serve_lines(server, read, write));
    agent.serve(client_end).await.unwrap()
}

pub fn call_params(tool: &str, args: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(tool.to_owned()).with_arguments(args.as_object().unwrap().clone())
}

/// Calls a tool with a progress token (progress notifications go to the agent).
pub async fn call_with_progress(client: &Client, tool: &str, args: Value) -> CallToolResult {
    let mut params = call_params(tool, args);
    let mut meta = RequestMetaObject::default();
    meta.set_progress_token(ProgressToken(NumberOrString::String("progress-1".into())));
    params.meta = Some(meta);
    client.call_tool(params).await.unwrap()
}

pub async fn call(client: &Client, tool: &str, args: Value) -> CallToolResult {
    client.call_tool(call_params(tool, args)).await.unwrap()
}

/// A successful call's `structuredContent`.
pub async fn ok(client: &Client, tool: &str, args: Value) -> Value {
    let r = call(client, tool, args).await;
    assert_ne!(r.is_error, Some(true), "{tool}: {:?}", r.content);
    let value = r.structured_content.expect("structuredContent");
    // The text content carries the same JSON, for clients that do not read structuredContent.
    let text = r.content[0].as_text().expect("text content").text.clone();
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), value);
    value
}

/// A failed call's `{code, field, message}`.
pub async fn tool_error(client: &Client, tool: &str, args: Value) -> Value {
    let r = call(client, tool, args).await;
    assert_eq!(
        r.is_error,
        Some(true),
        "{tool} should fail: {:?}",
        r.content
    );
    let text = r.content[0].as_text().expect("text content").text.clone();
    serde_json::from_str::<Value>(&text).unwrap()["error"].clone()
}

/// Every outbox operation of profile `p`, whatever its state.
pub async fn all_ops(console: &Console) -> Vec<switchyard_core::OutboxOp> {
    console
        .list_outbox(OutboxFilter {
            profile: Some("p".into()),
            states: vec![
                OpState::Pending,
                OpState::Sending,
                OpState::Done,
                OpState::NeedsAttention,
                OpState::Discarded,
                OpState::Superseded,
            ],
            ..Default::default()
        })
        .await
        .unwrap()
}

/// `value` without the `replayed` flag: what must be identical between a call and its retry.
pub fn without_replayed(mut value: Value) -> Value {
    value.as_object_mut().unwrap().remove("replayed");
    value
}

pub fn endpoint(key: &str, name: &str, description: &str) -> Value {
    json!({"request_key": key, "kind": "endpoint", "name": name,
           "spec": {"description": description}})
}
