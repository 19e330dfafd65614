//! `GET /v1/metrics/deliveries?window=15m|1h|24h|7d&group_by=target|endpoint|flow`: delivery
//! health per target, endpoint or flow, and the tenant's totals.
//!
//! Answered from the per-minute rollups and health rows the store keeps with every recorded
//! attempt (`store::metrics`), so the cost depends on the window and the number of groups,
//! not on how many attempts there were. The window is a whole number of chart buckets ending
//! with the current one (which is still filling).

use std::collections::{BTreeMap, BTreeSet};

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use serde::Deserialize;
use switchyard_protocol::metrics::quantile_ms;
use switchyard_protocol::{
    AttemptFigures, DeliveryMetrics, ErrorClass, LatencyMs, MetricsBucket, MetricsGroup,
    MetricsGroupBy, MetricsTotals, MetricsWindow,
};
use utoipa::openapi::path::HttpMethod::Get;
use utoipa_axum::router::OpenApiRouter;

use crate::AppState;
use crate::clock::to_datetime;
use crate::error::ApiError;
use crate::extract::Tenant;
use crate::openapi::{delivery as doc, route};
use crate::store::metrics::count;
use crate::store::{HealthRow, RollupRow, TenantGauges};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(route(
        "/v1/metrics/deliveries",
        Get,
        deliveries,
        doc::metrics(),
    ))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricsQuery {
    pub window: Option<String>,
    pub group_by: Option<String>,
}

impl MetricsQuery {
    fn window(&self) -> Result<MetricsWindow, ApiError> {
        let text = self.window.as_deref().unwrap_or("1h");
        MetricsWindow::parse(text).ok_or_else(|| {
            ApiError::validation("window", format!("{text:?} is not one of 15m, 1h, 24h, 7d"))
        })
    }

    fn group_by(&self) -> Result<MetricsGroupBy, ApiError> {
        let text = self.group_by.as_deref().unwrap_or("target");
        MetricsGroupBy::parse(text).ok_or_else(|| {
            ApiError::validation(
                "group_by",
                format!("{text:?} is not one of target, endpoint, flow"),
            )
        })
    }
}

async fn deliveries(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    query: Result<Query<MetricsQuery>, QueryRejection>,
) -> Result<Json<DeliveryMetrics>, ApiError> {
    let Query(query) = query.map_err(|e| ApiError::validation("query", e.body_text()))?;
    let window = query.window()?;
    let group_by = query.group_by()?;
    let span = Span::ending(window, state.clock.now_ms());
    let report_rows = state
        .store
        .delivery_report(&tenant, group_by, span.first, span.bucket);
    let rows = state
        .telemetry
        .store("delivery_report", report_rows)
        .await?;
    Ok(Json(report(
        window,
        group_by,
        &span,
        &rows.rollups,
        &rows.health,
        rows.events_accepted,
        &rows.gauges,
    )))
}

/// The buckets a window covers, in unix minutes: `count` buckets of `bucket` minutes, the
/// last one holding `now`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub first: i64,
    pub bucket: i64,
    pub count: i64,
    pub now_ms: i64,
}

impl Span {
    pub fn ending(window: MetricsWindow, now_ms: i64) -> Self {
        let bucket = window.bucket_minutes();
        let count = window.minutes() / bucket;
        let last = now_ms.div_euclid(60_000).div_euclid(bucket) * bucket;
        Self {
            first: last - (count - 1) * bucket,
            bucket,
            count,
            now_ms,
        }
    }
}

/// Sums of rollup rows: overall, and per bucket start.
#[derive(Debug, Default)]
struct Sums {
    attempts: u64,
    successes: u64,
    failures: [u64; 7],
    latency: [u64; 13],
    by_bucket: BTreeMap<i64, ([u64; 2], [u64; 13])>,
}

impl Sums {
    fn add(&mut self, row: &RollupRow) {
        let attempts = count(row.attempts);
        let failed = attempts.saturating_sub(count(row.successes));
        self.attempts += attempts;
        self.successes += count(row.successes);
        for (sum, n) in self.failures.iter_mut().zip(row.failures()) {
            *sum += n;
        }
        let latency = row.latency();
        for (sum, n) in self.latency.iter_mut().zip(latency) {
            *sum += n;
        }
        let (counts, histogram) = self.by_bucket.entry(row.bucket).or_default();
        counts[0] += attempts;
        counts[1] += failed;
        for (sum, n) in histogram.iter_mut().zip(latency) {
            *sum += n;
        }
    }

    fn figures(&self, span: &Span) -> AttemptFigures {
        let failures_by_class = ErrorClass::ALL
            .into_iter()
            .zip(self.failures)
            .filter(|(_, n)| *n > 0)
            .collect();
        let latency = (|| {
            Some(LatencyMs {
                p50: quantile_ms(&self.latency, 0.50)?,
                p95: quantile_ms(&self.latency, 0.95)?,
                p99: quantile_ms(&self.latency, 0.99)?,
            })
        })();
        let buckets = (0..span.count)
            .map(|i| {
                let start = span.first + i * span.bucket;
                let (counts, histogram) = self.by_bucket.get(&start).copied().unwrap_or_default();
                MetricsBucket {
                    start: to_datetime(start * 60_000),
                    attempts: counts[0],
                    failures: counts[1],
                    p95_ms: quantile_ms(&histogram, 0.95),
                }
            })
            .collect();
        AttemptFigures {
            attempts: self.attempts,
            successes: self.successes,
            failures: self.attempts.saturating_sub(self.successes),
            failures_by_class,
            success_rate: (self.attempts > 0).then(|| self.successes as f64 / self.attempts as f64),
            latency_ms: latency.filter(|_| self.attempts > 0),
            buckets,
        }
    }
}

/// Builds the report from what the store returned (pure: the handler only fetches).
pub fn report(
    window: MetricsWindow,
    group_by: MetricsGroupBy,
    span: &Span,
    rollups: &[RollupRow],
    health: &[HealthRow],
    events_accepted: u64,
    gauges: &TenantGauges,
) -> DeliveryMetrics {
    let mut total = Sums::default();
    let mut by_name: BTreeMap<&str, Sums> = BTreeMap::new();
    for row in rollups {
        total.add(row);
        by_name.entry(&row.name).or_default().add(row);
    }
    let health: BTreeMap<&str, &HealthRow> = health.iter().map(|h| (h.name.as_str(), h)).collect();
    // A group shows when it had an attempt in the window, or its failure run is still open
    // (a target that failed an hour ago and has not been tried since is still failing).
    let names: BTreeSet<&str> = by_name
        .keys()
        .copied()
        .chain(
            health
                .values()
                .filter(|h| h.failing_since.is_some())
                .map(|h| h.name.as_str()),
        )
        .collect();
    let empty = Sums::default();
    let groups = names
        .into_iter()
        .map(|name| {
            let h = health.get(name);
            MetricsGroup {
                name: name.to_owned(),
                figures: by_name.get(name).unwrap_or(&empty).figures(span),
                consecutive_failures: h.map(|h| count(h.consecutive_failures)),
                failing_since: h.and_then(|h| h.failing_since).map(to_datetime),
                last_success_at: h.and_then(|h| h.last_success_at).map(to_datetime),
                last_failure_at: h.and_then(|h| h.last_failure_at).map(to_datetime),
                last_error_class: h
                    .and_then(|h| h.last_error_class.as_deref())
                    .and_then(ErrorClass::parse),
                last_error: h.and_then(|h| h.last_error.clone()),
            }
        })
        .collect();
    DeliveryMetrics {
        window,
        group_by,
        since: to_datetime(span.first * 60_000),
        until: to_datetime(span.now_ms),
        bucket_seconds: u64::try_from(span.bucket * 60).unwrap_or(60),
        totals: MetricsTotals {
            events_accepted,
            figures: total.figures(span),
            deliveries_pending: count(gauges.pending),
            deliveries_in_flight: count(gauges.in_flight),
            oldest_pending_at: gauges.oldest_pending_at.map(to_datetime),
            dead: count(gauges.dead),
            replays_running: count(gauges.replays_running),
        },
        groups,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, bucket: i64, attempts: i64, successes: i64, lat_2: i64) -> RollupRow {
        RollupRow {
            name: name.into(),
            bucket,
            attempts,
            successes,
            f_http_4xx: 0,
            f_http_5xx: attempts - successes,
            f_timeout: 0,
            f_connect: 0,
            f_tls: 0,
            f_forbidden_address: 0,
            f_other: 0,
            lat_0: 0,
            lat_1: 0,
            lat_2,
            lat_3: 0,
            lat_4: 0,
            lat_5: 0,
            lat_6: 0,
            lat_7: 0,
            lat_8: 0,
            lat_9: 0,
            lat_10: 0,
            lat_11: 0,
            lat_12: 0,
        }
    }

    #[test]
    fn a_window_is_whole_buckets_ending_with_the_current_one() {
        // 10:07:30 UTC on some day, in unix ms.
        let now = (1_000 * 1440 + 10 * 60 + 7) * 60_000 + 30_000;
        let span = Span::ending(MetricsWindow::FifteenMinutes, now);
        assert_eq!(span.count, 15);
        assert_eq!(span.first, 1_000 * 1440 + 10 * 60 + 7 - 14);
        let day = Span::ending(MetricsWindow::OneDay, now);
        assert_eq!((day.bucket, day.count), (60, 24));
        assert_eq!(day.first % 60, 0);
        assert_eq!(day.first + (day.count - 1) * 60, 1_000 * 1440 + 10 * 60);
    }

    #[test]
    fn groups_sum_their_rows_and_totals_sum_the_groups() {
        let now = 100 * 60_000;
        let span = Span::ending(MetricsWindow::FifteenMinutes, now);
        let rows = [
            row("a", 95, 4, 3, 4),
            row("a", 100, 6, 6, 6),
            row("b", 99, 2, 0, 2),
        ];
        let health = [HealthRow {
            name: "b".into(),
            consecutive_failures: 2,
            failing_since: Some(99 * 60_000),
            last_success_at: None,
            last_failure_at: Some(99 * 60_000 + 10),
            last_error_class: Some("http_5xx".into()),
            last_error: Some("HTTP 500".into()),
        }];
        let report = report(
            MetricsWindow::FifteenMinutes,
            MetricsGroupBy::Target,
            &span,
            &rows,
            &health,
            12,
            &TenantGauges::default(),
        );
        assert_eq!(report.totals.figures.attempts, 12);
        assert_eq!(report.totals.figures.failures, 3);
        assert_eq!(report.totals.events_accepted, 12);
        let a = &report.groups[0];
        assert_eq!((a.name.as_str(), a.figures.attempts), ("a", 10));
        assert_eq!(a.figures.success_rate, Some(0.9));
        assert_eq!(
            a.consecutive_failures, None,
            "no health row: unknown, not 0"
        );
        assert_eq!(a.figures.buckets.len(), 15);
        assert_eq!(a.figures.buckets.last().unwrap().attempts, 6);
        let b = &report.groups[1];
        assert_eq!(b.figures.success_rate, Some(0.0));
        assert_eq!(b.figures.failures_by_class[&ErrorClass::Http5xx], 2);
        assert_eq!(b.consecutive_failures, Some(2));
        assert_eq!(b.last_error_class, Some(ErrorClass::Http5xx));
    }

    #[test]
    fn a_failing_group_without_attempts_in_the_window_still_shows() {
        let span = Span::ending(MetricsWindow::FifteenMinutes, 1_000 * 60_000);
        let health = [HealthRow {
            name: "down".into(),
            consecutive_failures: 5,
            failing_since: Some(10),
            last_success_at: None,
            last_failure_at: Some(20),
            last_error_class: Some("connect".into()),
            last_error: None,
        }];
        let report = report(
            MetricsWindow::FifteenMinutes,
            MetricsGroupBy::Target,
            &span,
            &[],
            &health,
            0,
            &TenantGauges::default(),
        );
        assert_eq!(report.groups.len(), 1);
        assert_eq!(report.groups[0].figures.attempts, 0);
        assert_eq!(report.groups[0].figures.success_rate, None);
        assert_eq!(report.groups[0].figures.latency_ms, None);
        assert_eq!(report.totals.figures.success_rate, None);
    }
}
