//! The Recovery page's IPC types: findings (the protocol's `Finding`, generated from its Rust
//! type), the fixes and retirements queued through the outbox, and the retire input.

use serde::{Deserialize, Serialize};
use switchyard_core::ResourceKind;
use switchyard_core::recovery::{
    DoctorReport, FixOutcome, RecoveryAction, RecoveryOp, RetirementView as CoreRetirement,
    ServerCheck,
};
use switchyard_protocol::diagnostics::Finding;
use switchyard_protocol::retirement::{DlqDisposition, Retirement, RetirementRequest};
use ts_rs::TS;

use super::dlq::ReplayWriteState;

/// What the Recovery page shows: every finding, most severe first, and whether the control
/// plane's side was checked (a server that cannot be reached, or one without diagnostics, is
/// never shown as clean).
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct RecoveryView {
    pub findings: Vec<Finding>,
    /// When the control plane answered `GET /v1/diagnostics` (RFC 3339).
    pub server_checked_at: Option<String>,
    /// Why the control plane's findings are missing or old, in a sentence.
    pub server_unavailable: Option<String>,
    /// Console-side checks that could not run (they need the control plane).
    pub unchecked: Vec<String>,
}

impl From<DoctorReport> for RecoveryView {
    fn from(r: DoctorReport) -> Self {
        let (server_checked_at, server_unavailable) = match r.server {
            ServerCheck::Reported { checked_at } => (Some(checked_at.to_rfc3339()), None),
            ServerCheck::Unsupported => (
                None,
                Some("This control plane does not report diagnostics (GET /v1/diagnostics answered 404).".into()),
            ),
            ServerCheck::Unreachable {
                message,
                last_checked_at,
            } => (
                last_checked_at.map(|t| t.to_rfc3339()),
                Some(match last_checked_at {
                    Some(t) => format!(
                        "The control plane does not answer ({message}); its findings are those of the check at {}.",
                        t.to_rfc3339()
                    ),
                    None => format!("The control plane does not answer ({message}); it has not been checked yet."),
                }),
            ),
        };
        Self {
            findings: r.findings.into_iter().map(|f| f.finding).collect(),
            server_checked_at,
            server_unavailable,
            unchecked: r.unchecked,
        }
    }
}

/// A fix or retirement write queued through the outbox, with its badge state.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct RecoveryWriteView {
    #[ts(type = "number")]
    pub id: i64,
    /// The finding id (a fix) or the retirement id.
    pub subject: String,
    pub action: RecoveryAction,
    pub label: String,
    pub method: String,
    pub path: String,
    pub idempotency_key: String,
    pub state: ReplayWriteState,
    pub attempts: u32,
    pub error: Option<String>,
    #[ts(type = "number")]
    pub created_at: i64,
}

impl From<RecoveryOp> for RecoveryWriteView {
    fn from(o: RecoveryOp) -> Self {
        Self {
            id: o.id,
            subject: o.subject,
            action: o.action,
            label: o.label,
            method: o.method,
            path: o.path,
            idempotency_key: o.idempotency_key,
            state: ReplayWriteState::of(o.state, o.attempts),
            attempts: o.attempts,
            error: o.last_error.map(|e| e.message),
            created_at: o.created_at,
        }
    }
}

/// What running a fix did: a line for the person, and the queued write of a server fix.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct FixOutcomeView {
    pub message: String,
    pub write: Option<RecoveryWriteView>,
}

impl From<FixOutcome> for FixOutcomeView {
    fn from(o: FixOutcome) -> Self {
        Self {
            message: o.message,
            write: o.queued.map(Into::into),
        }
    }
}

/// A retirement as this console knows it: what it queued, and the control plane's record.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct RetirementItemView {
    pub id: String,
    /// From the queued start when the control plane has no record yet.
    pub kind: Option<ResourceKind>,
    pub name: Option<String>,
    pub start: Option<RecoveryWriteView>,
    pub cancel: Option<RecoveryWriteView>,
    pub server: Option<Retirement>,
    pub offline: Option<String>,
}

impl From<CoreRetirement> for RetirementItemView {
    fn from(r: CoreRetirement) -> Self {
        let asked: Option<RetirementRequest> = r
            .start
            .as_ref()
            .and_then(|s| s.body.clone())
            .and_then(|b| serde_json::from_value(b).ok());
        let (kind, name) = match (&r.server, asked) {
            (Some(s), _) => (Some(s.kind), Some(s.name.clone())),
            (None, Some(a)) => (Some(a.kind), Some(a.name)),
            (None, None) => (None, None),
        };
        Self {
            id: r.id,
            kind,
            name,
            start: r.start.map(Into::into),
            cancel: r.cancel.map(Into::into),
            server: r.server,
            offline: r.offline,
        }
    }
}

/// "Retire…": what the person chose. `id` is minted when the dialog opens
/// (`new_retirement_id`), so a second click or a lost answer starts one retirement.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct RetireInput {
    pub id: String,
    pub kind: ResourceKind,
    pub name: String,
    /// A duration (`0s`, `10m`, `1h`, `7d`).
    pub grace: String,
    pub cascade_flows: bool,
    pub dlq: DlqDisposition,
}
