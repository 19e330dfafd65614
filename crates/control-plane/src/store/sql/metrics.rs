//! SQL of delivery health: sums of the per-minute rollups, the health rows, and the tenant's
//! gauges from the open deliveries' index and the DLQ counters.

use async_trait::async_trait;
use switchyard_protocol::MetricsGroupBy;

use super::{Backend, Conn, dialect};
use crate::store::StoreError;
use crate::store::metrics::{HealthRow, MetricsStore, ROLLUP_SUMS, ReportRows, RollupRow};
use crate::store::metrics::{count, resolution};

#[async_trait]
impl MetricsStore for Backend {
    async fn attempt_rollups(
        &self,
        tenant: &str,
        dimension: MetricsGroupBy,
        since_minute: i64,
        bucket_minutes: i64,
    ) -> Result<Vec<RollupRow>, StoreError> {
        let mut conn = self.read().await?;
        rollups(&mut conn, tenant, dimension, since_minute, bucket_minutes).await
    }

    async fn delivery_health(
        &self,
        tenant: &str,
        dimension: MetricsGroupBy,
    ) -> Result<Vec<HealthRow>, StoreError> {
        let mut conn = self.read().await?;
        health(&mut conn, tenant, dimension).await
    }

    async fn events_accepted(&self, tenant: &str, since_minute: i64) -> Result<u64, StoreError> {
        let mut conn = self.read().await?;
        events(&mut conn, tenant, since_minute).await
    }

    async fn delivery_report(
        &self,
        tenant: &str,
        dimension: MetricsGroupBy,
        since_minute: i64,
        bucket_minutes: i64,
    ) -> Result<ReportRows, StoreError> {
        // One snapshot for every figure of the report.
        let mut tx = self.reads().begin().await?;
        super::run(&mut tx, dialect::READ_SNAPSHOT, &[]).await?;
        let rows = ReportRows {
            rollups: rollups(&mut tx, tenant, dimension, since_minute, bucket_minutes).await?,
            health: health(&mut tx, tenant, dimension).await?,
            events_accepted: events(&mut tx, tenant, since_minute).await?,
            gauges: super::gauges::tenant_gauges(&mut tx, tenant).await?,
        };
        tx.commit().await?;
        Ok(rows)
    }

    async fn sweep_rollups(
        &self,
        before_minute: i64,
        minutes_before: i64,
    ) -> Result<u64, StoreError> {
        let rollups = sqlx::query(
            "DELETE FROM attempt_rollups WHERE (resolution = 60 AND minute < $1) \
             OR (resolution = 1 AND minute < $2)",
        )
        .bind(before_minute)
        .bind(minutes_before)
        .execute(self.writes())
        .await?
        .rows_affected();
        let events = sqlx::query("DELETE FROM event_rollups WHERE minute < $1")
            .bind(before_minute)
            .execute(self.writes())
            .await?
            .rows_affected();
        Ok(rollups + events)
    }
}

async fn rollups(
    conn: &mut Conn,
    tenant: &str,
    dimension: MetricsGroupBy,
    since_minute: i64,
    bucket_minutes: i64,
) -> Result<Vec<RollupRow>, StoreError> {
    let bucket = bucket_minutes.max(1);
    Ok(sqlx::query_as(&format!(
        "SELECT name, (minute / $1) * $1 AS bucket, {ROLLUP_SUMS} FROM attempt_rollups \
             WHERE tenant = $2 AND dimension = $3 AND resolution = $4 AND minute >= $5 \
             GROUP BY name, bucket ORDER BY name, bucket"
    ))
    .bind(bucket)
    .bind(tenant)
    .bind(dimension.as_str())
    .bind(resolution(bucket))
    .bind(since_minute)
    .fetch_all(&mut *conn)
    .await?)
}

async fn health(
    conn: &mut Conn,
    tenant: &str,
    dimension: MetricsGroupBy,
) -> Result<Vec<HealthRow>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT name, consecutive_failures, failing_since, last_success_at, last_failure_at, \
             last_error_class, last_error FROM delivery_health \
             WHERE tenant = $1 AND dimension = $2 ORDER BY name",
    )
    .bind(tenant)
    .bind(dimension.as_str())
    .fetch_all(&mut *conn)
    .await?)
}

async fn events(conn: &mut Conn, tenant: &str, since_minute: i64) -> Result<u64, StoreError> {
    let n: i64 = sqlx::query_scalar(
        "SELECT CAST(COALESCE(SUM(count), 0) AS BIGINT) FROM event_rollups \
             WHERE tenant = $1 AND minute >= $2",
    )
    .bind(tenant)
    .bind(since_minute)
    .fetch_one(&mut *conn)
    .await?;
    Ok(count(n))
}
