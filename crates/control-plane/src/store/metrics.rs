//! Delivery health: the rollups and health rows that a trigger keeps with every attempt that
//! leaves `in_flight` (`migrations/*/…_delivery_health.sql`), and the tenant's current totals.
//! Reads only; nothing here scans attempts.

use async_trait::async_trait;
use switchyard_protocol::MetricsGroupBy;

use super::StoreError;
use super::gauges::TenantGauges;

/// The error classes in the order of the rollup's `f_*` columns, then `f_other`.
pub const FAILURE_COLUMNS: [&str; 7] = [
    "f_http_4xx",
    "f_http_5xx",
    "f_timeout",
    "f_connect",
    "f_tls",
    "f_forbidden_address",
    "f_other",
];

/// The sums a rollup query selects, by column name, shared by both backends' SQL (their
/// placeholders differ, the sums do not; the cast because PostgreSQL sums `BIGINT` as
/// `NUMERIC`).
pub const ROLLUP_SUMS: &str = "CAST(SUM(attempts) AS BIGINT) AS attempts, CAST(SUM(successes) AS BIGINT) AS successes, \
     CAST(SUM(f_http_4xx) AS BIGINT) AS f_http_4xx, \
     CAST(SUM(f_http_5xx) AS BIGINT) AS f_http_5xx, \
     CAST(SUM(f_timeout) AS BIGINT) AS f_timeout, CAST(SUM(f_connect) AS BIGINT) AS f_connect, \
     CAST(SUM(f_tls) AS BIGINT) AS f_tls, \
     CAST(SUM(f_forbidden_address) AS BIGINT) AS f_forbidden_address, \
     CAST(SUM(f_other) AS BIGINT) AS f_other, CAST(SUM(lat_0) AS BIGINT) AS lat_0, \
     CAST(SUM(lat_1) AS BIGINT) AS lat_1, CAST(SUM(lat_2) AS BIGINT) AS lat_2, \
     CAST(SUM(lat_3) AS BIGINT) AS lat_3, CAST(SUM(lat_4) AS BIGINT) AS lat_4, \
     CAST(SUM(lat_5) AS BIGINT) AS lat_5, CAST(SUM(lat_6) AS BIGINT) AS lat_6, \
     CAST(SUM(lat_7) AS BIGINT) AS lat_7, CAST(SUM(lat_8) AS BIGINT) AS lat_8, \
     CAST(SUM(lat_9) AS BIGINT) AS lat_9, CAST(SUM(lat_10) AS BIGINT) AS lat_10, \
     CAST(SUM(lat_11) AS BIGINT) AS lat_11, CAST(SUM(lat_12) AS BIGINT) AS lat_12";

/// The attempts of one group that finished in one chart bucket.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct RollupRow {
    pub name: String,
    /// The bucket's first minute (unix minutes, a multiple of the bucket width).
    pub bucket: i64,
    pub attempts: i64,
    pub successes: i64,
    pub f_http_4xx: i64,
    pub f_http_5xx: i64,
    pub f_timeout: i64,
    pub f_connect: i64,
    pub f_tls: i64,
    pub f_forbidden_address: i64,
    pub f_other: i64,
    pub lat_0: i64,
    pub lat_1: i64,
    pub lat_2: i64,
    pub lat_3: i64,
    pub lat_4: i64,
    pub lat_5: i64,
    pub lat_6: i64,
    pub lat_7: i64,
    pub lat_8: i64,
    pub lat_9: i64,
    pub lat_10: i64,
    pub lat_11: i64,
    pub lat_12: i64,
}

impl RollupRow {
    /// Failures by class, in [`FAILURE_COLUMNS`] order.
    pub fn failures(&self) -> [u64; 7] {
        [
            self.f_http_4xx,
            self.f_http_5xx,
            self.f_timeout,
            self.f_connect,
            self.f_tls,
            self.f_forbidden_address,
            self.f_other,
        ]
        .map(count)
    }

    /// The latency histogram (bounds: `switchyard_protocol::metrics::LATENCY_BOUNDS_MS`).
    pub fn latency(&self) -> [u64; 13] {
        [
            self.lat_0,
            self.lat_1,
            self.lat_2,
            self.lat_3,
            self.lat_4,
            self.lat_5,
            self.lat_6,
            self.lat_7,
            self.lat_8,
            self.lat_9,
            self.lat_10,
            self.lat_11,
            self.lat_12,
        ]
        .map(count)
    }
}

/// The rollup rows a bucket of `bucket_minutes` sums: hour rows (60) when it is whole hours,
/// minute rows (1) otherwise.
pub fn resolution(bucket_minutes: i64) -> i64 {
    if bucket_minutes % 60 == 0 { 60 } else { 1 }
}

/// A stored count as `u64` (sums are never negative).
pub fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// The run of failures of one target, endpoint or flow.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct HealthRow {
    pub name: String,
    pub consecutive_failures: i64,
    pub failing_since: Option<i64>,
    pub last_success_at: Option<i64>,
    pub last_failure_at: Option<i64>,
    pub last_error_class: Option<String>,
    pub last_error: Option<String>,
}

/// Everything one delivery-health report reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReportRows {
    pub rollups: Vec<RollupRow>,
    pub health: Vec<HealthRow>,
    pub events_accepted: u64,
    pub gauges: TenantGauges,
}

#[async_trait]
pub trait MetricsStore {
    /// The tenant's attempts per group of `dimension` and per bucket of `bucket_minutes`
    /// that finished at or after `since_minute` (unix minutes), by name then bucket. Buckets
    /// of whole hours sum the hour rows, others the minute rows ([`resolution`]).
    async fn attempt_rollups(
        &self,
        tenant: &str,
        dimension: MetricsGroupBy,
        since_minute: i64,
        bucket_minutes: i64,
    ) -> Result<Vec<RollupRow>, StoreError>;

    /// The health row of every group of `dimension` that has one.
    async fn delivery_health(
        &self,
        tenant: &str,
        dimension: MetricsGroupBy,
    ) -> Result<Vec<HealthRow>, StoreError>;

    /// Events the tenant had accepted at or after `since_minute`.
    async fn events_accepted(&self, tenant: &str, since_minute: i64) -> Result<u64, StoreError>;

    /// [`Self::attempt_rollups`], [`Self::delivery_health`], [`Self::events_accepted`] and the
    /// tenant's gauges (`GaugeStore::tenant_gauges`) read in one snapshot of the database, so
    /// the report's figures agree with each other (a delivery counted dead has its last
    /// attempt counted too).
    async fn delivery_report(
        &self,
        tenant: &str,
        dimension: MetricsGroupBy,
        since_minute: i64,
        bucket_minutes: i64,
    ) -> Result<ReportRows, StoreError>;

    /// Drops hour rollups and event counts of minutes before `before_minute`, and minute
    /// rollups before `minutes_before` (they serve only the short windows); returns how many
    /// rows went.
    async fn sweep_rollups(
        &self,
        before_minute: i64,
        minutes_before: i64,
    ) -> Result<u64, StoreError>;
}
