//! `GET /v1/dlq/stats?group_by=…&<the filter of GET /v1/dlq>`: counts of dead deliveries,
//! grouped by `target`, `error_class`, `hour`, or two at once: `error_class,target` (the "by
//! cause" matrix, one row per pair present).
//!
//! The counts are exact and equal what listing with the same filter returns. The store
//! answers from counters kept with every transition into and out of `dead` when the filter
//! allows (none, or only target and/or error class: never a DLQ scan), else with a grouped
//! count through the DLQ's indexes.

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use serde::Deserialize;
use switchyard_protocol::{DlqCell, DlqFilter, DlqGroup, DlqGroupBy, DlqStats, ErrorClass};

use crate::AppState;
use crate::clock::to_datetime;
use crate::dlq::DlqQuery;
use crate::error::ApiError;
use crate::extract::Tenant;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatsQuery {
    pub group_by: Option<String>,
    pub endpoint: Option<String>,
    pub target: Option<String>,
    pub flow: Option<String>,
    pub error_class: Option<String>,
    pub since: Option<String>,
    pub until: Option<String>,
}

impl StatsQuery {
    fn group_by(&self) -> Result<DlqGroupBy, ApiError> {
        let text = self.group_by.as_deref().unwrap_or("target");
        DlqGroupBy::parse(text).ok_or_else(|| {
            ApiError::validation(
                "group_by",
                format!("{text:?} is not one of target, error_class, hour, error_class,target"),
            )
        })
    }

    fn filter(&self) -> Result<DlqFilter, ApiError> {
        DlqQuery {
            endpoint: self.endpoint.clone(),
            target: self.target.clone(),
            flow: self.flow.clone(),
            error_class: self.error_class.clone(),
            since: self.since.clone(),
            until: self.until.clone(),
            limit: None,
            cursor: None,
        }
        .filter()
    }
}

/// A stored error class; like the DLQ list, a dead delivery without one reads as `connect`.
fn class(text: &str) -> ErrorClass {
    ErrorClass::parse(text).unwrap_or(ErrorClass::Connect)
}

pub async fn stats(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    query: Result<Query<StatsQuery>, QueryRejection>,
) -> Result<Json<DlqStats>, ApiError> {
    let Query(query) = query.map_err(|e| ApiError::validation("query", e.body_text()))?;
    let group_by = query.group_by()?;
    let filter = query.filter()?;
    let counts = state.store.dlq_counts(&tenant, &filter, group_by).await?;
    let mut stats = DlqStats {
        group_by,
        total: 0,
        groups: Vec::new(),
        rows: Vec::new(),
    };
    for c in counts {
        stats.total += c.count;
        let count = c.count;
        match group_by {
            DlqGroupBy::ErrorClassTarget => stats.rows.push(DlqCell {
                error_class: class(c.error_class.as_deref().unwrap_or_default()),
                target: c.target.unwrap_or_default(),
                count,
            }),
            DlqGroupBy::Hour => stats.groups.push(DlqGroup {
                key: to_datetime(c.hour.unwrap_or(0) * 3_600_000)
                    .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                count,
            }),
            DlqGroupBy::Target => stats.groups.push(DlqGroup {
                key: c.target.unwrap_or_default(),
                count,
            }),
            DlqGroupBy::ErrorClass => stats.groups.push(DlqGroup {
                key: c.error_class.unwrap_or_default(),
                count,
            }),
        }
    }
    if group_by == DlqGroupBy::Hour {
        // RFC 3339 hour starts sort as text: newest first.
        stats.groups.sort_by(|a, b| b.key.cmp(&a.key));
    } else {
        stats
            .groups
            .sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.key.cmp(&b.key)));
    }
    stats.rows.sort_by(|a, b| {
        b.count
            .cmp(&a.count)
            .then_with(|| a.target.cmp(&b.target))
            .then_with(|| a.error_class.as_str().cmp(b.error_class.as_str()))
    });
    Ok(Json(stats))
}
