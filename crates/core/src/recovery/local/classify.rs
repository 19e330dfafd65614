//! Classifying one live outbox operation: one rule per finding class, tried in the order the
//! module's list gives (the most specific class first), the first that applies deciding.

use switchyard_protocol::diagnostics::{
    Finding, FindingClass, FindingEvidence, FindingSubject, Severity,
};
use switchyard_protocol::{ErrorCode, ResourceKind};

use super::{LeaseRow, LocalFinding, LocalFix, Probe, action_of, since};
use crate::Console;
use crate::lease::owner_is_dead;
use crate::local::effect_visible;
use crate::types::*;

/// What a rule found about an op; [`finding`] makes it the op's finding.
struct Verdict {
    class: FindingClass,
    severity: Severity,
    detail: String,
    evidence: FindingEvidence,
    fixes: Vec<LocalFix>,
    /// The server's version a rebase builds on (drift only).
    server_version: Option<i64>,
}

fn finding(op: OutboxOp, verdict: Verdict) -> LocalFinding {
    let Verdict {
        class,
        severity,
        detail,
        evidence,
        fixes,
        server_version,
    } = verdict;
    let subject = FindingSubject {
        kind: "operation".into(),
        id: op.id.to_string(),
    };
    let actions = fixes
        .iter()
        .map(|f| action_of(*f, &op, server_version))
        .collect();
    LocalFinding {
        finding: Finding {
            id: Finding::id_for(class, &subject),
            class,
            severity,
            subject,
            detail,
            evidence,
            actions,
        },
        fixes,
        op,
    }
}

fn code_of(op: &OutboxOp) -> Option<ErrorCode> {
    op.last_error
        .as_ref()
        .and_then(|e| e.problem.as_ref())
        .map(|p| p.code)
}

/// No answer of the server is recorded for it: every send was lost or never answered.
fn unanswered(op: &OutboxOp) -> bool {
    op.last_error
        .as_ref()
        .is_none_or(|e| e.status.is_none() || e.transient)
}

/// Sent, and first sent longer ago than the server keeps idempotency keys (`retention_ms`;
/// unknown: never).
fn first_sent_long_ago(op: &OutboxOp, retention_ms: Option<i64>, now: i64) -> bool {
    match (op.first_sent_at, retention_ms) {
        (Some(first), Some(retention)) => op.attempts > 0 && now - first > retention,
        _ => false,
    }
}

/// The op as a finding's detail names it (`update of flow/orders`).
fn what_of(op: &OutboxOp) -> String {
    format!("{} of {}/{}", op.op.as_str(), op.kind, op.name)
}

/// The evidence every finding of an op starts from.
fn evidence_of(op: &OutboxOp) -> FindingEvidence {
    FindingEvidence {
        since: since(op.created_at),
        last_error: op.last_error.as_ref().map(|e| e.message.clone()),
        ..Default::default()
    }
}

impl Console {
    pub(super) async fn classify(
        &self,
        op: OutboxOp,
        lease: Option<&LeaseRow>,
        queued: &[(ResourceKind, String)],
        probe: &mut Probe,
        my_boot: &str,
        now: i64,
    ) -> Option<LocalFinding> {
        // An op being sent is a stale lease or nothing: its outcome is still to come.
        let verdict = if op.state == OpState::Sending {
            self.stale_lease(&op, lease?, my_boot, now)?
        } else if let Some(missing) = self.missing_reference(&op, queued, probe).await {
            orphan_reference(&op, &missing)
        } else if first_sent_long_ago(&op, probe.retention_ms, now) && unanswered(&op) {
            self.unknown_outcome(&op, probe).await
        } else if let Some(verdict) = drift(&op, probe).await {
            verdict
        } else {
            needs_attention(&op)?
        };
        Some(finding(op, verdict))
    }

    /// `stale_lease`: leased by another process that is gone, or whose lease ran out.
    fn stale_lease(
        &self,
        op: &OutboxOp,
        lease: &LeaseRow,
        my_boot: &str,
        now: i64,
    ) -> Option<Verdict> {
        let owner = lease.lease_owner.as_deref().unwrap_or_default();
        if owner == self.inner.owner {
            return None;
        }
        let dead = owner_is_dead(owner, my_boot);
        let expired = lease.lease_until.is_some_and(|u| u < now);
        if !(dead || expired) {
            return None;
        }
        let pid = owner.split(':').nth(1).unwrap_or("?");
        let why = if dead {
            format!("process {pid} that leased it is gone")
        } else {
            format!("the lease of process {pid} ran out")
        };
        let what = what_of(op);
        let detail = format!(
            "The {what} is marked as being sent, but the {why}. It waits until a sync takes the lease \
             over; releasing it makes it pending again with the same Idempotency-Key, so a resend is \
             answered from the server's stored result and acts once."
        );
        Some(Verdict {
            class: FindingClass::StaleLease,
            severity: Severity::Warning,
            detail,
            evidence: FindingEvidence {
                since: lease.lease_until.and_then(since),
                ..evidence_of(op)
            },
            fixes: vec![LocalFix::ReleaseLease],
            server_version: None,
        })
    }

    /// `unknown_outcome`: sent, never answered, first sent longer ago than the server keeps
    /// keys. Whether live state shows its effect decides the fixes offered.
    async fn unknown_outcome(&self, op: &OutboxOp, probe: &mut Probe) -> Verdict {
        let live = probe.live(op.kind, &op.name).await;
        let base = self.op_base(op.id).await.ok().flatten();
        let visible = live
            .as_ref()
            .and_then(|l| effect_visible(op.op, &op.body, op.if_match, base.as_ref(), l.as_ref()));
        let (state_now, fixes) = match visible {
            Some(true) => (
                "Live state matches what was sent: it landed.",
                vec![LocalFix::Adopt, LocalFix::Discard],
            ),
            Some(false) => (
                "Live state does not show it: it most likely never landed.",
                vec![LocalFix::RetryAsNew, LocalFix::Discard],
            ),
            None => (
                "Live state cannot tell whether it landed; compare before choosing.",
                vec![LocalFix::RetryAsNew, LocalFix::Discard],
            ),
        };
        let what = what_of(op);
        let detail = format!(
            "The {what} was sent but no answer came back, and it was first sent longer ago than the \
             control plane keeps idempotency keys: a resend with the same key could execute twice. {state_now}"
        );
        Verdict {
            class: FindingClass::UnknownOutcome,
            severity: Severity::Warning,
            detail,
            evidence: FindingEvidence {
                since: op.first_sent_at.and_then(since),
                ..evidence_of(op)
            },
            fixes,
            server_version: None,
        }
    }

    /// The endpoint or target (`endpoint/orders`) a flow write names that the server does not
    /// have and no queued write creates, when live state (or the server's refusal) says so.
    async fn missing_reference(
        &self,
        op: &OutboxOp,
        queued: &[(ResourceKind, String)],
        probe: &mut Probe,
    ) -> Option<String> {
        if op.kind != ResourceKind::Flow
            || !matches!(op.op, OpKind::Create | OpKind::Update | OpKind::Apply)
            || !matches!(op.state, OpState::Pending | OpState::NeedsAttention)
        {
            return None;
        }
        let refused = code_of(op) == Some(ErrorCode::ReferenceMissing);
        let spec = &op.body["spec"];
        for (field, kind) in [
            ("endpoint", ResourceKind::Endpoint),
            ("target", ResourceKind::Target),
        ] {
            let Some(name) = spec[field].as_str() else {
                continue;
            };
            if queued.iter().any(|(k, n)| *k == kind && n == name) {
                continue;
            }
            match probe.live(kind, name).await {
                Some(None) => return Some(format!("{kind}/{name}")),
                Some(Some(_)) => {}
                None if refused => return Some(format!("{kind}/{name}")),
                None => {}
            }
        }
        None
    }
}

/// `orphan_reference`: a flow write naming `missing`, which the control plane does not have
/// and no queued write creates.
fn orphan_reference(op: &OutboxOp, missing: &str) -> Verdict {
    let what = what_of(op);
    let detail = format!(
        "The {what} names {missing}, which the control plane does not have and no queued write \
         creates; the server will refuse it (409 reference_missing). Discard it, or create \
         {missing} first and then retry it."
    );
    Verdict {
        class: FindingClass::OrphanReference,
        severity: Severity::Critical,
        detail,
        evidence: evidence_of(op),
        fixes: vec![LocalFix::Discard],
        server_version: None,
    }
}

/// `drift`: an edit made against a version the server has moved past (live state says so,
/// or the server refused it as stale).
async fn drift(op: &OutboxOp, probe: &mut Probe) -> Option<Verdict> {
    let expected = op.if_match?;
    let refused_stale =
        op.state == OpState::NeedsAttention && code_of(op) == Some(ErrorCode::VersionMismatch);
    let pending_stale =
        op.state == OpState::Pending && matches!(op.op, OpKind::Update | OpKind::Delete);
    if !(refused_stale || pending_stale) {
        return None;
    }
    let live = probe.live(op.kind, &op.name).await;
    let actual = live.as_ref().map(|l| l.as_ref().map(|r| r.version));
    let moved = match actual {
        Some(Some(v)) => v != expected,
        Some(None) => true,
        None => refused_stale,
    };
    if !moved {
        return None;
    }
    let server_version = actual.flatten();
    let theirs = match actual {
        Some(Some(v)) => format!("is at version {v}"),
        Some(None) => "no longer has it".to_owned(),
        None => "has moved on (it answered 412 version_mismatch)".to_owned(),
    };
    let what = what_of(op);
    let detail = format!(
        "The {what} was made against version {expected}, but the server {theirs}: sending it \
         as it is would be refused. Rebase it on the server's version (your change on top \
         of theirs), or take theirs by discarding it."
    );
    let mut fixes = vec![LocalFix::Discard];
    if server_version.is_some() || actual.is_none() {
        fixes.insert(0, LocalFix::RetryAsNew);
    }
    Some(Verdict {
        class: FindingClass::Drift,
        severity: Severity::Warning,
        detail,
        evidence: FindingEvidence {
            expected: Some(expected),
            actual: server_version,
            ..evidence_of(op)
        },
        fixes,
        server_version,
    })
}

/// `needs_attention`: anything else the server refused. A refusal the server stored with the
/// key would be its answer to a resend with that key, so only a new key is offered then.
fn needs_attention(op: &OutboxOp) -> Option<Verdict> {
    if op.state != OpState::NeedsAttention {
        return None;
    }
    let stored = op.last_error.as_ref().is_some_and(|e| {
        !e.transient
            && e.status
                .is_some_and(|s| !matches!(s, 400 | 401 | 413 | 415 | 429))
    });
    let mut fixes = vec![LocalFix::RetryAsNew, LocalFix::Discard];
    if !stored {
        fixes.insert(0, LocalFix::Retry);
    }
    let why = op
        .last_error
        .as_ref()
        .map_or("no reason recorded".to_owned(), |e| e.message.clone());
    let what = what_of(op);
    let detail = format!(
        "The {what} was not accepted and waits for a decision: {why}. Nothing more is sent for \
         {}/{} until it is resolved.",
        op.kind, op.name
    );
    Some(Verdict {
        class: FindingClass::NeedsAttention,
        severity: Severity::Warning,
        detail,
        evidence: evidence_of(op),
        fixes,
        server_version: None,
    })
}
