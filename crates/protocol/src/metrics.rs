//! Delivery health: `GET /v1/metrics/deliveries?window=&group_by=` (contract section 8).
//!
//! Every figure comes from aggregates the control plane keeps with each recorded attempt
//! (per-minute rollups and a per-resource health row), never from a scan of the attempts.
//! A figure the server cannot compute is `null`, never a zero that looks like one.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::events::ErrorClass;

/// The span a health report covers, ending now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum MetricsWindow {
    #[serde(rename = "15m")]
    FifteenMinutes,
    #[serde(rename = "1h")]
    OneHour,
    #[serde(rename = "24h")]
    OneDay,
    #[serde(rename = "7d")]
    SevenDays,
}

impl MetricsWindow {
    pub const ALL: [MetricsWindow; 4] = [
        Self::FifteenMinutes,
        Self::OneHour,
        Self::OneDay,
        Self::SevenDays,
    ];

    /// The `window` query value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::FifteenMinutes => "15m",
            Self::OneHour => "1h",
            Self::OneDay => "24h",
            Self::SevenDays => "7d",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|w| w.as_str() == text)
    }

    /// The window's length in minutes.
    pub fn minutes(self) -> i64 {
        match self {
            Self::FifteenMinutes => 15,
            Self::OneHour => 60,
            Self::OneDay => 24 * 60,
            Self::SevenDays => 7 * 24 * 60,
        }
    }

    /// The width of one chart bucket in minutes: 15 to 42 points per window.
    pub fn bucket_minutes(self) -> i64 {
        match self {
            Self::FifteenMinutes => 1,
            Self::OneHour => 2,
            Self::OneDay => 60,
            Self::SevenDays => 4 * 60,
        }
    }
}

/// What the groups of a health report are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum MetricsGroupBy {
    Target,
    Endpoint,
    Flow,
}

impl MetricsGroupBy {
    pub const ALL: [MetricsGroupBy; 3] = [Self::Target, Self::Endpoint, Self::Flow];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Target => "target",
            Self::Endpoint => "endpoint",
            Self::Flow => "flow",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|g| g.as_str() == text)
    }
}

/// Attempt latency percentiles in milliseconds, estimated from a fixed histogram (bucket
/// bounds 5, 10, 25, 50, 100, 250, 500 ms, 1, 2.5, 5, 10, 30 s): exact to the bucket,
/// interpolated inside it. A value past 30 s reads as 30000 (at least that).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LatencyMs {
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
}

/// One chart point: the attempts that finished in `[start, start + bucket_seconds)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MetricsBucket {
    pub start: DateTime<Utc>,
    pub attempts: u64,
    pub failures: u64,
    /// `null` when no attempt finished in the bucket.
    pub p95_ms: Option<f64>,
}

/// The attempt figures of one group (or of the whole tenant) over the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AttemptFigures {
    /// Attempts that finished in the window (sent by the control plane or an edge plane).
    pub attempts: u64,
    pub successes: u64,
    pub failures: u64,
    /// Failures by error class; classes with none are absent.
    pub failures_by_class: BTreeMap<ErrorClass, u64>,
    /// `successes / attempts`; `null` without attempts.
    pub success_rate: Option<f64>,
    /// `null` without attempts.
    pub latency_ms: Option<LatencyMs>,
    /// Oldest first, one per bucket of the window (empty buckets included).
    pub buckets: Vec<MetricsBucket>,
}

/// The health of one target, endpoint or flow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MetricsGroup {
    pub name: String,
    #[serde(flatten)]
    pub figures: AttemptFigures,
    /// Failed attempts recorded since the last success (in the order they were recorded).
    /// `null` when no attempt was recorded since the server started keeping health figures.
    pub consecutive_failures: Option<u64>,
    /// The first failure of the current run of failures; `null` when the last attempt
    /// succeeded.
    pub failing_since: Option<DateTime<Utc>>,
    pub last_success_at: Option<DateTime<Utc>>,
    pub last_failure_at: Option<DateTime<Utc>>,
    pub last_error_class: Option<ErrorClass>,
    /// The last failure's message (never a secret: what the HTTP client or the receiver's
    /// status said).
    pub last_error: Option<String>,
}

/// The tenant's current totals, independent of the window except `events_accepted`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MetricsTotals {
    /// Events accepted in the window.
    pub events_accepted: u64,
    #[serde(flatten)]
    pub figures: AttemptFigures,
    /// Deliveries waiting for an attempt now.
    pub deliveries_pending: u64,
    /// Deliveries with an attempt on the wire now.
    pub deliveries_in_flight: u64,
    /// When the oldest waiting delivery was created; `null` when none waits.
    pub oldest_pending_at: Option<DateTime<Utc>>,
    /// The DLQ's depth now.
    pub dead: u64,
    pub replays_running: u64,
}

/// `GET /v1/metrics/deliveries`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DeliveryMetrics {
    pub window: MetricsWindow,
    pub group_by: MetricsGroupBy,
    /// The start of the first bucket and the end of the report (now).
    pub since: DateTime<Utc>,
    pub until: DateTime<Utc>,
    pub bucket_seconds: u64,
    pub totals: MetricsTotals,
    /// Every group with an attempt in the window or a failure run still open, by name.
    pub groups: Vec<MetricsGroup>,
}

/// The latency histogram's upper bounds in milliseconds (the last bucket is unbounded).
pub const LATENCY_BOUNDS_MS: [u64; 12] =
    [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000];

/// Estimates the `q`-quantile (0 < q ≤ 1) of a histogram whose counts follow
/// [`LATENCY_BOUNDS_MS`] (one more count for the unbounded bucket): the bucket holding the
/// rank is exact, the position inside it linear. `None` for an empty histogram.
pub fn quantile_ms(counts: &[u64; 13], q: f64) -> Option<f64> {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return None;
    }
    let rank = (q * total as f64).ceil().max(1.0);
    let mut below = 0u64;
    for (i, &n) in counts.iter().enumerate() {
        if n > 0 && (below + n) as f64 >= rank {
            let lower = if i == 0 { 0 } else { LATENCY_BOUNDS_MS[i - 1] } as f64;
            let Some(&upper) = LATENCY_BOUNDS_MS.get(i) else {
                return Some(lower);
            };
            let inside = (rank - below as f64) / n as f64;
            return Some(lower + (upper as f64 - lower) * inside);
        }
        below += n;
    }
    Some(*LATENCY_BOUNDS_MS.last().expect("bounds") as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram(pairs: &[(usize, u64)]) -> [u64; 13] {
        let mut h = [0; 13];
        for &(i, n) in pairs {
            h[i] = n;
        }
        h
    }

    #[test]
    fn quantiles_fall_in_the_bucket_holding_the_rank() {
        // 90 attempts in 10-25 ms, 10 in 250-500 ms.
        let h = histogram(&[(2, 90), (6, 10)]);
        let p50 = quantile_ms(&h, 0.5).unwrap();
        assert!((10.0..=25.0).contains(&p50), "{p50}");
        let p95 = quantile_ms(&h, 0.95).unwrap();
        assert!((250.0..=500.0).contains(&p95), "{p95}");
        assert_eq!(quantile_ms(&h, 1.0), Some(500.0));
    }

    #[test]
    fn the_unbounded_bucket_reads_as_its_lower_bound() {
        let h = histogram(&[(12, 3)]);
        assert_eq!(quantile_ms(&h, 0.99), Some(30000.0));
    }

    #[test]
    fn an_empty_histogram_has_no_quantile() {
        assert_eq!(quantile_ms(&[0; 13], 0.5), None);
    }

    #[test]
    fn windows_and_groupings_parse_their_query_values() {
        for w in MetricsWindow::ALL {
            assert_eq!(MetricsWindow::parse(w.as_str()), Some(w));
            assert_eq!(w.minutes() % w.bucket_minutes(), 0);
        }
        assert_eq!(MetricsWindow::parse("2h"), None);
        assert_eq!(MetricsGroupBy::parse("flow"), Some(MetricsGroupBy::Flow));
        assert_eq!(MetricsGroupBy::parse("hour"), None);
    }
}
