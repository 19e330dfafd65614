//! The MCP handler: `initialize` (name, version, instructions), `tools/list` for the mode, and
//! `tools/call`, which refuses a tool outside the mode before anything is read, queued or
//! sent, then records the call in the console's audit log (`mcp.call`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::{NotificationContext, Peer, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde::Serialize;
use serde_json::Value;
use switchyard_core::{Console, ExternalAudit};

use crate::error::ToolError;
use crate::tools::{self, Mode};
use crate::{reads, writes};

/// How a `switchyard mcp` server is set up.
#[derive(Debug, Clone)]
pub struct McpConfig {
    /// The one profile (control plane) this server acts on.
    pub profile: String,
    pub mode: Mode,
    /// A replay of more dead deliveries than this needs [`Mode::Destructive`].
    pub replay_limit: u64,
}

impl McpConfig {
    pub fn new(profile: impl Into<String>, mode: Mode) -> Self {
        Self {
            profile: profile.into(),
            mode,
            replay_limit: 100,
        }
    }
}

pub(crate) struct Inner {
    pub console: Console,
    pub config: McpConfig,
    /// One sync pass at a time in this process: concurrent calls wait for the pass under
    /// way instead of starting their own (the core's leases would make that safe, but
    /// wasteful).
    pub sync_lock: tokio::sync::Mutex<()>,
    /// Wakes the background sender (`crate::background`): a write was queued.
    pub kick: Arc<tokio::sync::Notify>,
    /// The operator's read-only mark as last read (`initialize` answers from it: `get_info`
    /// cannot read the console).
    pub marked: AtomicBool,
}

/// How often each session looks at the operator's read-only mark (set from another
/// process, e.g. `switchyard profile agents NAME --read-only`): a change sends
/// `notifications/tools/list_changed`.
const WATCH_MARK_EVERY: Duration = Duration::from_secs(1);

/// The server. Cheap to clone: the streamable HTTP transport makes one per session.
#[derive(Clone)]
pub struct McpServer {
    pub(crate) inner: Arc<Inner>,
}

impl McpServer {
    /// Checks the profile exists (and so the console can act on it), and starts sending
    /// the profile's queued writes in the background until the server is dropped.
    pub async fn new(
        console: Console,
        config: McpConfig,
    ) -> Result<Self, switchyard_core::CoreError> {
        let marked = console.profile(&config.profile).await?.agents_read_only;
        let inner = Arc::new(Inner {
            console,
            config,
            sync_lock: tokio::sync::Mutex::new(()),
            kick: Arc::new(tokio::sync::Notify::new()),
            marked: AtomicBool::new(marked),
        });
        tokio::spawn(crate::background::run(Arc::downgrade(&inner)));
        Ok(Self { inner })
    }

    pub fn config(&self) -> &McpConfig {
        &self.inner.config
    }

    /// The mode in force now: the server's flags, lowered to read-only while an operator
    /// has marked the profile read-only for agents.
    pub async fn effective_mode(&self) -> Mode {
        let marked = read_mark(&self.inner).await;
        self.mode_for(marked)
    }

    fn mode_for(&self, marked: bool) -> Mode {
        if marked {
            Mode::ReadOnly
        } else {
            self.inner.config.mode
        }
    }

    fn instructions(&self) -> String {
        let c = &self.inner.config;
        let marked = self.inner.marked.load(Ordering::Relaxed);
        let mode = if marked {
            format!(
                "read-only: an operator marked the profile read-only for agents; this server \
was started in {} mode and its tools come back when the mark is lifted (the server then sends \
notifications/tools/list_changed)",
                c.mode.as_str()
            )
        } else {
            c.mode.as_str().to_owned()
        };
        format!(
            "Switchyard console for the control plane of profile {profile:?} (mode: {mode}). \
Reads answer from the console's local cache (list_resources, get_resource, outbox_status) or \
the control plane (dlq_list, dlq_stats, find_event, replay_status). Writes are listed only \
with --allow-writes (deletes and replays of more than {limit} dead deliveries only with \
--allow-destructive), and never while an operator marks the profile read-only for agents. \
Every write needs request_key (1-255 printable ASCII): one key per intended change, sent again \
unchanged on every retry (after a timeout, a lost connection, a restart). The change is made \
once; a retry returns its result with replayed: true (no new write was queued). The same key \
with other arguments fails with request_key_reused and queues nothing. Keys are scoped to the \
profile and remembered while it exists in the console's data dir (the control plane keeps \
the derived Idempotency-Key 24 h by default as well). Writes are queued in the \
console's outbox, where the operator sees them as yours and may discard them before they are \
sent; this server sends them (also in the background, with backoff while the control plane \
is unreachable). Each call waits up to wait_seconds (0-120, default 10) and answers state \
confirmed, pending (poll outbox_status with your request_key; waiting_for lists earlier \
writes it waits for; problem says why the last attempt failed) or needs_attention (problem \
has the control plane's code; an operator decides).",
            profile = c.profile,
            limit = c.replay_limit,
        )
    }

    async fn audit(&self, client: &str, tool: &str, outcome: &str, detail: Detail) {
        let entry = ExternalAudit {
            actor: format!("mcp ({client})"),
            profile: Some(self.inner.config.profile.clone()),
            action: "mcp.call".into(),
            op_id: detail.op_id,
            resource: detail.resource,
            outcome: outcome.to_owned(),
            detail: Some(format!("{tool}{}", detail.text)),
        };
        if let Err(e) = self.inner.console.record_audit(entry).await {
            tracing::warn!("cannot record the MCP call in the audit log: {e}");
        }
    }

    /// Runs one tool call; the tool's own errors become tool results.
    async fn call(
        &self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
        client: &str,
    ) -> Result<CallToolResult, ErrorData> {
        let Some(def) = tools::find(&request.name) else {
            return Err(ErrorData::invalid_params(
                format!("unknown tool {:?}", request.name),
                None,
            ));
        };
        let mode = self.effective_mode().await;
        if def.needs > mode {
            let why = if mode < self.inner.config.mode {
                format!(
                    "profile {:?} is marked read-only for agents by an operator; nothing was queued or sent",
                    self.inner.config.profile
                )
            } else {
                format!(
                    "{} is not allowed in this server's mode ({}): it needs {}; nothing was queued or sent",
                    def.name,
                    mode.as_str(),
                    match def.needs {
                        Mode::Destructive => "--allow-destructive",
                        _ => "--allow-writes",
                    }
                )
            };
            let code = if mode < self.inner.config.mode {
                "profile_read_only"
            } else {
                "not_allowed"
            };
            self.audit(client, def.name, code, Detail::default()).await;
            return Ok(ToolError::new(code, why).into_result());
        }
        let args = request.arguments.as_ref();
        let outcome = match def.name {
            "list_resources" => json(reads::list_resources(self, args).await),
            "get_resource" => json(reads::get_resource(self, args).await),
            "outbox_status" => json(reads::outbox_status(self, args).await),
            "dlq_list" => json(reads::dlq_list(self, args).await),
            "dlq_stats" => json(reads::dlq_stats(self, args).await),
            "find_event" => json(reads::find_event(self, args).await),
            "replay_status" => json(reads::replay_status(self, args).await),
            "start_replay" => json(writes::start_replay(self, args, client, mode, context).await),
            write => json(writes::resource_write(self, write, args, client).await),
        };
        let (result, outcome, detail) = match outcome {
            Ok((value, detail)) => (CallToolResult::structured(value), "ok", detail),
            Err(e) => {
                let code = e.code;
                let detail = Detail {
                    text: e
                        .field
                        .as_ref()
                        .map(|f| format!(" field={f}"))
                        .unwrap_or_default(),
                    ..Default::default()
                };
                (e.into_result(), code, detail)
            }
        };
        self.audit(client, def.name, outcome, detail).await;
        Ok(result)
    }
}

/// A tool's result as JSON, with what the audit log says about it.
fn json<T: Serialize + Summary>(r: Result<T, ToolError>) -> Result<(Value, Detail), ToolError> {
    let value = r?;
    let detail = Detail {
        text: value.summary(),
        op_id: value.op().map(|(id, _)| id),
        resource: value.op().map(|(_, r)| r),
    };
    Ok((
        serde_json::to_value(&value).expect("result serializes"),
        detail,
    ))
}

/// The audit entry's detail, operation and resource for one call.
#[derive(Debug, Default)]
struct Detail {
    text: String,
    op_id: Option<i64>,
    resource: Option<String>,
}

/// What the audit log says about a successful call (names, keys and states; never a spec).
pub(crate) trait Summary {
    fn summary(&self) -> String {
        String::new()
    }

    /// The outbox operation the call queued or found, and its `kind/name`.
    fn op(&self) -> Option<(i64, String)> {
        None
    }
}

/// The operator's mark, read now (and remembered for `initialize`); a profile that cannot be
/// read counts as marked.
async fn read_mark(inner: &Inner) -> bool {
    let marked = inner
        .console
        .profile(&inner.config.profile)
        .await
        .map(|p| p.agents_read_only)
        .unwrap_or(true);
    inner.marked.store(marked, Ordering::Relaxed);
    marked
}

/// One session's watch on the read-only mark: when the tools the session may list change,
/// it says so. Ends with the session (or the server).
async fn watch_mark(inner: Weak<Inner>, started: Mode, peer: Peer<RoleServer>) {
    // Nothing changes for a read-only server: it lists the read tools either way.
    if started == Mode::ReadOnly {
        return;
    }
    let Some(first) = inner.upgrade() else { return };
    let mut seen = read_mark(&first).await;
    drop(first);
    loop {
        tokio::time::sleep(WATCH_MARK_EVERY).await;
        if peer.is_transport_closed() {
            return;
        }
        let Some(srv) = inner.upgrade() else { return };
        let marked = read_mark(&srv).await;
        drop(srv);
        if marked != seen {
            seen = marked;
            if peer.notify_tool_list_changed().await.is_err() {
                return;
            }
        }
    }
}

fn client_name(context: &RequestContext<RoleServer>) -> String {
    match context.client_info() {
        Some(info) => format!("{} {}", info.name, info.version)
            .chars()
            .filter(|c| !c.is_control())
            .take(100)
            .collect(),
        None => "unknown client".into(),
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let mut server = Implementation::new("switchyard", env!("CARGO_PKG_VERSION"));
        server.title = Some("Switchyard console".into());
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(server)
            .with_instructions(self.instructions())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let server = Arc::downgrade(&self.inner);
        let mode = self.inner.config.mode;
        tokio::spawn(watch_mark(server, mode, context.peer));
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::listed(
            self.effective_mode().await,
        )))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let client = client_name(&context);
        self.call(&request, &context, &client)
            .await
            .map(CallToolResponse::from)
    }
}
