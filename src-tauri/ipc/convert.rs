//! From the core's types to the IPC types: what the UI needs, nothing secret.

use serde_json::{Value, json};
use switchyard_core::{
    AuditEntry as CoreAudit, CachedResource, ConflictView as CoreConflict, CoreError, OpError,
    OutboxOp, Problem, Profile,
};

use super::types::*;

/// A server time as the UI takes it: Unix milliseconds.
pub(super) fn ms(t: &chrono::DateTime<chrono::Utc>) -> i64 {
    t.timestamp_millis()
}

impl From<CoreError> for IpcError {
    fn from(e: CoreError) -> Self {
        let code = match &e {
            CoreError::NotFound { .. } => IpcErrorCode::NotFound,
            CoreError::Invalid { .. } | CoreError::ProfileExists(_) => IpcErrorCode::InvalidInput,
            CoreError::WrongState { .. }
            | CoreError::Refused { .. }
            | CoreError::QueuedWork { .. } => IpcErrorCode::Conflict,
            CoreError::InvalidManifests { .. } => IpcErrorCode::InvalidInput,
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
            // The control plane's problem (`version_mismatch`, `name_taken`, …) reaches the UI.
            CoreError::Server {
                status,
                problem: Some(p),
                ..
            } => Some(Box::new(problem_error(Some(*status), p, false))),
            // GitOps refusals keep their reason (`prune_all_refused`, `listing_incomplete`…).
            CoreError::Refused { code, message } => Some(Box::new(WriteError {
                status: None,
                code: Some((*code).to_owned()),
                message: message.clone(),
                transient: false,
                field: None,
                used_by: Vec::new(),
                current_version: None,
            })),
            // A profile removal refused while work is queued: the dialog counts it again.
            CoreError::QueuedWork { .. } => Some(Box::new(WriteError {
                status: None,
                code: Some(e.code().to_owned()),
                message: e.to_string(),
                transient: false,
                field: None,
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
    match &e.problem {
        Some(p) => WriteError {
            message: p.detail.clone().unwrap_or_else(|| e.message.clone()),
            ..problem_error(e.status, p, e.transient)
        },
        None => WriteError {
            status: e.status,
            code: None,
            message: e.message.clone(),
            transient: e.transient,
            field: None,
            used_by: Vec::new(),
            current_version: None,
        },
    }
}

/// A control-plane problem body as the UI shows it.
fn problem_error(status: Option<u16>, p: &Problem, transient: bool) -> WriteError {
    WriteError {
        status,
        code: Some(p.code.as_str().to_owned()),
        message: p.detail.clone().unwrap_or_else(|| p.title.clone()),
        transient,
        field: p.field.clone(),
        used_by: p.used_by.clone().unwrap_or_default(),
        current_version: p.current_version,
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
        kind: op.kind,
        name: op.name.clone(),
        operation: op.op,
        state: op.state,
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
        kind: r.kind,
        name: r.name.clone(),
        version: server.map_or(0, |s| s.version),
        updated_at: server.map(|s| s.updated_at.timestamp_millis()),
        spec,
        status,
        pending: latest.map(|op| PendingWrite {
            op_id: op.id,
            operation: op.op,
            state: op.state,
            error: op.last_error.as_ref().map(write_error),
        }),
    }
}

pub fn conflict_view(c: CoreConflict) -> ConflictView {
    ConflictView {
        op_id: c.op_id,
        kind: c.kind,
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

#[cfg(test)]
mod tests {
    use switchyard_protocol::ErrorCode;

    use super::*;

    #[test]
    fn a_server_error_reaches_the_ui_with_its_problem() {
        let problem = Problem::new(412, ErrorCode::VersionMismatch, "Version mismatch")
            .with_detail("the endpoint is at version 4");
        let e = IpcError::from(CoreError::server(412, Some(problem), "PATCH"));
        assert_eq!(e.code, IpcErrorCode::Remote);
        let p = e.problem.expect("the problem is kept");
        assert_eq!(p.code.as_deref(), Some("version_mismatch"));
        assert_eq!(p.status, Some(412));
        assert_eq!(p.message, "the endpoint is at version 4");
    }
}
