//! Tool results: `structuredContent`, with their JSON Schemas as the tools' `outputSchema`.
//! Objects from the control plane (DLQ entries, events, sessions) pass through as the API
//! documents them (docs/control-plane.md, docs/delivery.md).

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use switchyard_core::{
    CachedResource, OpError, OpState, Origin, OutboxOp, PendingCounts, ReplayOp, ReplayOpState,
    SyncState,
};

#[derive(Debug, Serialize, JsonSchema)]
pub struct ResourceView {
    /// `endpoint`, `target` or `flow`.
    pub kind: String,
    pub name: String,
    /// `synced`, `pending` (queued writes not yet sent), `sending` or `needs_attention`.
    pub sync_state: String,
    /// The version the control plane last confirmed (absent: not on the server yet).
    pub server_version: Option<i64>,
    /// The spec once queued writes land (absent: deleted locally).
    pub spec: Option<Value>,
    /// Endpoints: enabled after queued enable/disable.
    pub enabled: Option<bool>,
    /// The control plane's status object, as last read.
    pub status: Option<Value>,
    /// Ids of live outbox operations on it, oldest first.
    pub pending_ops: Vec<i64>,
    /// When the cache last read it from the control plane (Unix ms).
    pub refreshed_at: Option<i64>,
}

impl From<CachedResource> for ResourceView {
    fn from(r: CachedResource) -> Self {
        Self {
            kind: r.kind.as_str().to_owned(),
            name: r.name,
            sync_state: match r.sync_state {
                SyncState::Synced => "synced",
                SyncState::Pending => "pending",
                SyncState::Sending => "sending",
                SyncState::NeedsAttention => "needs_attention",
            }
            .to_owned(),
            server_version: r.server.as_ref().map(|s| s.version),
            spec: r.local.as_ref().map(|l| l.spec.clone()),
            enabled: r.local.as_ref().and_then(|l| l.enabled),
            status: r.server.map(|s| s.status),
            pending_ops: r.pending_ops,
            refreshed_at: r.refreshed_at,
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ResourceList {
    pub profile: String,
    pub kind: String,
    pub items: Vec<ResourceView>,
    /// More resources matched than `limit`.
    pub truncated: bool,
}

/// A resource, from the cache or (with `live`) read from the control plane just now.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ResourceResult {
    pub profile: String,
    pub resource: ResourceView,
}

/// Why an operation needs attention (or why its last attempt failed).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ProblemView {
    /// The control plane's HTTP status, when it answered.
    pub status: Option<u16>,
    /// The control plane's problem code (`version_mismatch`, `validation_failed`, …).
    pub code: Option<String>,
    /// The field at fault, when the control plane named one (`spec.url`).
    pub field: Option<String>,
    pub message: String,
    /// Will be retried by itself (true) or waits for a person (false).
    pub transient: bool,
}

impl From<&OpError> for ProblemView {
    fn from(e: &OpError) -> Self {
        Self {
            status: e.status,
            code: e.problem.as_ref().map(|p| p.code.as_str().to_owned()),
            field: e.problem.as_ref().and_then(|p| p.field.clone()),
            message: e.message.clone(),
            transient: e.transient,
        }
    }
}

/// Who queued a write, in the audit log's words: `console`, `mcp (client 1.2)`, `gitops (…)`.
pub fn via(origin: &Origin) -> String {
    match origin {
        Origin::Console => "console".into(),
        other => other.actor("console"),
    }
}

/// One outbox operation (a resource write).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct OperationView {
    pub id: i64,
    /// `create`, `update`, `apply`, `delete`, `enable` or `disable`.
    pub op: String,
    pub kind: String,
    pub name: String,
    /// `pending`, `sending`, `done`, `needs_attention`, `discarded` (by an operator) or
    /// `superseded` (an operator retried it as a new operation: see `replaced_by`).
    pub state: String,
    /// Sent with every attempt; the control plane applies it at most once.
    pub idempotency_key: String,
    pub attempts: u32,
    /// The resource's version once confirmed.
    pub result_version: Option<i64>,
    pub replaced_by: Option<i64>,
    pub via: String,
    pub created_at: i64,
    pub last_error: Option<ProblemView>,
    /// Ids of earlier queued writes that must land first (a write to the same resource, a
    /// flow's endpoint or target, a flow naming what this deletes); one that needs attention
    /// waits for an operator. Absent when it waits for nothing.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub waiting_for: Vec<i64>,
}

impl From<&OutboxOp> for OperationView {
    fn from(op: &OutboxOp) -> Self {
        Self {
            id: op.id,
            op: op.op.as_str().to_owned(),
            kind: op.kind.as_str().to_owned(),
            name: op.name.clone(),
            state: op.state.as_str().to_owned(),
            idempotency_key: op.idempotency_key.clone(),
            attempts: op.attempts,
            result_version: op.result_version,
            replaced_by: op.replaced_by,
            via: via(&op.origin),
            created_at: op.created_at,
            last_error: op.last_error.as_ref().map(ProblemView::from),
            waiting_for: Vec::new(),
        }
    }
}

/// One queued replay write (a start or a cancel).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ReplayWriteView {
    pub id: i64,
    /// `start` or `cancel`.
    pub action: String,
    pub session_id: String,
    /// `pending`, `done` or `needs_attention`.
    pub state: String,
    pub attempts: u32,
    pub via: String,
    pub created_at: i64,
    pub last_error: Option<ProblemView>,
}

impl From<&ReplayOp> for ReplayWriteView {
    fn from(op: &ReplayOp) -> Self {
        Self {
            id: op.id,
            action: match op.action {
                switchyard_core::ReplayAction::Start => "start",
                switchyard_core::ReplayAction::Cancel => "cancel",
            }
            .into(),
            session_id: op.session_id.clone(),
            state: match op.state {
                ReplayOpState::Pending => "pending",
                ReplayOpState::Done => "done",
                ReplayOpState::NeedsAttention => "needs_attention",
            }
            .into(),
            attempts: op.attempts,
            via: via(&op.origin),
            created_at: op.created_at,
            last_error: op.last_error.as_ref().map(ProblemView::from),
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct CountsView {
    pub pending: u64,
    pub sending: u64,
    pub needs_attention: u64,
}

impl From<PendingCounts> for CountsView {
    fn from(c: PendingCounts) -> Self {
        Self {
            pending: c.pending,
            sending: c.sending,
            needs_attention: c.needs_attention,
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct OutboxStatus {
    pub profile: String,
    /// Live resource writes of the profile.
    pub counts: CountsView,
    /// The operation asked for (and, when an operator retried it as new, every later
    /// attempt, the latest last); or the live operations, oldest first.
    pub operations: Vec<OperationView>,
    /// Replay writes: the one asked for, or the profile's newest.
    pub replays: Vec<ReplayWriteView>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct DlqPageView {
    /// Dead deliveries, newest first.
    pub items: Vec<Value>,
    /// Pass as `cursor` for the next page; absent on the last one.
    pub next_cursor: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct DlqStatsView {
    pub group_by: String,
    /// Dead deliveries matching the filter.
    pub total: u64,
    /// `{key, count}` per group (`target`, `error_class`, `hour`).
    pub groups: Vec<Value>,
    /// `error_class,target`: `{error_class, target, count}`, largest first.
    pub rows: Vec<Value>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct EventsView {
    /// The events found (by id: one), each with its deliveries and their attempts.
    pub events: Vec<Value>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ReplayStatusView {
    /// The session on the control plane: status, counts and per-item results (absent while
    /// its start is only queued locally).
    pub session: Option<Value>,
    /// The queued start, when this console queued it.
    pub write: Option<ReplayWriteView>,
}

/// How a write ended for now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WriteState {
    /// The control plane confirmed it.
    Confirmed,
    /// Saved locally and on its way (offline, slow, or waiting behind earlier writes to the
    /// same resource): poll `outbox_status` with the request key.
    Pending,
    /// The control plane refused it (see `problem`); an operator decides.
    NeedsAttention,
    /// An operator discarded it before it was sent.
    Discarded,
    /// `start_replay` with `dry_run`: nothing was queued.
    DryRun,
}

impl WriteState {
    pub fn of(state: OpState) -> Self {
        match state {
            OpState::Done => Self::Confirmed,
            OpState::NeedsAttention => Self::NeedsAttention,
            OpState::Discarded => Self::Discarded,
            OpState::Pending | OpState::Sending | OpState::Superseded => Self::Pending,
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct WriteResult {
    pub state: WriteState,
    /// The request key already named this change: nothing new was queued, this is its result.
    pub replayed: bool,
    pub request_key: String,
    pub profile: String,
    /// The operation the request key named.
    pub operation: OperationView,
    /// When an operator retried it as a new operation: the latest attempt, whose state
    /// `state` reports.
    pub latest_attempt: Option<OperationView>,
    /// Why it needs attention, or why the last attempt failed: the control plane's problem.
    pub problem: Option<ProblemView>,
    /// Something the agent must pass on (a created target's signing secret is withheld).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ReplayResult {
    pub state: WriteState,
    pub replayed: bool,
    pub request_key: String,
    pub profile: String,
    /// The session id derived from the request key (absent for a dry run).
    pub session_id: Option<String>,
    /// Dry run: how many dead deliveries the selection takes now.
    pub count: Option<u64>,
    /// The queued start.
    pub write: Option<ReplayWriteView>,
    /// The session on the control plane once confirmed: status and counts.
    pub session: Option<Value>,
    pub problem: Option<ProblemView>,
}
