//! Retirement sessions: taking a resource out of service without losing a delivery
//! (`PUT /v1/retirements/{id}`, `GET /v1/retirements[/{id}]`, `POST …/{id}/cancel`;
//! contract section 5).
//!
//! The id is chosen by the client, like a replay session's, so a retry of the same `PUT`
//! names the same retirement: 201 the first time, 200 with the same body after, 422
//! `retirement_reused` for the same id with a different body.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::resource::ResourceKind;

/// What becomes of the resource's dead deliveries when it is deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "sqlx", derive(sqlx::Type))]
#[cfg_attr(feature = "sqlx", sqlx(type_name = "TEXT", rename_all = "snake_case"))]
pub enum DlqDisposition {
    /// They stay browsable; they can be replayed once a resource of that name exists again.
    #[default]
    Keep,
    /// They are removed with the resource.
    Purge,
}

/// `PUT /v1/retirements/{id}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct RetirementRequest {
    pub kind: ResourceKind,
    pub name: String,
    /// How long to wait, once drained and disabled, before deleting (cancellable): 0 to
    /// 604800 (7 days), default 0.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub grace_seconds: u64,
    /// Retire the flows that reference the resource first, instead of stopping at `blocked`.
    #[serde(default)]
    pub cascade_flows: bool,
    #[serde(default)]
    pub dlq: DlqDisposition,
    /// Answer what the retirement would do (its impact and blockers); create nothing.
    #[serde(default)]
    pub dry_run: bool,
}

/// Where a retirement is. It walks `blocked → draining → disabled → scheduled → deleted`,
/// skipping `blocked` when nothing blocks it, or ends `cancelled`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "sqlx", derive(sqlx::Type))]
#[cfg_attr(feature = "sqlx", sqlx(type_name = "TEXT", rename_all = "snake_case"))]
pub enum RetirementState {
    /// Waiting for a person: `blockers` says what stops it (flows that reference the
    /// resource, when `cascade_flows` is off).
    Blocked,
    /// No new work is accepted; pending and in-flight deliveries finish or die on their
    /// normal schedule (`drain_eta`).
    Draining,
    /// Drained; the resource takes no work.
    Disabled,
    /// The grace period runs until `delete_at`.
    Scheduled,
    /// Deleted; a tombstone keeps the record.
    Deleted,
    /// Cancelled: what the retirement disabled is enabled again, nothing was deleted.
    Cancelled,
}

impl RetirementState {
    /// Deleted or cancelled: nothing more happens.
    pub fn is_final(self) -> bool {
        matches!(self, Self::Deleted | Self::Cancelled)
    }

    /// Cancel still undoes everything (the resource has not been deleted).
    pub fn is_cancellable(self) -> bool {
        !self.is_final()
    }
}

/// What stops a retirement, or what it waits for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Blocker {
    /// `flow` (references the resource), `pending_deliveries`, `open_replay`.
    pub kind: String,
    /// The flow's name or the replay session's id; absent for a count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub count: Option<u64>,
}

/// What retiring the resource touches, as counted when the figure was taken.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RetirementImpact {
    /// Flows that reference the resource (retired first with `cascade_flows`).
    pub flows: Vec<String>,
    /// Deliveries still pending or in flight that the drain waits for.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub pending_deliveries: u64,
    /// Dead deliveries of the resource (kept or purged per `dlq`).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub dlq_depth: u64,
    /// Replay sessions still running that re-deliver through it.
    pub open_replays: Vec<String>,
}

/// One state the retirement entered, and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RetirementStep {
    pub state: RetirementState,
    pub at: DateTime<Utc>,
}

/// A retirement session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Retirement {
    pub id: String,
    pub kind: ResourceKind,
    pub name: String,
    pub state: RetirementState,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub grace_seconds: u64,
    pub cascade_flows: bool,
    pub dlq: DlqDisposition,
    /// Empty unless `blocked`.
    #[serde(default)]
    pub blockers: Vec<Blocker>,
    pub impact: RetirementImpact,
    /// When the drain should be over, from the retry schedule of what is still pending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drain_eta: Option<DateTime<Utc>>,
    /// When a `scheduled` retirement deletes the resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_at: Option<DateTime<Utc>>,
    /// Flows retired first because of `cascade_flows`.
    #[serde(default)]
    pub cascaded_flows: Vec<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Every state entered, oldest first.
    pub history: Vec<RetirementStep>,
}

/// The answer to a dry run: nothing was created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RetirementDryRun {
    pub id: String,
    pub dry_run: bool,
    /// `blocked` or `draining`: where the retirement would start.
    pub would_start: RetirementState,
    #[serde(default)]
    pub blockers: Vec<Blocker>,
    pub impact: RetirementImpact,
}

/// `GET /v1/retirements`: newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RetirementList {
    pub items: Vec<Retirement>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn request_defaults_and_strictness() {
        let r: RetirementRequest =
            serde_json::from_value(json!({"kind": "target", "name": "crm"})).unwrap();
        assert_eq!(r.grace_seconds, 0);
        assert!(!r.cascade_flows && !r.dry_run);
        assert_eq!(r.dlq, DlqDisposition::Keep);
        assert!(
            serde_json::from_value::<RetirementRequest>(
                json!({"kind": "target", "name": "crm", "bogus": 1})
            )
            .is_err()
        );
        assert!(RetirementState::Scheduled.is_cancellable());
        assert!(!RetirementState::Deleted.is_cancellable());
    }
}
