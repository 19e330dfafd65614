//! `GET /v1/dlq/stats?group_by=…&<the filter of GET /v1/dlq>`: counts of dead deliveries,
//! grouped by `target`, `error_class`, `hour`, or two at once: `error_class,target` (the "by
//! cause" matrix, one row per pair present).
//!
//! Without a filter, or filtered only by target and/or error class, the counts come from the
//! trigger-maintained counters (`dlq_counts`: never a DLQ scan). A filter on endpoint, flow or
//! time is answered by a grouped count over the dead deliveries through the DLQ's partial
//! indexes, so it is exact too, and equals what listing with the same filter returns.

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use serde::Deserialize;
use sqlx::Row;
use switchyard_protocol::{DlqCell, DlqFilter, DlqGroup, DlqGroupBy, DlqStats, ErrorClass};

use crate::AppState;
use crate::clock::to_datetime;
use crate::delivery::store::{Bind, dlq_where};
use crate::dlq::DlqQuery;
use crate::error::ApiError;
use crate::extract::Tenant;
use crate::store::StoreError;

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

/// The grouping columns as SQL, for the counters table and for the deliveries table.
fn keys(group_by: DlqGroupBy, counters: bool) -> &'static str {
    match (group_by, counters) {
        (DlqGroupBy::Target, _) => "target",
        (DlqGroupBy::ErrorClass, true) => "error_class",
        (DlqGroupBy::ErrorClass, false) => "COALESCE(error_class, '')",
        (DlqGroupBy::Hour, true) => "CAST(hour AS TEXT)",
        (DlqGroupBy::Hour, false) => "CAST(dead_at / 3600000 AS TEXT)",
        (DlqGroupBy::ErrorClassTarget, true) => "error_class, target",
        (DlqGroupBy::ErrorClassTarget, false) => "COALESCE(error_class, ''), target",
    }
}

/// `(key columns…, count)` rows for the tenant's dead deliveries matching `filter`.
async fn grouped(
    pool: &sqlx::SqlitePool,
    tenant: &str,
    filter: &DlqFilter,
    group_by: DlqGroupBy,
) -> Result<Vec<sqlx::sqlite::SqliteRow>, StoreError> {
    let counters = filter.endpoint.is_none()
        && filter.flow.is_none()
        && filter.since.is_none()
        && filter.until.is_none();
    let keys = keys(group_by, counters);
    let (sql, binds) = if counters {
        let mut clause = String::new();
        let mut binds = Vec::new();
        if let Some(t) = &filter.target {
            clause.push_str(" AND target = ?");
            binds.push(Bind::Text(t.clone()));
        }
        if let Some(c) = filter.error_class {
            clause.push_str(" AND error_class = ?");
            binds.push(Bind::Text(c.as_str().to_owned()));
        }
        (
            format!(
                "SELECT {keys}, SUM(count) AS n FROM dlq_counts WHERE tenant = ?{clause} \
                 GROUP BY {keys} HAVING SUM(count) > 0"
            ),
            binds,
        )
    } else {
        let (clause, binds) = dlq_where(filter);
        (
            format!(
                "SELECT {keys}, COUNT(*) AS n FROM deliveries WHERE tenant = ? AND state = 'dead'{clause} \
                 GROUP BY {keys}"
            ),
            binds,
        )
    };
    let mut query = sqlx::query(&sql).bind(tenant);
    for b in binds {
        query = match b {
            Bind::Text(t) => query.bind(t),
            Bind::Int(i) => query.bind(i),
        };
    }
    Ok(query.fetch_all(pool).await?)
}

fn count(row: &sqlx::sqlite::SqliteRow) -> Result<u64, StoreError> {
    Ok(u64::try_from(row.try_get::<i64, _>("n")?).unwrap_or(0))
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
    let rows = grouped(&state.delivery.store.readers, &tenant, &filter, group_by).await?;
    let mut stats = DlqStats {
        group_by,
        total: 0,
        groups: Vec::new(),
        rows: Vec::new(),
    };
    for row in &rows {
        let n = count(row)?;
        stats.total += n;
        let first: String = row.try_get(0).map_err(StoreError::from)?;
        match group_by {
            DlqGroupBy::ErrorClassTarget => stats.rows.push(DlqCell {
                error_class: class(&first),
                target: row.try_get(1).map_err(StoreError::from)?,
                count: n,
            }),
            DlqGroupBy::Hour => {
                let hour: i64 = first.parse().unwrap_or(0);
                stats.groups.push(DlqGroup {
                    key: to_datetime(hour * 3_600_000)
                        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                    count: n,
                });
            }
            _ => stats.groups.push(DlqGroup {
                key: first,
                count: n,
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
