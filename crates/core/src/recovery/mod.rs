//! Recovery: what is wrong and what to do about it (`switchyard doctor`, `switchyard retire`,
//! the desktop Recovery page).
//!
//! - `local`: console-side findings read from the outbox and cache (and checked against live
//!   state where that decides them): `needs_attention`, `unknown_outcome`, `stale_lease`,
//!   `orphan_reference`, `drift`;
//! - `fixes`: running a console-side fix (adopt, release a lease, rebase, retry, discard);
//! - `remote`: the control plane's own findings (`GET /v1/diagnostics`), kept locally so a fix
//!   can be queued while it is unreachable;
//! - `ops`: fixes of server findings and retirements as keyed writes in `recovery_ops`;
//! - `retire`: retirement sessions (start, cancel, status, list, dry run).
//!
//! Every finding, from either side, is a protocol [`Finding`] with a stable id
//! (`<class>:<subject kind>:<subject id>`; console findings are about an `operation`, the
//! outbox row's id), so the UI, `--json` and `doctor fix FINDING_ID` name one thing.

mod fixes;
mod local;
pub mod ops;
mod remote;
pub mod retire;

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use switchyard_protocol::diagnostics::{Finding, FindingClass, FixAction, Severity};

use crate::Console;
use crate::error::{CoreError, Result};
use crate::types::OutboxOp;
pub use ops::{RecoveryAction, RecoveryOp};
pub use retire::RetirementView;

/// Whether a finding was seen by this console or reported by the control plane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingSource {
    Console,
    Server,
}

/// One finding and where it comes from. Serialized as the protocol `Finding` plus `source`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DoctorFinding {
    #[serde(flatten)]
    pub finding: Finding,
    pub source: FindingSource,
}

/// What became of the control plane's side of the check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum ServerCheck {
    /// It answered `GET /v1/diagnostics`.
    Reported { checked_at: DateTime<Utc> },
    /// It answered 404: this control plane does not report diagnostics, so its side was not
    /// checked (which is not the same as clean).
    Unsupported,
    /// It could not be reached: the server findings listed are those of the last check
    /// (`last_checked_at`), if there was one.
    Unreachable {
        message: String,
        last_checked_at: Option<DateTime<Utc>>,
    },
}

/// Everything `switchyard doctor` and the Recovery page show.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DoctorReport {
    pub profile: String,
    pub checked_at: DateTime<Utc>,
    /// Most severe first; within a severity, by id.
    pub findings: Vec<DoctorFinding>,
    pub server: ServerCheck,
    /// Console-side checks that could not run, and why (they need the control plane).
    pub unchecked: Vec<String>,
}

impl DoctorReport {
    /// Something needs a person: a warning or critical finding (`doctor` exits 3).
    pub fn needs_person(&self) -> bool {
        self.findings
            .iter()
            .any(|f| f.finding.severity >= Severity::Warning)
    }

    /// The checks were incomplete: the control plane could not be reached.
    pub fn incomplete(&self) -> bool {
        matches!(self.server, ServerCheck::Unreachable { .. })
    }
}

/// What running a fix did.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FixOutcome {
    pub finding_id: String,
    /// The action run (as the finding listed it).
    pub action: FixAction,
    /// A server fix: the keyed write as it stands (`done`; `needs_attention`; `pending` =
    /// saved locally, the control plane did not confirm it yet).
    pub queued: Option<RecoveryOp>,
    /// A console fix: the outbox operation it changed or queued, as it stands now.
    pub op: Option<OutboxOp>,
    /// What happened, in a line.
    pub message: String,
}

/// The console's own classes.
fn is_console_class(class: FindingClass) -> bool {
    matches!(
        class,
        FindingClass::NeedsAttention
            | FindingClass::UnknownOutcome
            | FindingClass::StaleLease
            | FindingClass::OrphanReference
            | FindingClass::Drift
    )
}

fn class_of(finding_id: &str) -> FindingClass {
    let prefix = finding_id.split(':').next().unwrap_or_default();
    serde_json::from_value(serde_json::Value::String(prefix.to_owned()))
        .unwrap_or(FindingClass::Unknown)
}

impl Console {
    /// The Recovery page and `switchyard doctor`: console-side findings (from the outbox and
    /// cache, checked against live state when the control plane answers) and the control
    /// plane's own (`GET /v1/diagnostics`), most severe first, each with its fixes and the
    /// exact request each makes. `server` says whether the control plane's side was checked
    /// (a server without diagnostics, or one that cannot be reached, is never shown as clean).
    pub async fn findings(&self, profile: &str) -> Result<DoctorReport> {
        self.profile(profile).await?;
        let (server, remote) = self.server_findings(profile).await?;
        let online = !matches!(server, ServerCheck::Unreachable { .. });
        let (local, unchecked) = self.local_findings(profile, online).await?;
        let mut findings: Vec<DoctorFinding> = local
            .into_iter()
            .map(|l| DoctorFinding {
                finding: l.finding,
                source: FindingSource::Console,
            })
            .chain(remote.into_iter().map(|finding| DoctorFinding {
                finding,
                source: FindingSource::Server,
            }))
            .collect();
        findings.sort_by(|a, b| {
            b.finding
                .severity
                .cmp(&a.finding.severity)
                .then_with(|| a.finding.id.cmp(&b.finding.id))
        });
        Ok(DoctorReport {
            profile: profile.to_owned(),
            checked_at: DateTime::from_timestamp_millis(self.now()).unwrap_or_else(Utc::now),
            findings,
            server,
            unchecked,
        })
    }

    /// Runs fix `action` (0-based, as listed) of finding `finding_id`, then reports what it
    /// did. A server fix is queued as a keyed write (`draft_key`: the caller's key, so a
    /// second click queues nothing new; `None` mints one) and sent for at most `deadline`;
    /// unreachable, it stays saved locally (`queued.state == pending`) and the sync sends it.
    /// A console fix changes the outbox at once (adopt, release, rebase, retry, discard); it
    /// re-checks the finding first, so a finding that has gone is an error and nothing changes.
    pub async fn run_fix(
        &self,
        profile: &str,
        finding_id: &str,
        action: usize,
        draft_key: Option<String>,
        deadline: Duration,
    ) -> Result<FixOutcome> {
        if is_console_class(class_of(finding_id)) {
            return self.run_local_fix(profile, finding_id, action).await;
        }
        // A draft key already queued: the same click again; nothing new is queued.
        if let Some(key) = &draft_key {
            ops::check_key(key)?;
            let queued: Option<i64> = sqlx::query_scalar(
                "SELECT id FROM recovery_ops WHERE idempotency_key = ? AND profile = ? AND subject = ? AND action = 'fix'",
            )
            .bind(key)
            .bind(profile)
            .bind(finding_id)
            .fetch_optional(&self.inner.pool)
            .await?;
            if let Some(id) = queued {
                let op = self.recovery_op(id).await?;
                if op.state == crate::ActionState::Pending {
                    self.send_recovery_op(id, deadline).await?;
                }
                return self.server_fix_outcome(finding_id, id).await;
            }
        }
        let finding = self.server_finding(profile, finding_id).await?;
        let fix = finding.actions.get(action).cloned().ok_or_else(|| {
            CoreError::invalid(
                "action",
                format!(
                    "finding {finding_id:?} has {} fix action(s); {} is not one of them",
                    finding.actions.len(),
                    action + 1
                ),
            )
        })?;
        let (op, _) = self
            .enqueue_recovery(
                profile,
                ops::NewRecoveryOp {
                    action: RecoveryAction::Fix,
                    subject: finding_id,
                    label: &fix.label,
                    method: &fix.method,
                    path: &fix.path,
                    body: fix.body.as_ref(),
                    destructive: fix.destructive,
                    key: draft_key,
                },
            )
            .await?;
        self.send_recovery_op(op.id, deadline).await?;
        self.server_fix_outcome(finding_id, op.id).await
    }

    async fn server_fix_outcome(&self, finding_id: &str, id: i64) -> Result<FixOutcome> {
        let op = self.recovery_op(id).await?;
        let message = match op.state {
            crate::ActionState::Done => {
                format!("the control plane confirmed it ({} {})", op.method, op.path)
            }
            crate::ActionState::NeedsAttention => format!(
                "the control plane refused it: {}",
                op.last_error
                    .as_ref()
                    .map_or("no reason given", |e| e.message.as_str())
            ),
            crate::ActionState::Pending => format!(
                "saved locally, not confirmed yet (Idempotency-Key {}); it is sent with that key when the control plane answers",
                op.idempotency_key
            ),
        };
        Ok(FixOutcome {
            finding_id: finding_id.to_owned(),
            action: FixAction {
                label: op.label.clone(),
                method: op.method.clone(),
                path: op.path.clone(),
                body: op.body.clone(),
                destructive: op.destructive,
            },
            queued: Some(op),
            op: None,
            message,
        })
    }
}
