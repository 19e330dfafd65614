//! `GET /v1/diagnostics`: what the control plane can see is wrong, and the keyed calls that
//! fix it (contract section 5).
//!
//! A finding's `id` is derived from its class and subject, so the same problem keeps the same
//! id from one check to the next (`switchyard doctor fix ID` names it across runs) and a fixed
//! problem's id disappears.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What kind of problem a finding is. Server-side classes come from `GET /v1/diagnostics`;
/// the console adds its own (`needs_attention`, `unknown_outcome`, `stale_lease`,
/// `orphan_reference`, `drift`) from its outbox and cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum FindingClass {
    /// A delivery in flight past its lease with no live worker or edge holding it.
    StuckDelivery,
    /// Relay deliveries waiting for an edge that is not leasing.
    EdgeUnreachable,
    /// A run of consecutive dead deliveries or failed attempts to one target.
    FailingTarget,
    /// Deliveries pending for a disabled endpoint.
    DisabledEndpointBacklog,
    /// A replay session running without progress.
    StalledReplay,
    /// The maintained DLQ counters disagree with the rows.
    DlqCounterDrift,
    /// A target's signing-secret rotation is in its overlap: older secrets still sign beside
    /// the new one until `evidence.until` (info: finish it by verifying and promoting).
    SigningOverlapOpen,
    /// A target's active client certificate expires within 30 days (`evidence.until`):
    /// info within 30, warning within 7, critical within 1 day or once expired.
    CertificateExpiring,
    // Console-side classes (never sent by the server).
    NeedsAttention,
    UnknownOutcome,
    StaleLease,
    OrphanReference,
    Drift,
    /// A class this client does not know (a newer server).
    #[serde(other)]
    Unknown,
}

impl FindingClass {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::StuckDelivery => "stuck_delivery",
            Self::EdgeUnreachable => "edge_unreachable",
            Self::FailingTarget => "failing_target",
            Self::DisabledEndpointBacklog => "disabled_endpoint_backlog",
            Self::StalledReplay => "stalled_replay",
            Self::DlqCounterDrift => "dlq_counter_drift",
            Self::SigningOverlapOpen => "signing_overlap_open",
            Self::CertificateExpiring => "certificate_expiring",
            Self::NeedsAttention => "needs_attention",
            Self::UnknownOutcome => "unknown_outcome",
            Self::StaleLease => "stale_lease",
            Self::OrphanReference => "orphan_reference",
            Self::Drift => "drift",
            Self::Unknown => "unknown",
        }
    }
}

/// How urgent a finding is: `critical` stops deliveries or loses work if nobody acts,
/// `warning` will, `info` is worth knowing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Severity {
    Info,
    Warning,
    Critical,
}

/// What a finding is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FindingSubject {
    /// `delivery`, `target`, `endpoint`, `flow`, `replay`, `edge`, `tenant` (server side);
    /// `operation` (console side).
    pub kind: String,
    /// The delivery id, resource name, replay session id, edge name or tenant.
    pub id: String,
}

/// What the finding rests on, for the operator to check before acting. Every field is
/// optional: a class fills what it knows.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FindingEvidence {
    /// How many things are affected (deliveries stuck, consecutive failures, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub count: Option<u64>,
    /// Up to 20 of the affected deliveries.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub delivery_ids: Vec<String>,
    /// When the problem started (the oldest affected item, the first failure of the run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<DateTime<Utc>>,
    /// The last error seen (class and message), where the class is about failures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// What the figure should be and what it is (counter drift).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub expected: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub actual: Option<i64>,
    /// When the state ends by itself (an open overlap's end, a certificate's `not_after`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<DateTime<Utc>>,
    /// Deliveries a replay holds (a failing target): their originals left the DLQ and their
    /// re-deliveries are still pending or in flight, so they are in no DLQ count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub replaying: Option<u64>,
    /// The replay sessions holding them, the most first (at most 5).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replay_sessions: Vec<String>,
}

/// One way to fix a finding: an ordinary keyed API call of this control plane. A client
/// sends it with an Idempotency-Key of its own, like any write.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FixAction {
    /// What it does, in a few words ("Requeue the 3 stuck deliveries").
    pub label: String,
    /// `POST`, `PUT`, `PATCH` or `DELETE`.
    pub method: String,
    /// The path under the control plane's base URL, e.g. `/v1/deliveries/dlv_1/requeue`.
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
    /// It cannot be undone (a purge, a cancel, a bulk re-send such as a replay: the
    /// receivers get the deliveries again): ask the operator to confirm, and for a replay
    /// show its dry-run count first.
    #[serde(default)]
    pub destructive: bool,
}

/// A problem and its fixes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Finding {
    /// `<class>:<subject kind>:<subject id>`: stable while the problem lasts.
    pub id: String,
    pub class: FindingClass,
    pub severity: Severity,
    pub subject: FindingSubject,
    /// What is wrong and what happens if nobody acts, in plain language.
    pub detail: String,
    #[serde(default)]
    pub evidence: FindingEvidence,
    /// The fixes, the recommended one first; empty when only a person can fix it (the
    /// detail says what to look at).
    #[serde(default)]
    pub actions: Vec<FixAction>,
}

impl Finding {
    /// The id a finding of `class` about `subject` has.
    pub fn id_for(class: FindingClass, subject: &FindingSubject) -> String {
        format!("{}:{}:{}", class.as_str(), subject.kind, subject.id)
    }
}

/// `GET /v1/diagnostics`: the tenant's findings, most severe first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Diagnostics {
    pub checked_at: DateTime<Utc>,
    pub findings: Vec<Finding>,
}

/// `POST /v1/deliveries/{id}/requeue`: the fix of a `stuck_delivery`. `attempt` is the
/// delivery's `attempts_made` the finding showed: the requeue applies only while the delivery
/// is still in flight on that attempt with its lease expired, so a requeue planned against
/// one stuck attempt never takes a later one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct RequeueRequest {
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    pub attempt: u32,
}

/// The answer to a requeue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Requeued {
    pub delivery_id: String,
    /// The stuck attempt, now recorded as failed (`timeout`, finished by the reaper).
    pub attempt: u32,
    /// `pending` (due at once), or `cancelled` when the delivery re-delivers a cancelled
    /// replay session (its original went back to the DLQ).
    pub state: crate::DeliveryState,
}

/// `POST /v1/dlq/recount`: the fix of a `dlq_counter_drift`. The tenant's DLQ counters were
/// recomputed from the dead deliveries in one transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DlqRecount {
    /// Dead deliveries counted (the DLQ depth now).
    pub dead: u64,
    /// Counter groups (target, error class, hour) that held another figure before.
    pub corrected: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn wire_shape_and_stable_id() {
        let subject = FindingSubject {
            kind: "target".into(),
            id: "crm".into(),
        };
        let f = Finding {
            id: Finding::id_for(FindingClass::FailingTarget, &subject),
            class: FindingClass::FailingTarget,
            severity: Severity::Critical,
            subject,
            detail: "d".into(),
            evidence: FindingEvidence::default(),
            actions: vec![],
        };
        assert_eq!(f.id, "failing_target:target:crm");
        let v = serde_json::to_value(&f).unwrap();
        assert_eq!(v["class"], json!("failing_target"));
        assert_eq!(v["severity"], json!("critical"));
        assert_eq!(v["evidence"], json!({}));
        let unknown: FindingClass = serde_json::from_value(json!("brand_new")).unwrap();
        assert_eq!(unknown, FindingClass::Unknown);
        assert!(Severity::Critical > Severity::Warning && Severity::Warning > Severity::Info);
    }
}
