//! Replay sessions: re-delivering dead deliveries, at most once per session.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::dlq::DlqFilter;

/// What [`is_session_id`] accepts, as the OpenAPI document states it.
pub const SESSION_ID_PATTERN: &str = "^[A-Za-z0-9._:-]{1,128}$";
/// Most delivery ids one session names.
pub const MAX_DELIVERY_IDS: usize = 1_000;
/// The highest `rate_per_s`.
pub const MAX_RATE_PER_S: f64 = 10_000.0;
/// The slowest replay rate: one re-delivery every 1,000 s. (A rate nearer 0 would space the
/// re-deliveries beyond any representable time.)
pub const MIN_RATE_PER_S: f64 = 0.001;

/// A replay session id: 1-128 characters of letters, digits and `. _ : -`.
pub fn is_session_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._:-".contains(&b))
}

/// What a session replays.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ReplaySelection {
    /// These dead deliveries (1-1000 ids).
    DeliveryIds(Vec<String>),
    /// Every delivery in the DLQ matching the filter when the session is created.
    Filter(DlqFilter),
}

/// `PUT /v1/replays/{session_id}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ReplayRequest {
    pub selection: ReplaySelection,
    /// At most this many re-deliveries start per second (default: no limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_per_s: Option<f64>,
    /// Answer how many deliveries would be replayed; create nothing.
    #[serde(default)]
    pub dry_run: bool,
}

/// The answer to a dry run: nothing was created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReplayDryRun {
    pub session_id: String,
    pub dry_run: bool,
    /// Dead deliveries the session would replay.
    pub count: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum ReplayStatus {
    /// Some re-deliveries are still pending or retrying.
    Running,
    /// Every item reached an outcome.
    Completed,
    /// Cancelled: items not yet attempted were dropped (their originals stay in the DLQ).
    Cancelled,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum ReplayItemStatus {
    Pending,
    Succeeded,
    /// The re-delivery died again: it is in the DLQ, linked to this session.
    Failed,
    Cancelled,
    /// Not replayed (`reason` says why: not found, not dead, already replayed).
    Skipped,
}

/// One selected delivery and what became of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReplayItem {
    /// The dead delivery that was selected.
    pub original_delivery_id: String,
    /// The new delivery created for it (absent when skipped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery_id: Option<String>,
    pub status: ReplayItemStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReplayCounts {
    /// Items replayed (skipped ones excluded).
    pub total: u64,
    pub succeeded: u64,
    pub failed: u64,
    pub pending: u64,
    pub cancelled: u64,
    pub skipped: u64,
}

/// A replay session. `GET /v1/replays` omits `items`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReplaySession {
    pub id: String,
    pub status: ReplayStatus,
    pub selection: ReplaySelection,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_per_s: Option<f64>,
    pub created_at: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancelled_at: Option<DateTime<Utc>>,
    pub counts: ReplayCounts,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<Vec<ReplayItem>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn selection_wire_shapes() {
        let by_ids: ReplayRequest =
            serde_json::from_value(json!({"selection": {"delivery_ids": ["dlv_1"]}})).unwrap();
        assert_eq!(
            by_ids.selection,
            ReplaySelection::DeliveryIds(vec!["dlv_1".into()])
        );
        let by_filter: ReplayRequest = serde_json::from_value(json!({
            "selection": {"filter": {"target": "crm", "error_class": "http_5xx"}},
            "rate_per_s": 5.0, "dry_run": true
        }))
        .unwrap();
        let ReplaySelection::Filter(filter) = by_filter.selection else {
            panic!("filter expected")
        };
        assert_eq!(filter.target.as_deref(), Some("crm"));
        assert_eq!(filter.error_class, Some(crate::ErrorClass::Http5xx));
        assert!(
            serde_json::from_value::<ReplayRequest>(json!({"selection": {"filter": {"bogus": 1}}}))
                .is_err()
        );
    }
}
