//! Test webhooks ("Send test webhook" on a target) as the UI sees them.

use serde::{Deserialize, Serialize};
use switchyard_core::TargetTestOp;
use switchyard_core::protocol_events::ErrorClass;
use ts_rs::TS;

use super::dlq::ReplayWriteState;

/// What the operator asks for: a `switchyard.test` webhook to `target`. `key` is minted by the
/// UI once per click (a double click or a resend after a lost answer queues nothing twice).
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct TargetTestInput {
    pub target: String,
    pub key: String,
}

/// What the receiver answered, as the control plane observed it.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct TargetTestResultView {
    /// A 2xx within the target's timeout.
    pub ok: bool,
    pub status_code: Option<u16>,
    pub error_class: Option<ErrorClass>,
    pub error: Option<String>,
    #[ts(type = "number")]
    pub duration_ms: u64,
    pub webhook_id: String,
    /// RFC 3339.
    pub tested_at: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct TargetTestView {
    #[ts(type = "number")]
    pub id: i64,
    pub target: String,
    pub key: String,
    /// Saved locally → sent → confirmed (then `result` says what the receiver answered), or
    /// needs attention (`error` says why the control plane refused it).
    pub state: ReplayWriteState,
    pub attempts: u32,
    pub error: Option<String>,
    /// The server's problem code when it refused the test (e.g. `not_found`).
    pub error_code: Option<String>,
    pub result: Option<TargetTestResultView>,
    #[ts(type = "number")]
    pub created_at: i64,
}

impl From<TargetTestOp> for TargetTestView {
    fn from(op: TargetTestOp) -> Self {
        Self {
            id: op.id,
            target: op.target,
            key: op.idempotency_key,
            state: ReplayWriteState::of(op.state, op.attempts),
            attempts: op.attempts,
            error_code: op
                .last_error
                .as_ref()
                .and_then(|e| e.problem.as_ref())
                .map(|p| p.code.as_str().to_owned()),
            error: op.last_error.map(|e| e.message),
            result: op.result.map(|r| TargetTestResultView {
                ok: r.ok,
                status_code: r.status_code,
                error_class: r.error_class,
                error: r.error,
                duration_ms: r.duration_ms,
                webhook_id: r.webhook_id,
                tested_at: r
                    .tested_at
                    .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            }),
            created_at: op.created_at,
        }
    }
}
