//! What crosses the IPC boundary. TypeScript declarations are generated from these types
//! (`bindings.rs`); never write them by hand in the UI.
//!
//! Tokens only travel inwards (`ProfileInput::token`): no type here carries one back out.
//! Times are Unix milliseconds (UTC), as in the core.

use serde::{Deserialize, Serialize};
use serde_json::Value;
pub use switchyard_core::{OpKind, OpState, ResourceKind};
use ts_rs::TS;

/// A control-plane connection as the UI sees it (no token).
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct ProfileView {
    pub name: String,
    pub url: String,
    /// The built-in sandbox: an embedded control plane with demo data.
    pub sandbox: bool,
    pub active: bool,
    /// Whether a token is stored for it (the token itself never leaves the Rust side).
    pub has_token: bool,
    /// Its writes saved locally or being sent, not yet confirmed.
    pub pending: u32,
    /// Its writes the control plane refused; a person decides.
    pub needs_attention: u32,
}

/// Adding or editing a profile. `token: null` on edit keeps the stored token.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct ProfileInput {
    pub name: String,
    pub url: String,
    pub token: Option<String>,
}

/// The answer to "test connection" or a health probe.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct Health {
    pub ok: bool,
    pub latency_ms: Option<u32>,
    pub server_version: Option<String>,
    /// The token's role (`viewer`, `operator`, `admin`, `edge`); `None` when the control
    /// plane predates roles or did not answer.
    pub role: Option<String>,
    /// Why it failed, in words a person can act on.
    pub error: Option<String>,
}

/// The latest write on a resource that is not yet settled (or just settled), shown next to it.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct PendingWrite {
    #[ts(type = "number")]
    pub op_id: i64,
    pub operation: OpKind,
    pub state: OpState,
    /// The control plane's answer when it needs attention.
    pub error: Option<WriteError>,
}

/// Why a write failed: the control plane's problem body when it sent one, else what went wrong
/// on the way (connection refused, timeout).
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct WriteError {
    /// HTTP status, when the control plane answered.
    pub status: Option<u16>,
    /// The problem's machine code (`version_mismatch`, `name_taken`…), when there is one.
    pub code: Option<String>,
    /// One sentence for a person.
    pub message: String,
    /// Would be (or is being) retried by itself.
    pub transient: bool,
    /// The offending field (`spec.url`), for validation failures.
    pub field: Option<String>,
    /// For `in_use`: what still references the resource.
    pub used_by: Vec<String>,
    #[ts(type = "number | null")]
    pub current_version: Option<i64>,
}

/// A resource from the local cache, with the pending write on it if there is one.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct ResourceView {
    pub kind: ResourceKind,
    pub name: String,
    /// The last version confirmed by the control plane (0 when only created locally).
    #[ts(type = "number")]
    pub version: i64,
    #[ts(type = "number | null")]
    pub updated_at: Option<i64>,
    pub spec: Value,
    pub status: Value,
    pub pending: Option<PendingWrite>,
}

/// A write to queue. `spec` is the whole spec for create/apply and a merge patch for update.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct WriteRequest {
    pub kind: ResourceKind,
    pub name: String,
    pub operation: OpKind,
    pub spec: Option<Value>,
    /// The version the operator edited; sent as `If-Match` for update and delete.
    #[ts(type = "number | null")]
    pub base_version: Option<i64>,
}

/// A row of the outbox.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct OutboxEntry {
    #[ts(type = "number")]
    pub id: i64,
    pub profile: String,
    pub kind: ResourceKind,
    pub name: String,
    pub operation: OpKind,
    pub state: OpState,
    pub idempotency_key: String,
    pub body: Value,
    #[ts(type = "number | null")]
    pub base_version: Option<i64>,
    /// Send attempts so far.
    pub attempts: u32,
    #[ts(type = "number")]
    pub created_at: i64,
    #[ts(type = "number")]
    pub updated_at: i64,
    /// Earliest time of the next attempt (for the countdown).
    #[ts(type = "number | null")]
    pub next_attempt_at: Option<i64>,
    /// The last failure: the control plane's answer or why it could not be reached.
    pub error: Option<WriteError>,
    /// Who queued it: a person at the console, an agent over MCP, or GitOps.
    pub origin: switchyard_core::Origin,
}

/// The three sides of a version conflict (HTTP 412): what the edit started from, what the
/// operator wants, and what the control plane has now.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct ConflictView {
    #[ts(type = "number")]
    pub op_id: i64,
    pub kind: ResourceKind,
    pub name: String,
    #[ts(type = "number | null")]
    pub base_version: Option<i64>,
    pub base: Option<Value>,
    /// `null`: the edit is a delete.
    pub mine: Option<Value>,
    #[ts(type = "number | null")]
    pub theirs_version: Option<i64>,
    /// `null`: absent on the control plane.
    pub theirs: Option<Value>,
    /// `theirs` comes from the cache because the control plane could not be reached.
    pub theirs_from_cache: bool,
    /// Top-level spec fields both sides changed.
    pub conflicting_fields: Vec<String>,
}

/// How a person settles a write that needs attention.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Resolution {
    /// Send it again as a new operation (new key), based on the current server version.
    RetryAsNew,
    /// Drop it; the cache returns to what the server has.
    Discard,
}

/// Sync progress of the active profile.
#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
pub struct SyncStatus {
    pub profile: String,
    /// `null` before the first contact.
    pub online: Option<bool>,
    #[ts(type = "number | null")]
    pub last_sync_at: Option<i64>,
    pub pending: u32,
    pub needs_attention: u32,
    /// A sync run is going on.
    pub syncing: bool,
    /// Writes settled in the current (or last) sync run, out of `round_total`.
    pub round_done: u32,
    pub round_total: u32,
    /// Why the control plane is unreachable, when it is.
    pub offline_reason: Option<String>,
}

/// An entry of the local audit log: what someone did and how it ended.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct AuditEntry {
    #[ts(type = "number")]
    pub id: i64,
    /// `cli`, `desktop`, or `sync` for outcomes the sync engine recorded.
    pub actor: String,
    #[ts(type = "number")]
    pub at: i64,
    pub profile: Option<String>,
    /// e.g. `write.enqueue`, `op.done`, `op.needs_attention`, `profile.add`.
    pub action: String,
    #[ts(type = "number | null")]
    pub op_id: Option<i64>,
    /// `kind/name` when the action concerns a resource.
    pub resource: Option<String>,
    pub outcome: String,
    pub detail: Option<String>,
}

/// A resource found by the command palette's search.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct ResourceRef {
    pub kind: ResourceKind,
    pub name: String,
}

/// The overview page.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct Overview {
    pub profile: String,
    pub endpoints: u32,
    pub targets: u32,
    pub flows: u32,
    pub disabled_endpoints: u32,
    /// When the resource counts were last filled from the control plane; `null` when they
    /// never were (a plane that has not answered yet): the counts are then unknown, not 0.
    #[ts(type = "number | null")]
    pub refreshed_at: Option<i64>,
    pub pending: u32,
    pub needs_attention: u32,
    /// The latest actions a person took on this profile (sync runs and cache refreshes left
    /// out). The DLQ size is not here: it comes from the control plane (`dlq_stats`), so this
    /// answer never waits for the network.
    pub recent: Vec<AuditEntry>,
}

/// Everything the core tells the UI without being asked, on the `core-event` channel.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum CoreEvent {
    /// Online/offline, pending counts, sync progress.
    Sync(SyncStatus),
    /// A queued write of `profile` changed state.
    Operation {
        profile: String,
        #[ts(type = "number")]
        op_id: i64,
        kind: ResourceKind,
        name: String,
        state: OpState,
    },
    /// The cache of a profile changed (after a refresh or a confirmed write).
    ResourcesChanged { profile: String },
    /// A replay write (start or cancel) moved: saved locally → sent → confirmed, or needs
    /// attention. The UI re-reads the replay writes and sessions.
    ReplayWrite {
        profile: String,
        session_id: String,
        state: super::dlq::ReplayWriteState,
    },
    /// A target this app created came with its signing secret: the UI takes it
    /// (`take_shown_secrets`) and shows it once. The event never carries the value.
    SecretShown { profile: String, target: String },
    /// The app is quitting and waits for the writes already sent to be answered; the rest
    /// stay queued for the next launch.
    Quitting { sending: u32 },
}

/// The tauri event name of [`CoreEvent`].
pub const CORE_EVENT: &str = "core-event";

/// What a failed command answers: a stable machine code and a sentence for a person.
#[derive(Debug, Clone, Serialize, Deserialize, TS, thiserror::Error)]
#[error("{message}")]
pub struct IpcError {
    pub code: IpcErrorCode,
    pub message: String,
    /// The server's problem body, when the failure came from the control plane.
    pub problem: Option<Box<WriteError>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum IpcErrorCode {
    /// The input is wrong; `message` names the field.
    InvalidInput,
    NotFound,
    /// A name is taken, or a version moved under the edit.
    Conflict,
    /// The control plane cannot be reached; the app works from its cache.
    Offline,
    /// The control plane refused the token.
    Unauthorized,
    /// The control plane answered with an error.
    Remote,
    /// Something failed inside the app; the log has details.
    Internal,
}

impl IpcError {
    pub fn new(code: IpcErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            problem: None,
        }
    }
}

/// Settings → "Agents (MCP)" for the active profile: how to let an AI agent host run
/// `switchyard mcp` on this data dir and profile, and what agents did lately.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct AgentsSettings {
    pub profile: String,
    /// The sandbox lives inside this app (its token too): agents cannot use it.
    pub sandbox: bool,
    /// The program and its arguments up to `mcp`; the mode's flag (`--allow-writes`,
    /// `--allow-destructive`) goes after it.
    pub command: Vec<String>,
    /// `command[0]` was found beside the app; otherwise it is `switchyard`, looked up on PATH.
    pub program_found: bool,
    /// An operator marked the profile read-only for agents: writes are refused whatever the
    /// flags.
    pub agents_read_only: bool,
    /// The newest `mcp.call` entries of the audit log for this profile (newest first).
    pub recent_calls: Vec<AuditEntry>,
}
