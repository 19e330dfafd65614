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
//!
//! Here: the check and the fixes' requests; `classify`: the rules, one per class.

mod classify;

use std::collections::HashMap;

use serde_json::Value;
use switchyard_protocol::diagnostics::{Finding, FixAction};
use switchyard_protocol::{Resource, ResourceKind};

use crate::Console;
use crate::client::ApiClient;
use crate::error::{CoreError, Result};
use crate::lease::boot_id;
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
