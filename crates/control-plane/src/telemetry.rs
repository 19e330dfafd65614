//! Prometheus metrics of one server (`GET /metrics`; every metric is described in
//! docs/prometheus.md): the registry and the metrics' definitions, and what the HTTP layer,
//! the idempotency pipeline and the delivery paths call to count.
//!
//! The registry belongs to the server, never the process-wide default, so several servers
//! in one process (tests, the desktop sandbox) keep counts of their own. Label values are
//! bounded: routes are axum's route templates (`MatchedPath`), methods a fixed list, tenant
//! names only with [`MetricsConfig::tenant_labels`] (which needs a token: no tenant data
//! without auth).

mod endpoint;
mod http;
mod process;
mod token;

use prometheus::{
    HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGaugeVec, Opts, Registry,
};
use switchyard_protocol::Hop;

use crate::delivery::http::AttemptResult;
use crate::store::{Gauges, Store, Transition};

pub use endpoint::{metrics_router, routes};
pub use http::track;
pub use token::{MetricsToken, MetricsTokenError};

/// How `GET /metrics` is served.
#[derive(Debug, Clone, Default)]
pub struct MetricsConfig {
    /// Label the gauges and the events and deliveries counters with the tenant's name
    /// (`serve --metrics-tenant-labels`). Requires `token`.
    pub tenant_labels: bool,
    /// When set, `/metrics` answers only `Authorization: Bearer <token>`.
    pub token: Option<MetricsToken>,
    /// Serve `/metrics` on its own listener (and not on the API's); `None`: on the API's.
    pub listen: Option<std::net::SocketAddr>,
}

/// A keyed request's outcome in the idempotency pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdempotencyOutcome {
    /// Ran under the key; its answer is stored.
    Executed,
    /// Answered with the stored response of an earlier request.
    Replayed,
    /// 409 `idempotency_key_in_progress`.
    InProgress,
    /// 422 `idempotency_key_reused`.
    Reused,
}

impl IdempotencyOutcome {
    pub const ALL: [Self; 4] = [
        Self::Executed,
        Self::Replayed,
        Self::InProgress,
        Self::Reused,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Executed => "executed",
            Self::Replayed => "replayed",
            Self::InProgress => "in_progress",
            Self::Reused => "reused",
        }
    }
}

const FINAL_OUTCOMES: [&str; 3] = ["succeeded", "dead", "cancelled"];
const ATTEMPT_OUTCOMES: [&str; 2] = ["succeeded", "failed"];

/// Seconds: a webhook call is bounded by its target's timeout (30 s at most by default);
/// an API request mostly takes milliseconds.
const ATTEMPT_BUCKETS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];
const REQUEST_BUCKETS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];
/// Store calls: from a tenth of a millisecond (an indexed read) to seconds (a writer queue).
const STORE_BUCKETS: &[f64] = &[
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

/// The scrape-time gauges, one labelled family each.
struct GaugeFamilies {
    dlq_depth: IntGaugeVec,
    pending: IntGaugeVec,
    in_flight: IntGaugeVec,
    replays_running: IntGaugeVec,
}

/// One server's registry and metrics.
pub struct Telemetry {
    registry: Registry,
    tenant_labels: bool,
    token: Option<MetricsToken>,
    /// `/metrics` is on the API's listener (no `MetricsConfig::listen`).
    on_api: bool,
    /// The tenants this server serves: their gauges read 0 rather than vanish when they
    /// have nothing open (with tenant labels).
    tenants: Vec<String>,
    http_requests: IntCounterVec,
    http_duration: HistogramVec,
    idempotency: IntCounterVec,
    events_accepted: IntCounterVec,
    deliveries_finished: IntCounterVec,
    attempts: IntCounterVec,
    attempt_duration: HistogramVec,
    lease_takeovers: IntCounter,
    store_duration: HistogramVec,
    gauges: GaugeFamilies,
    store_read_failures: IntCounter,
    /// One scrape at a time: the gauges are reset and refilled by each.
    scrape: tokio::sync::Mutex<()>,
}

impl Default for Telemetry {
    fn default() -> Self {
        Self::new(&MetricsConfig::default(), Vec::new())
    }
}

fn counter_vec(registry: &Registry, name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
    let metric = IntCounterVec::new(Opts::new(name, help), labels).expect("a valid metric");
    registry
        .register(Box::new(metric.clone()))
        .expect("each metric is registered once");
    metric
}

fn histogram_vec(
    registry: &Registry,
    name: &str,
    help: &str,
    labels: &[&str],
    buckets: &[f64],
) -> HistogramVec {
    let metric = HistogramVec::new(
        HistogramOpts::new(name, help).buckets(buckets.to_vec()),
        labels,
    )
    .expect("a valid metric");
    registry
        .register(Box::new(metric.clone()))
        .expect("each metric is registered once");
    metric
}

fn gauge_vec(registry: &Registry, name: &str, help: &str, labels: &[&str]) -> IntGaugeVec {
    let metric = IntGaugeVec::new(Opts::new(name, help), labels).expect("a valid metric");
    registry
        .register(Box::new(metric.clone()))
        .expect("each metric is registered once");
    metric
}

fn counter(registry: &Registry, name: &str, help: &str) -> IntCounter {
    let metric = IntCounter::new(name, help).expect("a valid metric");
    registry
        .register(Box::new(metric.clone()))
        .expect("each metric is registered once");
    metric
}

/// `first`, and `tenant` when metrics carry tenant labels.
fn with_tenant(first: &'static str, tenant_labels: bool) -> Vec<&'static str> {
    let mut labels = vec![first];
    if tenant_labels {
        labels.push("tenant");
    }
    labels
}

impl GaugeFamilies {
    /// The gauges read from the store at scrape time.
    fn new(r: &Registry, by_tenant: &[&str]) -> Self {
        Self {
            dlq_depth: gauge_vec(
                r,
                "switchyard_dlq_depth",
                "Dead deliveries in the DLQ (read from the store at scrape time).",
                by_tenant,
            ),
            pending: gauge_vec(
                r,
                "switchyard_deliveries_pending",
                "Deliveries waiting for their next attempt (read from the store at scrape time).",
                by_tenant,
            ),
            in_flight: gauge_vec(
                r,
                "switchyard_deliveries_in_flight",
                "Deliveries with an attempt under a lease (read from the store at scrape time).",
                by_tenant,
            ),
            replays_running: gauge_vec(
                r,
                "switchyard_replays_running",
                "Replay sessions not cancelled with re-deliveries still open (read from the store at scrape time).",
                by_tenant,
            ),
        }
    }
}

impl Telemetry {
    /// A fresh registry with every metric at zero; `tenants` are the names the server
    /// serves (used only with tenant labels).
    pub fn new(config: &MetricsConfig, tenants: Vec<String>) -> Self {
        let registry = Registry::new();
        let tenant_labels = config.tenant_labels;
        let by_tenant: &[&str] = if tenant_labels { &["tenant"] } else { &[] };
        let r = &registry;
        process::register(r);
        let telemetry = Self {
            http_requests: counter_vec(
                r,
                "switchyard_http_requests_total",
                "HTTP requests answered, by route template, method and status code.",
                &["route", "method", "status"],
            ),
            http_duration: histogram_vec(
                r,
                "switchyard_http_request_duration_seconds",
                "Time from a request's arrival to its response's head, by route template and method.",
                &["route", "method"],
                REQUEST_BUCKETS,
            ),
            idempotency: counter_vec(
                r,
                "switchyard_idempotency_requests_total",
                "Keyed requests by outcome: executed, replayed, in_progress (409), reused (422).",
                &["outcome"],
            ),
            events_accepted: counter_vec(
                r,
                "switchyard_events_accepted_total",
                "Events accepted (new events; a duplicate of an event key is not counted).",
                by_tenant,
            ),
            deliveries_finished: counter_vec(
                r,
                "switchyard_deliveries_finished_total",
                "Deliveries that reached a final state: succeeded, dead (into the DLQ) or cancelled (a replay session's re-delivery withdrawn).",
                &with_tenant("outcome", tenant_labels),
            ),
            attempts: counter_vec(
                r,
                "switchyard_delivery_attempts_total",
                "Delivery attempts whose outcome was recorded, by outcome and hop.",
                &["outcome", "hop"],
            ),
            attempt_duration: histogram_vec(
                r,
                "switchyard_delivery_attempt_duration_seconds",
                "Duration of delivery attempts that were sent (request to answer or failure), by hop.",
                &["hop"],
                ATTEMPT_BUCKETS,
            ),
            lease_takeovers: counter(
                r,
                "switchyard_worker_lease_takeovers_total",
                "Attempts whose lease expired unrecorded and that the reaper recorded as failed (timeout).",
            ),
            store_duration: histogram_vec(
                r,
                "switchyard_store_operation_duration_seconds",
                "Time of the store calls on the hot paths, by operation: begin (waiting for a write transaction: \
                 on SQLite, for the single writer), claim_due, finish_attempt, accept_event, dlq_page, delivery_report.",
                &["operation"],
                STORE_BUCKETS,
            ),
            gauges: GaugeFamilies::new(r, by_tenant),
            store_read_failures: counter(
                r,
                "switchyard_metrics_store_read_failures_total",
                "Scrapes whose store gauges could not be read (the gauges are absent from that scrape).",
            ),
            registry,
            tenant_labels,
            token: config.token.clone(),
            on_api: config.listen.is_none(),
            tenants,
            scrape: tokio::sync::Mutex::new(()),
        };
        telemetry.zero();
        telemetry
    }

    /// Creates every bounded series at 0, so a rate over the first increase is right and a
    /// dashboard shows 0, not "no data".
    fn zero(&self) {
        for outcome in IdempotencyOutcome::ALL {
            self.idempotency.with_label_values(&[outcome.as_str()]);
        }
        for outcome in ATTEMPT_OUTCOMES {
            for hop in Hop::ALL {
                self.attempts.with_label_values(&[outcome, hop.as_str()]);
            }
        }
        if self.tenant_labels {
            for tenant in &self.tenants {
                self.events_accepted.with_label_values(&[tenant.as_str()]);
                for outcome in FINAL_OUTCOMES {
                    self.deliveries_finished
                        .with_label_values(&[outcome, tenant.as_str()]);
                }
            }
        } else {
            self.events_accepted.with_label_values::<&str>(&[]);
            for outcome in FINAL_OUTCOMES {
                self.deliveries_finished.with_label_values(&[outcome]);
            }
        }
    }

    pub fn tenant_labels(&self) -> bool {
        self.tenant_labels
    }

    /// Whether the API's router serves `/metrics` (no listener of its own).
    pub fn serves_on_api(&self) -> bool {
        self.on_api
    }

    pub(crate) fn token(&self) -> Option<&MetricsToken> {
        self.token.as_ref()
    }

    /// One answered HTTP request.
    pub fn http_request(&self, route: &str, method: &str, status: u16, seconds: f64) {
        self.http_requests
            .with_label_values(&[route, method, &status.to_string()])
            .inc();
        self.http_duration
            .with_label_values(&[route, method])
            .observe(seconds);
    }

    pub fn idempotency(&self, outcome: IdempotencyOutcome) {
        self.idempotency
            .with_label_values(&[outcome.as_str()])
            .inc();
    }

    pub fn event_accepted(&self, tenant: &str) {
        if self.tenant_labels {
            self.events_accepted.with_label_values(&[tenant]).inc();
        } else {
            self.events_accepted.with_label_values::<&str>(&[]).inc();
        }
    }

    /// Whether [`Telemetry::attempt_recorded`] needs the delivery's tenant for `next`: only
    /// a final state is labelled, and only with tenant labels.
    pub fn wants_tenant(&self, next: Transition) -> bool {
        self.tenant_labels && !matches!(next, Transition::RetryAt(_))
    }

    /// An attempt whose outcome the store recorded (its fenced `finish_attempt` returned
    /// true, so a lost lease is never counted twice), and the delivery's final state when
    /// `next` is one. `sent`: the attempt really went out (its duration is observed);
    /// false for outcomes the control plane decided without a call (an expired lease, an
    /// unpicked relay, a deleted target, a release on drain). `tenant` may be `None` when
    /// [`Telemetry::wants_tenant`] is false.
    pub fn attempt_recorded(
        &self,
        hop: Hop,
        result: &AttemptResult,
        next: Transition,
        tenant: Option<&str>,
        sent: bool,
    ) {
        match next {
            Transition::Succeeded => self.delivery_finished("succeeded", tenant, 1),
            Transition::Dead => self.delivery_finished("dead", tenant, 1),
            // Pending again; a replay re-delivery whose session was cancelled meanwhile is
            // withdrawn by the store instead, which the caller cannot see (docs/prometheus.md).
            Transition::RetryAt(_) => {}
        }
        if sent {
            self.attempt_duration
                .with_label_values(&[hop.as_str()])
                .observe(result.duration_ms as f64 / 1000.0);
        }
        // Last: a scrape that sees the attempt counted sees its final state and duration too.
        let outcome = if result.succeeded() {
            "succeeded"
        } else {
            "failed"
        };
        self.attempts
            .with_label_values(&[outcome, hop.as_str()])
            .inc();
    }

    /// Re-deliveries a replay cancel withdrew.
    pub fn deliveries_cancelled(&self, tenant: &str, n: u64) {
        if n > 0 {
            self.delivery_finished("cancelled", Some(tenant), n);
        }
    }

    fn delivery_finished(&self, outcome: &str, tenant: Option<&str>, n: u64) {
        if self.tenant_labels {
            self.deliveries_finished
                .with_label_values(&[outcome, tenant.unwrap_or("")])
                .inc_by(n);
        } else {
            self.deliveries_finished
                .with_label_values(&[outcome])
                .inc_by(n);
        }
    }

    /// The reaper recorded an expired lease.
    /// Runs one store call and records how long it took under `operation`.
    pub async fn store<T>(&self, operation: &'static str, call: impl Future<Output = T>) -> T {
        let started = std::time::Instant::now();
        let out = call.await;
        self.store_duration
            .with_label_values(&[operation])
            .observe(started.elapsed().as_secs_f64());
        out
    }

    pub fn lease_taken_over(&self) {
        self.lease_takeovers.inc();
    }

    /// Reads the gauges from the store and renders everything in the text exposition
    /// format. A store that does not answer leaves the gauges out of this scrape (and counts
    /// the failure): a stale figure would look current.
    pub async fn render(&self, store: &dyn Store) -> String {
        let _one_at_a_time = self.scrape.lock().await;
        let families = [
            &self.gauges.dlq_depth,
            &self.gauges.pending,
            &self.gauges.in_flight,
            &self.gauges.replays_running,
        ];
        for family in families {
            family.reset();
        }
        let read = if self.tenant_labels {
            store.gauges_by_tenant().await.map(|by_tenant| {
                for tenant in &self.tenants {
                    self.set_gauges(&[tenant.as_str()], Gauges::default());
                }
                for (tenant, gauges) in &by_tenant {
                    self.set_gauges(&[tenant.as_str()], *gauges);
                }
            })
        } else {
            store
                .gauges()
                .await
                .map(|gauges| self.set_gauges(&[], gauges))
        };
        if let Err(e) = read {
            tracing::warn!(error = %e, "reading the metrics gauges from the store failed");
            self.store_read_failures.inc();
            for family in families {
                family.reset();
            }
        }
        prometheus::TextEncoder::new()
            .encode_to_string(&self.registry.gather())
            .unwrap_or_else(|e| {
                tracing::error!(error = %e, "encoding the metrics failed");
                String::new()
            })
    }

    fn set_gauges(&self, labels: &[&str], gauges: Gauges) {
        let as_i64 = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        let g = &self.gauges;
        g.dlq_depth
            .with_label_values(labels)
            .set(as_i64(gauges.dlq_depth));
        g.pending
            .with_label_values(labels)
            .set(as_i64(gauges.pending));
        g.in_flight
            .with_label_values(labels)
            .set(as_i64(gauges.in_flight));
        g.replays_running
            .with_label_values(labels)
            .set(as_i64(gauges.replays_running));
    }
}
