//! Console-side findings, read from the outbox and the cache and, where live state decides
//! them, checked against the control plane. One finding per live outbox operation at most,
//! the most specific class first:
//!
//! - `stale_lease`: `sending`, leased by a process that is gone (or whose lease ran out);
//! - `orphan_reference`: a flow write naming an endpoint or target the server does not have
//!   and no queued write creates;
//! - `unknown_outcome`: sent, no answer recorded, first sent longer ago than the server keeps
//!   idempotency keys (a resend could execute twice);
//! - `drift`: an edit whose If-Match the server's version has moved past;
//! - `needs_attention`: anything else the server refused.

use std::collections::HashMap;

use serde_json::Value;
use switchyard_protocol::diagnostics::{
    Finding, FindingClass, FindingEvidence, FindingSubject, FixAction, Severity,
};
use switchyard_protocol::{ErrorCode, Resource, ResourceKind};

use crate::Console;
use crate::client::ApiClient;
use crate::error::{CoreError, Result};
use crate::lease::{boot_id, owner_is_dead};
use crate::local::effect_visible;
use crate::types::*;

/// What a console-side fix does (`fixes` runs it); one per action of the finding, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LocalFix {
    /// Send it again with the same key.
    Retry,
    /// A new key, rebased on the server's current version (the old op is superseded).
    RetryAsNew,
    Discard,
    /// Live state shows the effect: mark it confirmed without resending.
    Adopt,
    /// Hand a dead process's lease back: pending again, same key.
    ReleaseLease,
}

pub(super) struct LocalFinding {
    pub finding: Finding,
    pub fixes: Vec<LocalFix>,
    pub op: OutboxOp,
}

#[derive(sqlx::FromRow)]
struct LeaseRow {
    id: i64,
    lease_owner: Option<String>,
    lease_until: Option<i64>,
}

/// The most resources one check reads live (a long offline queue must not turn `doctor`
/// into thousands of requests); past it, the rest is reported unchecked.
const MAX_LIVE_READS: usize = 200;

/// Live reads for one check, each resource read at most once.
struct Probe {
    client: Option<ApiClient>,
    retention_ms: Option<i64>,
    seen: HashMap<(ResourceKind, String), Option<Option<Resource>>>,
    /// A read was skipped because of [`MAX_LIVE_READS`].
    capped: bool,
}

impl Probe {
    /// `None`: could not be read (offline, or the read failed).
    async fn live(&mut self, kind: ResourceKind, name: &str) -> Option<Option<Resource>> {
        let client = self.client.as_ref()?;
        if let Some(v) = self.seen.get(&(kind, name.to_owned())) {
            return v.clone();
        }
        if self.seen.len() >= MAX_LIVE_READS {
            self.capped = true;
            return None;
        }
        let v = client.get(kind, name).await.ok();
        self.seen.insert((kind, name.to_owned()), v.clone());
        v
    }
}

/// The request an op makes: method, path and body.
pub(super) fn request_of(op: &OutboxOp) -> (&'static str, String, Option<Value>) {
    let collection = format!("/v1/{}", op.kind.plural());
    let item = format!("{collection}/{}", op.name);
    let (method, path) = match op.op {
        OpKind::Create => ("POST", collection),
        OpKind::Update => ("PATCH", item),
        OpKind::Apply => ("PUT", item),
        OpKind::Delete => ("DELETE", item),
        OpKind::Enable => ("POST", format!("{item}/enable")),
        OpKind::Disable => ("POST", format!("{item}/disable")),
    };
    (method, path, (!op.body.is_null()).then(|| op.body.clone()))
}

/// A fix as the finding lists it: the exact request it makes (`LOCAL`: it changes only the
/// console's database; `GET`: it reads live state and then changes only the database).
fn action_of(fix: LocalFix, op: &OutboxOp, server_version: Option<i64>) -> FixAction {
    let (method, path, body) = request_of(op);
    let local = |label: String, destructive: bool| FixAction {
        label,
        method: "LOCAL".into(),
        path: format!("outbox/{}", op.id),
        body: None,
        destructive,
    };
    match fix {
        LocalFix::Retry => FixAction {
            label: format!(
                "Send it again with the same Idempotency-Key {}",
                op.idempotency_key
            ),
            method: method.into(),
            path,
            body,
            destructive: false,
        },
        LocalFix::RetryAsNew => FixAction {
            label: match server_version {
                Some(v) => format!(
                    "Rebase it on the server's version {v} and send it as a new write (new key, If-Match {v})"
                ),
                None => "Send it as a new write with a new Idempotency-Key (it may act a second time)".into(),
            },
            method: method.into(),
            path,
            body,
            destructive: server_version.is_none(),
        },
        LocalFix::Adopt => FixAction {
            label: "Compare with live state and, as it matches what was sent, mark it confirmed without resending"
                .into(),
            method: "GET".into(),
            path: format!("/v1/{}/{}", op.kind.plural(), op.name),
            body: None,
            destructive: false,
        },
        LocalFix::Discard => local(
            format!("Discard it: the {} of {}/{} is not sent", op.op.as_str(), op.kind, op.name),
            true,
        ),
        LocalFix::ReleaseLease => local(
            "Release the lease: it goes back to pending with the same key, and the next sync sends it".into(),
            false,
        ),
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

fn finding(
    class: FindingClass,
    severity: Severity,
    op: OutboxOp,
    detail: String,
    evidence: FindingEvidence,
    fixes: Vec<LocalFix>,
    server_version: Option<i64>,
) -> LocalFinding {
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

fn since(ms: i64) -> Option<chrono::DateTime<chrono::Utc>> {
    chrono::DateTime::from_timestamp_millis(ms)
}

impl Console {
    /// The console-side findings of `profile`, and the checks that could not run. `online`:
    /// the control plane answered, so live state and its key retention can be read.
    pub(super) async fn local_findings(
        &self,
        profile: &str,
        online: bool,
    ) -> Result<(Vec<LocalFinding>, Vec<String>)> {
        let ops = self
            .list_outbox(OutboxFilter {
                profile: Some(profile.to_owned()),
                ..Default::default()
            })
            .await?;
        let leases: Vec<LeaseRow> = sqlx::query_as(
            "SELECT id, lease_owner, lease_until FROM outbox WHERE profile = ? AND state = 'sending'",
        )
        .bind(profile)
        .fetch_all(&self.inner.pool)
        .await?;
        let mut probe = Probe {
            client: None,
            retention_ms: None,
            seen: HashMap::new(),
            capped: false,
        };
        if online {
            let client = self.client(profile).await?;
            probe.retention_ms = client
                .info()
                .await
                .ok()
                .map(|i| (i.idempotency_retention_seconds as i64).saturating_mul(1000));
            probe.client = Some(client);
        }
        let mut unchecked = Vec::new();
        if probe.retention_ms.is_none() {
            unchecked.push(
                "unknown_outcome: needs the control plane's key retention (GET /v1/info)"
                    .to_owned(),
            );
        }
        if probe.client.is_none() {
            unchecked.push(
                "orphan_reference and drift of writes not yet refused: need the control plane's live state"
                    .to_owned(),
            );
        }
        // Resources a queued write creates or keeps (so a flow naming them is not an orphan).
        let queued: Vec<(ResourceKind, String)> = ops
            .iter()
            .filter(|o| o.op != OpKind::Delete)
            .map(|o| (o.kind, o.name.clone()))
            .collect();
        let my_boot = boot_id();
        let now = self.now();
        let mut out = Vec::new();
        for op in ops.iter().cloned() {
            let lease = leases.iter().find(|l| l.id == op.id);
            if let Some(f) = self
                .classify(op, lease, &queued, &mut probe, &my_boot, now)
                .await
            {
                out.push(f);
            }
        }
        if probe.capped {
            unchecked.push(format!(
                "orphan_reference, drift and unknown_outcome of writes past the first {MAX_LIVE_READS} resources \
                 read live: sync or discard some and run the check again"
            ));
        }
        Ok((out, unchecked))
    }

    async fn classify(
        &self,
        op: OutboxOp,
        lease: Option<&LeaseRow>,
        queued: &[(ResourceKind, String)],
        probe: &mut Probe,
        my_boot: &str,
        now: i64,
    ) -> Option<LocalFinding> {
        let what = format!("{} of {}/{}", op.op.as_str(), op.kind, op.name);
        let evidence = FindingEvidence {
            since: since(op.created_at),
            last_error: op.last_error.as_ref().map(|e| e.message.clone()),
            ..Default::default()
        };
        if op.state == OpState::Sending {
            let lease = lease?;
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
            let detail = format!(
                "The {what} is marked as being sent, but the {why}. It waits until a sync takes the lease \
                 over; releasing it makes it pending again with the same Idempotency-Key, so a resend is \
                 answered from the server's stored result and acts once."
            );
            return Some(finding(
                FindingClass::StaleLease,
                Severity::Warning,
                op,
                detail,
                FindingEvidence {
                    since: lease.lease_until.and_then(since),
                    ..evidence
                },
                vec![LocalFix::ReleaseLease],
                None,
            ));
        }
        if let Some(missing) = self.missing_reference(&op, queued, probe).await {
            let detail = format!(
                "The {what} names {missing}, which the control plane does not have and no queued write \
                 creates; the server will refuse it (409 reference_missing). Discard it, or create \
                 {missing} first and then retry it."
            );
            let fixes = vec![LocalFix::Discard];
            return Some(finding(
                FindingClass::OrphanReference,
                Severity::Critical,
                op,
                detail,
                evidence,
                fixes,
                None,
            ));
        }
        let first_sent_old = match (op.first_sent_at, probe.retention_ms) {
            (Some(first), Some(retention)) => op.attempts > 0 && now - first > retention,
            _ => false,
        };
        if first_sent_old && unanswered(&op) {
            let live = probe.live(op.kind, &op.name).await;
            let base = self.op_base(op.id).await.ok().flatten();
            let visible = live.as_ref().and_then(|l| {
                effect_visible(op.op, &op.body, op.if_match, base.as_ref(), l.as_ref())
            });
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
            let detail = format!(
                "The {what} was sent but no answer came back, and it was first sent longer ago than the \
                 control plane keeps idempotency keys: a resend with the same key could execute twice. {state_now}"
            );
            let first_sent = op.first_sent_at.and_then(since);
            return Some(finding(
                FindingClass::UnknownOutcome,
                Severity::Warning,
                op,
                detail,
                FindingEvidence {
                    since: first_sent,
                    ..evidence
                },
                fixes,
                None,
            ));
        }
        if let Some(expected) = op.if_match {
            let refused_stale = op.state == OpState::NeedsAttention
                && code_of(&op) == Some(ErrorCode::VersionMismatch);
            let pending_stale =
                op.state == OpState::Pending && matches!(op.op, OpKind::Update | OpKind::Delete);
            if refused_stale || pending_stale {
                let live = probe.live(op.kind, &op.name).await;
                let actual = live.as_ref().map(|l| l.as_ref().map(|r| r.version));
                let moved = match actual {
                    Some(Some(v)) => v != expected,
                    Some(None) => true,
                    None => refused_stale,
                };
                if moved {
                    let server_version = actual.flatten();
                    let theirs = match actual {
                        Some(Some(v)) => format!("is at version {v}"),
                        Some(None) => "no longer has it".to_owned(),
                        None => "has moved on (it answered 412 version_mismatch)".to_owned(),
                    };
                    let detail = format!(
                        "The {what} was made against version {expected}, but the server {theirs}: sending it \
                         as it is would be refused. Rebase it on the server's version (your change on top \
                         of theirs), or take theirs by discarding it."
                    );
                    let mut fixes = vec![LocalFix::Discard];
                    if server_version.is_some() || actual.is_none() {
                        fixes.insert(0, LocalFix::RetryAsNew);
                    }
                    return Some(finding(
                        FindingClass::Drift,
                        Severity::Warning,
                        op,
                        detail,
                        FindingEvidence {
                            expected: Some(expected),
                            actual: server_version,
                            ..evidence
                        },
                        fixes,
                        server_version,
                    ));
                }
            }
        }
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
        let detail = format!(
            "The {what} was not accepted and waits for a decision: {why}. Nothing more is sent for \
             {}/{} until it is resolved.",
            op.kind, op.name
        );
        Some(finding(
            FindingClass::NeedsAttention,
            Severity::Warning,
            op,
            detail,
            evidence,
            fixes,
            None,
        ))
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

    /// The console-side finding `id` as it stands now (checked again).
    pub(super) async fn local_finding(&self, profile: &str, id: &str) -> Result<LocalFinding> {
        let online = self.client(profile).await?.health().await.is_ok();
        let (findings, _) = self.local_findings(profile, online).await?;
        findings
            .into_iter()
            .find(|f| f.finding.id == id)
            .ok_or_else(|| {
                CoreError::not_found(format!(
                    "finding {id:?} (it may be resolved already; run `switchyard doctor` again)"
                ))
            })
    }
}
