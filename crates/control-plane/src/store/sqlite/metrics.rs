//! SQL of delivery health: sums of the per-minute rollups, the health rows, and the tenant's
//! gauges from the open deliveries' index and the DLQ counters.

use async_trait::async_trait;
use switchyard_protocol::MetricsGroupBy;

use super::SqliteStore;
use crate::store::metrics::{HealthRow, MetricsStore, ROLLUP_SUMS, RollupRow, TenantGauges};
use crate::store::{StoreError, metrics::count};

#[async_trait]
impl MetricsStore for SqliteStore {
    async fn attempt_rollups(
        &self,
        tenant: &str,
        dimension: MetricsGroupBy,
        since_minute: i64,
        bucket_minutes: i64,
    ) -> Result<Vec<RollupRow>, StoreError> {
        let bucket = bucket_minutes.max(1);
        Ok(sqlx::query_as(&format!(
            "SELECT name, (minute / ?1) * ?1 AS bucket, {ROLLUP_SUMS} FROM attempt_rollups \
             WHERE tenant = ?2 AND dimension = ?3 AND minute >= ?4 \
             GROUP BY name, bucket ORDER BY name, bucket"
        ))
        .bind(bucket)
        .bind(tenant)
        .bind(dimension.as_str())
        .bind(since_minute)
        .fetch_all(&self.readers)
        .await?)
    }

    async fn delivery_health(
        &self,
        tenant: &str,
        dimension: MetricsGroupBy,
    ) -> Result<Vec<HealthRow>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT name, consecutive_failures, failing_since, last_success_at, last_failure_at, \
             last_error_class, last_error FROM delivery_health \
             WHERE tenant = ? AND dimension = ? ORDER BY name",
        )
        .bind(tenant)
        .bind(dimension.as_str())
        .fetch_all(&self.readers)
        .await?)
    }

    async fn events_accepted(&self, tenant: &str, since_minute: i64) -> Result<u64, StoreError> {
        let n: i64 = sqlx::query_scalar(
            "SELECT COALESCE(SUM(count), 0) FROM event_rollups WHERE tenant = ? AND minute >= ?",
        )
        .bind(tenant)
        .bind(since_minute)
        .fetch_one(&self.readers)
        .await?;
        Ok(count(n))
    }

    async fn tenant_gauges(&self, tenant: &str) -> Result<TenantGauges, StoreError> {
        let mut gauges: TenantGauges = sqlx::query_as(
            "SELECT COALESCE(SUM(state = 'pending'), 0) AS pending, \
             COALESCE(SUM(state = 'in_flight'), 0) AS in_flight, \
             MIN(CASE WHEN state = 'pending' THEN created_at END) AS oldest_pending_at, \
             0 AS dead, 0 AS replays_running \
             FROM deliveries WHERE tenant = ? AND state IN ('pending', 'in_flight')",
        )
        .bind(tenant)
        .fetch_one(&self.readers)
        .await?;
        gauges.dead =
            sqlx::query_scalar("SELECT COALESCE(SUM(count), 0) FROM dlq_counts WHERE tenant = ?")
                .bind(tenant)
                .fetch_one(&self.readers)
                .await?;
        // A session runs while one of its deliveries is still open (contract: replays).
        gauges.replays_running = sqlx::query_scalar(
            "SELECT COUNT(DISTINCT d.replay_session) FROM deliveries d \
             JOIN replay_sessions s ON s.tenant = d.tenant AND s.id = d.replay_session \
             WHERE d.tenant = ? AND d.state IN ('pending', 'in_flight') \
             AND d.replay_session IS NOT NULL AND s.cancelled_at IS NULL",
        )
        .bind(tenant)
        .fetch_one(&self.readers)
        .await?;
        Ok(gauges)
    }

    async fn sweep_rollups(&self, before_minute: i64) -> Result<u64, StoreError> {
        let mut conn = self.writer.acquire().await?;
        let rollups = sqlx::query("DELETE FROM attempt_rollups WHERE minute < ?")
            .bind(before_minute)
            .execute(&mut *conn)
            .await?
            .rows_affected();
        let events = sqlx::query("DELETE FROM event_rollups WHERE minute < ?")
            .bind(before_minute)
            .execute(&mut *conn)
            .await?
            .rows_affected();
        Ok(rollups + events)
    }
}
