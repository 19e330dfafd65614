//! The dead-letter queue: deliveries whose every attempt failed.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::events::{ErrorClass, Hop};

/// Which dead deliveries: every field narrows the selection; absent fields match all.
/// Used as the query of `GET /v1/dlq` and as a replay session's `selection.filter`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct DlqFilter {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_class: Option<ErrorClass>,
    /// Dead at or after this instant (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<DateTime<Utc>>,
    /// Dead strictly before this instant (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<DateTime<Utc>>,
}

/// One dead delivery, as the DLQ lists it (newest first).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DlqEntry {
    pub delivery_id: String,
    pub event_id: String,
    pub event_type: String,
    pub endpoint: String,
    pub flow: String,
    pub target: String,
    pub error_class: ErrorClass,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_status_code: Option<u16>,
    pub attempts: u32,
    pub dead_at: DateTime<Utc>,
    /// The hop whose attempt budget ran out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exhausted_hop: Option<Hop>,
    /// Set when this delivery was itself a replay that died again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_session: Option<String>,
}

/// `GET /v1/dlq/stats?group_by=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum DlqGroupBy {
    Target,
    ErrorClass,
    /// The UTC hour the delivery died in; keys are RFC 3339 hour starts.
    Hour,
    /// Two dimensions, error class × target (the "by cause" view): the counts are in `rows`
    /// (`groups` is empty). `group_by=target,error_class` means the same.
    #[serde(rename = "error_class,target")]
    ErrorClassTarget,
}

impl DlqGroupBy {
    /// The `group_by` query value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Target => "target",
            Self::ErrorClass => "error_class",
            Self::Hour => "hour",
            Self::ErrorClassTarget => "error_class,target",
        }
    }

    /// Parses a `group_by` query value (`target,error_class` is `error_class,target`).
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "target" => Some(Self::Target),
            "error_class" => Some(Self::ErrorClass),
            "hour" => Some(Self::Hour),
            "error_class,target" | "target,error_class" => Some(Self::ErrorClassTarget),
            _ => None,
        }
    }
}

/// One group of the DLQ statistics.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DlqGroup {
    /// The target name, the error class, or the hour (`2026-11-29T10:00:00Z`).
    pub key: String,
    pub count: u64,
}

/// One cell of the error class × target grouping.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DlqCell {
    pub error_class: ErrorClass,
    pub target: String,
    pub count: u64,
}

/// Counts of dead deliveries, grouped; largest groups first (hours: newest first).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DlqStats {
    pub group_by: DlqGroupBy,
    /// The dead deliveries matching the filter (without one: the tenant's whole DLQ).
    pub total: u64,
    /// One-dimensional groupings (`target`, `error_class`, `hour`); empty for two.
    pub groups: Vec<DlqGroup>,
    /// `error_class,target`: one row per pair present, largest first; absent otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rows: Vec<DlqCell>,
}
