//! The types the core exchanges with its callers (the CLI and the desktop app's UI).
//! Everything here is serde-serializable; times are Unix milliseconds (UTC).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use switchyard_protocol::{Problem, Resource, ResourceKind, ServerInfo};

/// The built-in profile name under which the desktop app registers its embedded sandbox.
pub const SANDBOX_PROFILE: &str = "sandbox";

/// A named control-plane connection. The token is never part of this type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Profile {
    pub name: String,
    /// Base URL of the control plane, e.g. `http://127.0.0.1:8080`.
    pub url: String,
    /// Where the token is kept.
    pub token_storage: TokenStorage,
    /// The built-in sandbox profile: its token lives only in memory, handed over at runtime.
    pub sandbox: bool,
    pub created_at: i64,
    /// Agents (`switchyard mcp`) may read but never write through this profile, whatever
    /// flags their server was started with (see `Console::set_agents_read_only`).
    #[serde(default)]
    pub agents_read_only: bool,
}

/// Where a profile's bearer token is kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TokenStorage {
    /// The OS keychain (Secret Service, macOS Keychain, Windows Credential Manager).
    Keychain,
    /// A file readable only by the owner (mode 0600) beside the database, because no
    /// keychain is available on this machine.
    File { path: String },
    /// Memory only (the sandbox profile); never written anywhere.
    Memory,
}

/// What `add_profile` needs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NewProfile {
    pub name: String,
    pub url: String,
    /// The bearer token. Stored in the keychain or the 0600 token file, never in SQLite.
    pub token: String,
}

/// Changes to a profile; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ProfileEdit {
    pub url: Option<String>,
    pub token: Option<String>,
}

/// The result of testing a profile's connection.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ConnectionReport {
    pub profile: String,
    /// `GET /healthz` answered 200.
    pub healthy: bool,
    /// The token was accepted by `GET /v1/info`.
    pub authenticated: bool,
    /// Round-trip time of `GET /healthz`, when it answered.
    pub latency_ms: Option<u64>,
    pub server: Option<ServerInfo>,
    /// The token's tenant and role (`GET /v1/whoami`); `None` when the control plane
    /// predates roles, or the test failed before asking.
    #[serde(default)]
    pub caller: Option<switchyard_protocol::Caller>,
    /// Why the test failed, in words (never contains the token).
    pub error: Option<String>,
}

/// A resource as the console knows it: the last confirmed server state and, when local
/// edits are queued, the optimistic local view.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CachedResource {
    pub profile: String,
    pub kind: ResourceKind,
    pub name: String,
    /// The last state the server confirmed (absent for a resource created locally and not
    /// yet synced, or deleted on the server).
    pub server: Option<Resource>,
    /// What the resource looks like once the queued writes land. `None` = deleted locally.
    pub local: Option<LocalView>,
    pub sync_state: SyncState,
    /// Ids of live outbox operations on this resource, oldest first.
    pub pending_ops: Vec<i64>,
    /// When the server state was last fetched or confirmed.
    pub refreshed_at: Option<i64>,
}

/// How many resources of each kind a profile's cache holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceCounts {
    pub endpoints: u32,
    pub targets: u32,
    pub flows: u32,
    /// Endpoints disabled on the server or by a queued disable.
    pub disabled_endpoints: u32,
}

/// The optimistic local view of a resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LocalView {
    pub spec: Value,
    /// For endpoints: whether it is enabled (after queued enable/disable).
    pub enabled: Option<bool>,
}

/// Whether a resource's local edits have reached the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncState {
    /// No queued writes: the cache shows server truth.
    Synced,
    /// Saved locally, waiting to be sent.
    Pending,
    /// An operation is on its way to the server.
    Sending,
    /// An operation failed permanently and waits for a person.
    NeedsAttention,
}

/// A write the operator makes. It is queued in the outbox and returns at once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Write {
    /// `POST /v1/{kind}`.
    Create {
        kind: ResourceKind,
        name: String,
        spec: Value,
    },
    /// `PATCH /v1/{kind}/{name}` with a JSON merge patch of the spec; carries `If-Match`.
    Update {
        kind: ResourceKind,
        name: String,
        patch: Value,
    },
    /// `PUT /v1/{kind}/{name}`: the whole desired spec (declarative upsert).
    Apply {
        kind: ResourceKind,
        name: String,
        spec: Value,
    },
    /// `DELETE /v1/{kind}/{name}`; carries `If-Match`.
    Delete { kind: ResourceKind, name: String },
    /// `POST /v1/endpoints/{name}/enable`.
    Enable { name: String },
    /// `POST /v1/endpoints/{name}/disable`.
    Disable { name: String },
}

/// The kind of an outbox operation.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, sqlx::Type)]
#[serde(rename_all = "snake_case")]
#[sqlx(type_name = "TEXT", rename_all = "snake_case")]
pub enum OpKind {
    Create,
    Update,
    Apply,
    Delete,
    Enable,
    Disable,
}

impl OpKind {
    /// The name shown to people (the audit log, the CLI); the same as in SQLite and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Create => "create",
            Self::Update => "update",
            Self::Apply => "apply",
            Self::Delete => "delete",
            Self::Enable => "enable",
            Self::Disable => "disable",
        }
    }
}

/// The life of an outbox operation:
/// `pending → sending → done | needs_attention`; a person then resolves `needs_attention`
/// with retry (`→ pending`, same key), retry-as-new (`→ superseded`, a new op takes its
/// place) or discard (`→ discarded`).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, sqlx::Type)]
#[serde(rename_all = "snake_case")]
#[sqlx(type_name = "TEXT", rename_all = "snake_case")]
pub enum OpState {
    Pending,
    Sending,
    Done,
    NeedsAttention,
    Discarded,
    Superseded,
}

impl OpState {
    /// The name shown to people (the CLI, error messages); the same as in SQLite and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Sending => "sending",
            Self::Done => "done",
            Self::NeedsAttention => "needs_attention",
            Self::Discarded => "discarded",
            Self::Superseded => "superseded",
        }
    }

    /// Still has an effect to deliver (or a decision to wait for).
    pub fn is_live(self) -> bool {
        matches!(self, Self::Pending | Self::Sending | Self::NeedsAttention)
    }
}

/// One row of the outbox.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OutboxOp {
    pub id: i64,
    pub profile: String,
    pub op: OpKind,
    pub kind: ResourceKind,
    pub name: String,
    /// The request body sent to the server (`null` for delete/enable/disable).
    pub body: Value,
    /// The server version the operator edited (absent for a resource not yet on the server).
    pub base_version: Option<i64>,
    /// The `If-Match` version sent; fixed before the first send and never changed.
    pub if_match: Option<i64>,
    /// Minted once at enqueue; every resend uses it.
    pub idempotency_key: String,
    pub state: OpState,
    /// Send attempts so far.
    pub attempts: u32,
    pub last_error: Option<OpError>,
    /// Earliest time of the next attempt.
    pub next_attempt_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
    /// First time the op was sent (the server's key-retention clock starts here).
    pub first_sent_at: Option<i64>,
    /// The version the server answered with when the op completed.
    pub result_version: Option<i64>,
    /// For a superseded op: the op that replaced it.
    pub replaced_by: Option<i64>,
    /// Who queued it.
    #[serde(default)]
    pub origin: Origin,
}

/// Who queued a write, beyond the console's actor (`cli`, `desktop`): shown with the op in the
/// outbox, the resource history and the audit log.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "via", rename_all = "snake_case")]
pub enum Origin {
    /// A person at the console (the desktop app or the CLI).
    #[default]
    Console,
    /// An AI agent through `switchyard mcp`; `client` is its name and version from MCP's
    /// `initialize` (e.g. `claude-desktop 1.2`).
    Mcp { client: String },
    /// `switchyard gitops apply`: the source, the commit and the manifest's path.
    Gitops {
        source: String,
        commit: String,
        path: String,
    },
}

impl Origin {
    /// The audit log's actor for a write of this origin queued by `console_actor`.
    pub fn actor(&self, console_actor: &str) -> String {
        match self {
            Origin::Console => console_actor.to_owned(),
            Origin::Mcp { client } => format!("mcp ({client})"),
            Origin::Gitops { commit, .. } => {
                format!("gitops ({})", commit.get(..12).unwrap_or(commit))
            }
        }
    }
}

/// How to queue a write, beyond the write itself ([`crate::Console::enqueue_with`]).
#[derive(Debug, Clone, Default)]
pub struct EnqueueOptions {
    /// A caller-chosen idempotency key (1–255 printable ASCII), instead of a fresh UUID.
    /// Queuing the same write again with the same key returns the op already queued
    /// (`replayed`), from any process and after restarts; a different write with that key is
    /// refused with [`crate::CoreError::KeyReused`] and nothing is queued.
    pub idempotency_key: Option<String>,
    /// The version the caller planned against, sent as `If-Match` (update, apply, delete),
    /// instead of the version in the local cache.
    pub if_match: Option<i64>,
    pub origin: Origin,
    /// A fingerprint of the request that asked for the write (e.g. a hash of a tool call's
    /// canonical arguments), stored with a keyed op: the same key with another fingerprint
    /// is refused with [`crate::CoreError::KeyReused`] even when the write itself matches.
    pub fingerprint: Option<String>,
}

/// What [`crate::Console::enqueue_with`] did.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Enqueued {
    pub op: OutboxOp,
    /// The key already named this op: nothing new was queued.
    pub replayed: bool,
}

/// An audit entry recorded by another front end of the console ([`crate::Console::record_audit`]).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ExternalAudit {
    /// e.g. `mcp (claude-desktop 1.2)`.
    pub actor: String,
    pub profile: Option<String>,
    /// e.g. `mcp.call`.
    pub action: String,
    pub op_id: Option<i64>,
    pub resource: Option<String>,
    pub outcome: String,
    /// Never a secret: callers pass names, keys and states, not request bodies.
    pub detail: Option<String>,
}

/// Why an operation failed, kept for the person who resolves it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpError {
    /// HTTP status, when the server answered.
    pub status: Option<u16>,
    /// The server's problem+json body, verbatim, when it sent one.
    pub problem: Option<Problem>,
    /// A one-line description.
    pub message: String,
    /// Transient (would be retried) or permanent.
    pub transient: bool,
}

/// Which outbox rows to list.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct OutboxFilter {
    pub profile: Option<String>,
    /// Only these states; empty = the live ones (pending, sending, needs_attention).
    #[serde(default)]
    pub states: Vec<OpState>,
    pub kind: Option<ResourceKind>,
    pub name: Option<String>,
    /// Newest first when set; oldest first by default.
    #[serde(default)]
    pub newest_first: bool,
    pub limit: Option<u32>,
}

/// Counts of live operations for one profile.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingCounts {
    pub pending: u64,
    pub sending: u64,
    pub needs_attention: u64,
}

/// The three sides of a 412 conflict, for the UI and the CLI to show.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ConflictView {
    pub op_id: i64,
    pub kind: ResourceKind,
    pub name: String,
    /// The spec the operator started from (at `base_version`).
    pub base: Option<Value>,
    pub base_version: Option<i64>,
    /// What the operator wants (base with this op applied). `None` = delete.
    pub mine: Option<Value>,
    /// What the server has now. `None` = absent on the server.
    pub theirs: Option<Resource>,
    /// `theirs` comes from the cache because the server could not be reached.
    pub theirs_from_cache: bool,
    /// Top-level spec fields that differ between base→mine and base→theirs.
    pub conflicting_fields: Vec<String>,
}

/// One entry of the local audit log.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AuditEntry {
    pub id: i64,
    pub at: i64,
    /// Who acted: `cli`, `desktop`, or `sync` for outcomes the engine records.
    pub actor: String,
    pub profile: Option<String>,
    /// e.g. `profile.add`, `write.enqueue`, `op.done`, `op.needs_attention`, `op.discard`.
    pub action: String,
    pub op_id: Option<i64>,
    /// `kind/name` when the action concerns a resource.
    pub resource: Option<String>,
    /// `ok` or `failed`/`needs_attention` etc.
    pub outcome: String,
    pub detail: Option<String>,
}

/// Which audit entries to read.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct AuditQuery {
    pub profile: Option<String>,
    pub op_id: Option<i64>,
    /// Action prefix, e.g. `op.` or `profile.`.
    pub action_prefix: Option<String>,
    pub since: Option<i64>,
    pub until: Option<i64>,
    /// Default 100, newest first.
    pub limit: Option<u32>,
}

/// What `refresh` did.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RefreshReport {
    pub profile: String,
    pub resources: u64,
    pub at: i64,
}

/// How a sync run behaves.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SyncOptions {
    /// Keep going (waiting out backoff) until nothing is pending or sending. Otherwise one
    /// pass: send what is due now, then return.
    pub until_drained: bool,
    /// The total deadline of the run, in milliseconds.
    pub timeout_ms: Option<u64>,
    /// Refresh the cache from the server when the run ends (default true).
    pub refresh_after: bool,
}

impl Default for SyncOptions {
    fn default() -> Self {
        Self {
            until_drained: false,
            timeout_ms: None,
            refresh_after: true,
        }
    }
}

/// How a sync run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncOutcome {
    /// Nothing left to send and nothing needs attention.
    Drained,
    /// Nothing left to send, but some operations need attention.
    NeedsAttention,
    /// Work remains (backoff in progress, server unreachable, or the deadline passed).
    Incomplete,
}

/// The result of a sync run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SyncReport {
    pub profile: String,
    pub outcome: SyncOutcome,
    /// Operations confirmed by the server during this run.
    pub done: u64,
    /// Operations that moved to needs_attention during this run.
    pub failed: u64,
    /// Send attempts made (including retries).
    pub attempts: u64,
    pub counts: PendingCounts,
    pub elapsed_ms: u64,
}

/// Progress of a running sync.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SyncProgress {
    pub profile: String,
    /// Live operations when the run started.
    pub total: u64,
    pub done: u64,
    pub failed: u64,
    pub attempts: u64,
    pub counts: PendingCounts,
}

/// Events the core publishes (subscribe with `Console::subscribe`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    SyncStarted {
        profile: String,
        total: u64,
    },
    SyncProgress(SyncProgress),
    SyncFinished(SyncReport),
    /// The profile's server became reachable or unreachable.
    Connectivity {
        profile: String,
        online: bool,
        detail: Option<String>,
    },
    /// The live-operation counts of a profile changed.
    PendingCount {
        profile: String,
        counts: PendingCounts,
    },
    /// An operation changed state.
    OpTransition {
        profile: String,
        op_id: i64,
        from: Option<OpState>,
        to: OpState,
    },
    /// The cache of a profile changed (after refresh or a confirmed write).
    CacheChanged {
        profile: String,
    },
    /// A replay write (start or cancel) moved: queued (`pending`, 0 attempts), handed to the
    /// server (`pending`, attempts > 0), confirmed (`done`) or refused (`needs_attention`).
    ReplayWrite {
        profile: String,
        op_id: i64,
        session_id: String,
        state: crate::replay::ReplayOpState,
        attempts: u32,
    },
    /// A target created by this process came with its signing secret: take it with
    /// `Console::take_shown_secrets` to show it (once) to the person.
    SecretShown {
        profile: String,
        target: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The display names are the stored and serialized ones (one vocabulary).
    #[test]
    fn display_names_match_the_stored_names() {
        use OpKind::*;
        use OpState::*;
        for op in [Create, Update, Apply, Delete, Enable, Disable] {
            assert_eq!(serde_json::to_value(op).unwrap(), op.as_str());
        }
        for state in [
            Pending,
            Sending,
            Done,
            NeedsAttention,
            Discarded,
            Superseded,
        ] {
            assert_eq!(serde_json::to_value(state).unwrap(), state.as_str());
        }
    }
}
