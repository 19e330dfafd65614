//! SQL of the DLQ: pages through the partial indexes, counts from the trigger-maintained
//! counters (`dlq_counts`) whenever the filter allows.

use async_trait::async_trait;
use sqlx::QueryBuilder;
use switchyard_protocol::{DlqEntry, DlqFilter, DlqGroupBy};

use super::{Backend, Db};
use crate::store::rows::{CountRow, EntryRow};
use crate::store::{DlqCount, DlqStore, StoreError};

/// Appends the filter's conditions (each with a leading ` AND`).
pub(in crate::store) fn push_filter(q: &mut QueryBuilder<'_, Db>, filter: &DlqFilter) {
    for (column, value) in [
        ("endpoint", &filter.endpoint),
        ("target", &filter.target),
        ("flow", &filter.flow),
    ] {
        if let Some(v) = value {
            q.push(format!(" AND {column} = ")).push_bind(v.clone());
        }
    }
    if let Some(class) = filter.error_class {
        q.push(" AND error_class = ").push_bind(class.as_str());
    }
    if let Some(since) = filter.since {
        q.push(" AND dead_at >= ")
            .push_bind(since.timestamp_millis());
    }
    if let Some(until) = filter.until {
        q.push(" AND dead_at < ")
            .push_bind(until.timestamp_millis());
    }
}

/// The grouping columns, on the counters table and on the deliveries table.
fn keys(group_by: DlqGroupBy, counters: bool) -> &'static str {
    match (group_by, counters) {
        (DlqGroupBy::Target, _) => {
            "CAST(NULL AS TEXT) AS error_class, target, CAST(NULL AS BIGINT) AS hour"
        }
        (DlqGroupBy::ErrorClass, true) => {
            "error_class, CAST(NULL AS TEXT) AS target, CAST(NULL AS BIGINT) AS hour"
        }
        (DlqGroupBy::ErrorClass, false) => {
            "COALESCE(error_class, '') AS error_class, CAST(NULL AS TEXT) AS target, CAST(NULL AS BIGINT) AS hour"
        }
        (DlqGroupBy::Hour, true) => {
            "CAST(NULL AS TEXT) AS error_class, CAST(NULL AS TEXT) AS target, hour"
        }
        (DlqGroupBy::Hour, false) => {
            "CAST(NULL AS TEXT) AS error_class, CAST(NULL AS TEXT) AS target, dead_at / 3600000 AS hour"
        }
        (DlqGroupBy::ErrorClassTarget, true) => "error_class, target, CAST(NULL AS BIGINT) AS hour",
        (DlqGroupBy::ErrorClassTarget, false) => {
            "COALESCE(error_class, '') AS error_class, target, CAST(NULL AS BIGINT) AS hour"
        }
    }
}

fn group_columns(group_by: DlqGroupBy) -> &'static str {
    match group_by {
        DlqGroupBy::Target => "2",
        DlqGroupBy::ErrorClass => "1",
        DlqGroupBy::Hour => "3",
        DlqGroupBy::ErrorClassTarget => "1, 2",
    }
}

#[async_trait]
impl DlqStore for Backend {
    async fn dlq_page(
        &self,
        tenant: &str,
        filter: &DlqFilter,
        after: Option<(i64, String)>,
        limit: u32,
    ) -> Result<Vec<DlqEntry>, StoreError> {
        let mut q = QueryBuilder::<Db>::new(
            "SELECT id, event_id, event_type, endpoint, flow, target, error_class, last_status, attempts_made, \
             dead_at, replay_session, exhausted_hop FROM deliveries WHERE tenant = ",
        );
        q.push_bind(tenant).push(" AND state = 'dead'");
        push_filter(&mut q, filter);
        if let Some((at, id)) = after {
            q.push(" AND (dead_at, id) < (")
                .push_bind(at)
                .push(", ")
                .push_bind(id)
                .push(")");
        }
        q.push(" ORDER BY dead_at DESC, id DESC LIMIT ")
            .push_bind(i64::from(limit));
        let rows: Vec<EntryRow> = q.build_query_as().fetch_all(self.reads()).await?;
        rows.into_iter().map(EntryRow::into_wire).collect()
    }

    async fn dlq_counts(
        &self,
        tenant: &str,
        filter: &DlqFilter,
        group_by: DlqGroupBy,
    ) -> Result<Vec<DlqCount>, StoreError> {
        // Without a filter on endpoint, flow or time the counters answer (never a DLQ scan);
        // otherwise a grouped count through the DLQ's partial indexes.
        let counters = filter.endpoint.is_none()
            && filter.flow.is_none()
            && filter.since.is_none()
            && filter.until.is_none();
        let keys = keys(group_by, counters);
        let groups = group_columns(group_by);
        let mut q = QueryBuilder::<Db>::new(format!("SELECT {keys}, "));
        if counters {
            q.push("CAST(SUM(count) AS BIGINT) AS n FROM dlq_counts WHERE tenant = ")
                .push_bind(tenant);
            if let Some(t) = &filter.target {
                q.push(" AND target = ").push_bind(t.clone());
            }
            if let Some(c) = filter.error_class {
                q.push(" AND error_class = ").push_bind(c.as_str());
            }
            q.push(format!(" GROUP BY {groups} HAVING SUM(count) > 0"));
        } else {
            q.push("COUNT(*) AS n FROM deliveries WHERE tenant = ")
                .push_bind(tenant)
                .push(" AND state = 'dead'");
            push_filter(&mut q, filter);
            q.push(format!(" GROUP BY {groups}"));
        }
        let rows: Vec<CountRow> = q.build_query_as().fetch_all(self.reads()).await?;
        Ok(rows.into_iter().map(CountRow::into_count).collect())
    }
}
