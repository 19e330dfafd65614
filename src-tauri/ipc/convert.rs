//! From the core's types to the IPC types: what the UI needs, nothing secret.

use serde_json::{Value, json};
use switchyard_core::{
    AuditEntry as CoreAudit, CachedResource, ConflictView as CoreConflict, CoreError, OpError,
    OpKind, OpState as CoreOpState, OutboxOp, Profile, ResourceKind,
};

use super::types::*;

impl From<ResourceKind> for Kind {
    fn from(kind: ResourceKind) -> Self {
        match kind {
            ResourceKind::Endpoint => Kind::Endpoint,
            ResourceKind::Target => Kind::Target,
            ResourceKind::Flow => Kind::Flow,
        }
    }
}

impl From<Kind> for ResourceKind {
    fn from(kind: Kind) -> Self {
        match kind {
            Kind::Endpoint => ResourceKind::Endpoint,
            Kind::Target => ResourceKind::Target,
            Kind::Flow => ResourceKind::Flow,
        }
    }
}

impl From<OpKind> for Operation {
    fn from(op: OpKind) -> Self {
        match op {
            OpKind::Create => Operation::Create,
            OpKind::Update => Operation::Update,
            OpKind::Apply => Operation::Apply,
            OpKind::Delete => Operation::Delete,
            OpKind::Enable => Operation::Enable,
            OpKind::Disable => Operation::Disable,
        }
    }
}

impl From<CoreOpState> for OpState {
    fn from(state: CoreOpState) -> Self {
        match state {
            CoreOpState::Pending => OpState::Pending,
            CoreOpState::Sending => OpState::Sending,
            CoreOpState::Done => OpState::Done,
            CoreOpState::NeedsAttention => OpState::NeedsAttention,
            CoreOpState::Discarded => OpState::Discarded,
            CoreOpState::Superseded => OpState::Superseded,
        }
    }
}

impl From<CoreError> for IpcError {
    fn from(e: CoreError) -> Self {
        let code = match &e {
            CoreError::NotFound { .. } => IpcErrorCode::NotFound,
            CoreError::Invalid { .. } | CoreError::ProfileExists(_) => IpcErrorCode::InvalidInput,
            CoreError::WrongState { .. } => IpcErrorCode::Conflict,
            CoreError::Offline { .. } => IpcErrorCode::Offline,
            CoreError::Unauthorized { .. } => IpcErrorCode::Unauthorized,
            CoreError::Server { .. } => IpcErrorCode::Remote,
            _ => IpcErrorCode::Internal,
        };
        let problem = match &e {
            CoreError::Invalid { field, message } => Some(Box::new(WriteError {
                status: None,
                code: Some("validation_failed".into()),
                message: message.clone(),
                transient: false,
                field: Some(field.clone()),
                used_by: Vec::new(),
                current_version: None,
            })),
            _ => None,
        };
        if code == IpcErrorCode::Internal {
            tracing::error!("command failed: {e}");
        }
        IpcError {
            code,
            message: e.to_string(),
            problem,
        }
    }
}

pub fn write_error(e: &OpError) -> WriteError {
    let problem = e.problem.as_ref();
    WriteError {
        status: e.status,
        code: problem.map(|p| p.code.as_str().to_owned()),
        message: problem
            .and_then(|p| p.detail.clone())
            .unwrap_or_else(|| e.message.clone()),
        transient: e.transient,
        field: problem.and_then(|p| p.field.clone()),
        used_by: problem.and_then(|p| p.used_by.clone()).unwrap_or_default(),
        current_version: problem.and_then(|p| p.current_version),
    }
}

/// `counts`: the profile's writes not yet confirmed (shown next to it in the switcher).
pub fn profile_view(
    profile: &Profile,
    active: &str,
    counts: switchyard_core::PendingCounts,
) -> ProfileView {
    ProfileView {
        pending: (counts.pending + counts.sending) as u32,
        needs_attention: counts.needs_attention as u32,
        name: profile.name.clone(),
        url: profile.url.clone(),
        sandbox: profile.sandbox,
        active: profile.name == active,
        has_token: !matches!(profile.token_storage, switchyard_core::TokenStorage::Memory)
            || profile.sandbox,
    }
}

pub fn outbox_entry(op: &OutboxOp) -> OutboxEntry {
    OutboxEntry {
        id: op.id,
        profile: op.profile.clone(),
        kind: op.kind.into(),
        name: op.name.clone(),
        operation: op.op.into(),
        state: op.state.into(),
        idempotency_key: op.idempotency_key.clone(),
        body: op.body.clone(),
        base_version: op.base_version,
        attempts: op.attempts,
        created_at: op.created_at,
        updated_at: op.updated_at,
        next_attempt_at: op.next_attempt_at,
        error: op.last_error.as_ref().map(write_error),
        origin: op.origin.clone(),
    }
}

/// `latest`: the newest operation on this resource (live, or recently settled), if any.
pub fn resource_view(r: &CachedResource, latest: Option<&OutboxOp>) -> ResourceView {
    let server = r.server.as_ref();
    let spec = match (&r.local, server) {
        (Some(local), _) => local.spec.clone(),
        (None, Some(server)) => server.spec.clone(),
        (None, None) => Value::Null,
    };
    let mut status = server
        .map(|s| s.status.clone())
        .unwrap_or_else(|| json!({}));
    if let (Some(enabled), Some(obj)) = (
        r.local.as_ref().and_then(|l| l.enabled),
        status.as_object_mut(),
    ) {
        obj.insert("enabled".into(), Value::Bool(enabled));
    }
    ResourceView {
        kind: r.kind.into(),
        name: r.name.clone(),
        version: server.map_or(0, |s| s.version),
        updated_at: server.map(|s| s.updated_at.timestamp_millis()),
        spec,
        status,
        pending: latest.map(|op| PendingWrite {
            op_id: op.id,
            operation: op.op.into(),
            state: op.state.into(),
            error: op.last_error.as_ref().map(write_error),
        }),
    }
}

pub fn conflict_view(c: CoreConflict) -> ConflictView {
    ConflictView {
        op_id: c.op_id,
        kind: c.kind.into(),
        name: c.name,
        base_version: c.base_version,
        base: c.base,
        mine: c.mine,
        theirs_version: c.theirs.as_ref().map(|t| t.version),
        theirs: c.theirs.map(|t| t.spec),
        theirs_from_cache: c.theirs_from_cache,
        conflicting_fields: c.conflicting_fields,
    }
}

pub fn audit_entry(a: CoreAudit) -> AuditEntry {
    AuditEntry {
        id: a.id,
        actor: a.actor,
        at: a.at,
        profile: a.profile,
        action: a.action,
        op_id: a.op_id,
        resource: a.resource,
        outcome: a.outcome,
        detail: a.detail,
    }
}
