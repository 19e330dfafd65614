//! SQL of the scrape-time gauges (see `crate::store::gauges`): the DLQ depth from the
//! `dlq_counts` counters, pending and in-flight counts through the partial indexes
//! `deliveries_due` and `deliveries_lease`, running replays from the open deliveries.

use std::collections::BTreeMap;

use async_trait::async_trait;

use super::{Backend, Conn};
use crate::store::gauges::{Gauges, TenantGauges, fold_by_tenant, from_totals};
use crate::store::{GaugeStore, StoreError};

/// Replay sessions not cancelled that still have a re-delivery open, as (tenant, session):
/// the session's status in `GET /v1/replays` is `running` exactly then.
const RUNNING_REPLAYS: &str = "SELECT DISTINCT d.tenant, d.replay_session FROM deliveries d \
     JOIN replay_sessions s ON s.tenant = d.tenant AND s.id = d.replay_session \
     WHERE d.state IN ('pending', 'in_flight') AND d.replay_session IS NOT NULL \
     AND s.cancelled_at IS NULL";

#[async_trait]
impl GaugeStore for Backend {
    async fn tenant_gauges(&self, tenant: &str) -> Result<TenantGauges, StoreError> {
        let mut conn = self.read().await?;
        tenant_gauges(&mut conn, tenant).await
    }

    async fn gauges(&self) -> Result<Gauges, StoreError> {
        let totals: (i64, i64, i64, i64) = sqlx::query_as(&format!(
            "SELECT (SELECT CAST(COALESCE(SUM(count), 0) AS BIGINT) FROM dlq_counts), \
             (SELECT COUNT(*) FROM deliveries WHERE state = 'pending'), \
             (SELECT COUNT(*) FROM deliveries WHERE state = 'in_flight'), \
             (SELECT COUNT(*) FROM ({RUNNING_REPLAYS}) AS running)"
        ))
        .fetch_one(self.reads())
        .await?;
        Ok(from_totals(totals))
    }

    async fn gauges_by_tenant(&self) -> Result<BTreeMap<String, Gauges>, StoreError> {
        let rows: Vec<(String, String, i64)> = sqlx::query_as(&format!(
            "SELECT tenant, 'dlq', CAST(SUM(count) AS BIGINT) FROM dlq_counts GROUP BY tenant \
             UNION ALL SELECT tenant, state, COUNT(*) FROM deliveries \
             WHERE state IN ('pending', 'in_flight') GROUP BY tenant, state \
             UNION ALL SELECT tenant, 'replays', COUNT(*) FROM ({RUNNING_REPLAYS}) AS running GROUP BY tenant"
        ))
        .fetch_all(self.reads())
        .await?;
        Ok(fold_by_tenant(rows))
    }

    async fn delivery_tenant(&self, delivery_id: &str) -> Result<Option<String>, StoreError> {
        Ok(
            sqlx::query_scalar("SELECT tenant FROM deliveries WHERE id = $1")
                .bind(delivery_id)
                .fetch_optional(self.reads())
                .await?,
        )
    }
}

/// One tenant's gauges on `conn` (a delivery-health report reads them in its snapshot).
pub(super) async fn tenant_gauges(
    conn: &mut Conn,
    tenant: &str,
) -> Result<TenantGauges, StoreError> {
    Ok(sqlx::query_as(&format!(
            "SELECT \
             CAST(COUNT(*) FILTER (WHERE o.state = 'pending') AS BIGINT) AS pending, \
             CAST(COUNT(*) FILTER (WHERE o.state = 'in_flight') AS BIGINT) AS in_flight, \
             MIN(o.created_at) FILTER (WHERE o.state = 'pending') AS oldest_pending_at, \
             (SELECT CAST(COALESCE(SUM(count), 0) AS BIGINT) FROM dlq_counts WHERE tenant = $1) AS dead, \
             (SELECT COUNT(*) FROM ({RUNNING_REPLAYS}) AS running WHERE tenant = $1) \
              AS replays_running \
             FROM deliveries o WHERE o.tenant = $1 AND o.state IN ('pending', 'in_flight')"
        ))
        .bind(tenant)
        .fetch_one(&mut *conn)
        .await?)
}
