//! The delivery pipeline: retry schedule, signing, the HTTP attempt, the SQL of deliveries
//! and attempts, and the worker that claims due attempts under a lease.
//!
//! Every path (sync, async inline, async relay via an edge plane) goes through the same
//! three steps: `store::begin_attempt` commits the attempt as in flight under a lease (the
//! recovery point before the external call), the request is sent, and
//! `store::finish_attempt` records the outcome only if the lease token still matches.

pub mod http;
pub mod schedule;
pub mod signing;
pub mod store;
pub mod worker;

use std::sync::Arc;
use std::time::Duration;

use crate::clock::Clock;
pub use schedule::{RandomSource, RetryPolicy, ThreadRandom};
pub use store::DeliveryStore;

/// Settings of the delivery pipeline.
#[derive(Clone)]
pub struct DeliveryConfig {
    /// Base delay before each attempt; its length is the attempt budget.
    pub schedule: Vec<Duration>,
    pub random: Arc<dyn RandomSource>,
    /// Added to the target's timeout to form an attempt's lease.
    pub lease_margin: Duration,
    /// A due relay attempt that no edge plane leases within this time counts as a failed
    /// control plane → edge hop.
    pub edge_pickup_timeout: Duration,
    /// Whether this server runs the background worker (tests may run their own).
    pub run_worker: bool,
    /// Name recorded as the lease owner of this server's worker.
    pub worker_id: String,
    /// Attempts one worker runs at once.
    pub concurrency: usize,
    /// Longest sleep between looks at the queue.
    pub poll_max: Duration,
    /// How long an `event_key` dedups; the server sets it to the idempotency retention.
    pub dedup_retention: Duration,
    /// Negative control for tests only: decide what to claim from a read outside the write
    /// transaction and claim it unconditionally (the race the real claim prevents).
    #[doc(hidden)]
    pub unsafe_stale_claim: bool,
}

impl Default for DeliveryConfig {
    fn default() -> Self {
        Self {
            schedule: [0, 10, 60, 600, 3600].map(Duration::from_secs).to_vec(),
            random: Arc::new(ThreadRandom),
            lease_margin: Duration::from_secs(5),
            edge_pickup_timeout: Duration::from_secs(30),
            run_worker: true,
            worker_id: format!("worker-{}", uuid::Uuid::new_v4().simple()),
            concurrency: 64,
            poll_max: Duration::from_secs(1),
            dedup_retention: Duration::from_secs(86_400),
            unsafe_stale_claim: false,
        }
    }
}

/// What the handlers and the worker share.
pub struct DeliveryContext {
    pub config: DeliveryConfig,
    pub policy: RetryPolicy,
    pub store: DeliveryStore,
    pub http: reqwest::Client,
    pub clock: Arc<dyn Clock>,
    /// Wakes the worker when new work is committed.
    pub wake: tokio::sync::Notify,
}

impl DeliveryContext {
    pub fn new(config: DeliveryConfig, store: DeliveryStore, clock: Arc<dyn Clock>) -> Self {
        let policy = RetryPolicy::new(config.schedule.clone(), config.random.clone());
        Self {
            config,
            policy,
            store,
            http: http::client(),
            clock,
            wake: tokio::sync::Notify::new(),
        }
    }

    pub fn lease_margin_ms(&self) -> i64 {
        i64::try_from(self.config.lease_margin.as_millis()).unwrap_or(i64::MAX / 4)
    }
}

/// The live part of a resource's status: an endpoint's `pending_deliveries`.
pub async fn live_status(
    state: &crate::AppState,
    tenant: &str,
    kind: switchyard_protocol::ResourceKind,
    name: &str,
) -> Result<Option<serde_json::Value>, crate::store::StoreError> {
    if kind != switchyard_protocol::ResourceKind::Endpoint {
        return Ok(None);
    }
    let pending = state.delivery.store.pending_count(tenant, name).await?;
    Ok(Some(serde_json::json!({ "pending_deliveries": pending })))
}

/// Fills the live status into listed resources.
pub async fn with_live_status(
    state: &crate::AppState,
    tenant: &str,
    mut items: Vec<switchyard_protocol::Resource>,
) -> Result<Vec<switchyard_protocol::Resource>, crate::store::StoreError> {
    for item in &mut items {
        if let (Some(serde_json::Value::Object(live)), serde_json::Value::Object(status)) = (
            live_status(state, tenant, item.kind, &item.name).await?,
            &mut item.status,
        ) {
            status.extend(live);
        }
    }
    Ok(items)
}
