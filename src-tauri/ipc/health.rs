//! IPC types of the delivery health dashboard (`GET /v1/metrics/deliveries`), and their
//! conversions from the wire types. Times are Unix milliseconds (UTC). A figure the control
//! plane cannot compute stays `null` here too: the UI shows it as absent, never as 0.

use serde::{Deserialize, Serialize};
use switchyard_core::protocol_events::ErrorClass;
use switchyard_core::protocol_metrics::{
    AttemptFigures, DeliveryMetrics, LatencyMs, MetricsBucket, MetricsGroup, MetricsTotals,
};
/// The health report's window and grouping cross the IPC boundary as the protocol has them.
pub use switchyard_core::protocol_metrics::{MetricsGroupBy, MetricsWindow};
use ts_rs::TS;

use super::convert::ms;

/// Attempt latency percentiles in ms, estimated from the server's histogram (a value past
/// 30 s reads as 30000: at least that).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, TS)]
pub struct LatencyView {
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
}

impl From<LatencyMs> for LatencyView {
    fn from(l: LatencyMs) -> Self {
        Self {
            p50: l.p50,
            p95: l.p95,
            p99: l.p99,
        }
    }
}

/// One chart point: the attempts that finished in `[start, start + bucket_seconds)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct HealthBucketView {
    pub start: i64,
    pub attempts: u64,
    pub failures: u64,
    /// `null` when no attempt finished in the bucket.
    pub p95_ms: Option<f64>,
}

impl From<MetricsBucket> for HealthBucketView {
    fn from(b: MetricsBucket) -> Self {
        Self {
            start: ms(&b.start),
            attempts: b.attempts,
            failures: b.failures,
            p95_ms: b.p95_ms,
        }
    }
}

/// Failures of one error class.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ClassCountView {
    pub error_class: ErrorClass,
    pub count: u64,
}

/// The attempt figures of one group (or of the whole tenant) over the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct AttemptFiguresView {
    pub attempts: u64,
    pub successes: u64,
    pub failures: u64,
    /// Most failures first; classes with none are absent.
    pub failures_by_class: Vec<ClassCountView>,
    /// `successes / attempts` (0 to 1); `null` without attempts.
    pub success_rate: Option<f64>,
    /// `null` without attempts.
    pub latency_ms: Option<LatencyView>,
    /// Oldest first, one per bucket of the window (empty buckets included).
    pub buckets: Vec<HealthBucketView>,
}

impl From<AttemptFigures> for AttemptFiguresView {
    fn from(f: AttemptFigures) -> Self {
        let mut failures_by_class: Vec<ClassCountView> = f
            .failures_by_class
            .into_iter()
            .map(|(class, count)| ClassCountView {
                error_class: class,
                count,
            })
            .collect();
        // Stable: equal counts keep the server's (class) order.
        failures_by_class.sort_by_key(|c| std::cmp::Reverse(c.count));
        Self {
            attempts: f.attempts,
            successes: f.successes,
            failures: f.failures,
            failures_by_class,
            success_rate: f.success_rate,
            latency_ms: f.latency_ms.map(Into::into),
            buckets: f.buckets.into_iter().map(Into::into).collect(),
        }
    }
}

/// The health of one target, endpoint or flow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct HealthGroupView {
    pub name: String,
    pub figures: AttemptFiguresView,
    /// Failed attempts since the last success; `null` when no attempt was recorded since the
    /// server started keeping health figures.
    pub consecutive_failures: Option<u64>,
    /// The first failure of the current run of failures; `null` when the last attempt
    /// succeeded.
    pub failing_since: Option<i64>,
    pub last_success_at: Option<i64>,
    pub last_failure_at: Option<i64>,
    pub last_error_class: Option<ErrorClass>,
    /// The last failure's message.
    pub last_error: Option<String>,
}

impl From<MetricsGroup> for HealthGroupView {
    fn from(g: MetricsGroup) -> Self {
        Self {
            name: g.name,
            figures: g.figures.into(),
            consecutive_failures: g.consecutive_failures,
            failing_since: g.failing_since.as_ref().map(ms),
            last_success_at: g.last_success_at.as_ref().map(ms),
            last_failure_at: g.last_failure_at.as_ref().map(ms),
            last_error_class: g.last_error_class,
            last_error: g.last_error,
        }
    }
}

/// The tenant's current totals; only `events_accepted` and `figures` depend on the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct HealthTotalsView {
    /// Events accepted in the window.
    pub events_accepted: u64,
    pub figures: AttemptFiguresView,
    /// Deliveries waiting for an attempt now.
    pub deliveries_pending: u64,
    /// Deliveries with an attempt on the wire now.
    pub deliveries_in_flight: u64,
    /// When the oldest waiting delivery was created; `null` when none waits.
    pub oldest_pending_at: Option<i64>,
    /// The DLQ's depth now.
    pub dead: u64,
    pub replays_running: u64,
}

impl From<MetricsTotals> for HealthTotalsView {
    fn from(t: MetricsTotals) -> Self {
        Self {
            events_accepted: t.events_accepted,
            figures: t.figures.into(),
            deliveries_pending: t.deliveries_pending,
            deliveries_in_flight: t.deliveries_in_flight,
            oldest_pending_at: t.oldest_pending_at.as_ref().map(ms),
            dead: t.dead,
            replays_running: t.replays_running,
        }
    }
}

/// A delivery health report: totals and one entry per group, over `window`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct DeliveryHealthView {
    pub window: MetricsWindow,
    pub group_by: MetricsGroupBy,
    /// The start of the first bucket, and the end of the report (the server's now).
    pub since: i64,
    pub until: i64,
    pub bucket_seconds: u64,
    pub totals: HealthTotalsView,
    /// Every group with an attempt in the window or a failure run still open, by name.
    pub groups: Vec<HealthGroupView>,
}

impl From<DeliveryMetrics> for DeliveryHealthView {
    fn from(m: DeliveryMetrics) -> Self {
        Self {
            window: m.window,
            group_by: m.group_by,
            since: ms(&m.since),
            until: ms(&m.until),
            bucket_seconds: m.bucket_seconds,
            totals: m.totals.into(),
            groups: m.groups.into_iter().map(Into::into).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use chrono::{DateTime, Utc};

    use switchyard_core::protocol_events::ErrorClass;

    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    fn figures(attempts: u64, failures: u64) -> AttemptFigures {
        AttemptFigures {
            attempts,
            successes: attempts - failures,
            failures,
            failures_by_class: BTreeMap::from([(ErrorClass::Timeout, 1), (ErrorClass::Http5xx, 3)]),
            success_rate: (attempts > 0).then(|| (attempts - failures) as f64 / attempts as f64),
            latency_ms: None,
            buckets: vec![MetricsBucket {
                start: at("2026-12-01T10:00:00Z"),
                attempts,
                failures,
                p95_ms: None,
            }],
        }
    }

    #[test]
    fn the_wire_report_reads_as_the_ipc_view_with_nulls_kept() {
        let wire = DeliveryMetrics {
            window: MetricsWindow::OneHour,
            group_by: MetricsGroupBy::Target,
            since: at("2026-12-01T10:00:00Z"),
            until: at("2026-12-01T11:00:00Z"),
            bucket_seconds: 120,
            totals: MetricsTotals {
                events_accepted: 7,
                figures: figures(10, 4),
                deliveries_pending: 2,
                deliveries_in_flight: 1,
                oldest_pending_at: None,
                dead: 5,
                replays_running: 0,
            },
            groups: vec![MetricsGroup {
                name: "crm".into(),
                figures: figures(0, 0),
                consecutive_failures: None,
                failing_since: Some(at("2026-12-01T10:30:00Z")),
                last_success_at: None,
                last_failure_at: None,
                last_error_class: Some(ErrorClass::Connect),
                last_error: Some("connection refused".into()),
            }],
        };
        let view = DeliveryHealthView::from(wire);
        assert_eq!(view.window, MetricsWindow::OneHour);
        assert_eq!(view.since, 1_796_119_200_000);
        assert_eq!(view.totals.oldest_pending_at, None);
        assert_eq!(view.totals.figures.success_rate, Some(0.6));
        // Most failures first.
        assert_eq!(
            view.totals.figures.failures_by_class[0].error_class,
            ErrorClass::Http5xx
        );
        let group = &view.groups[0];
        assert_eq!(group.figures.success_rate, None);
        assert_eq!(group.consecutive_failures, None);
        assert_eq!(group.failing_since, Some(1_796_121_000_000));
        assert_eq!(group.last_error_class, Some(ErrorClass::Connect));
        let json = serde_json::to_value(&view).unwrap();
        assert_eq!(json["window"], "1h");
        assert_eq!(
            json["groups"][0]["consecutive_failures"],
            serde_json::Value::Null
        );
    }

    /// The UI sends the window and grouping as the protocol serializes them; the core sends
    /// them as query values: the two spellings must agree.
    #[test]
    fn every_window_and_grouping_crosses_ipc_as_its_query_value() {
        for w in MetricsWindow::ALL {
            assert_eq!(serde_json::to_value(w).unwrap(), w.as_str());
        }
        for g in MetricsGroupBy::ALL {
            assert_eq!(serde_json::to_value(g).unwrap(), g.as_str());
        }
    }
}
