//! The delivery pipeline: retry schedule, signing, the HTTP attempt, the decisions after an
//! attempt, and the worker that claims due attempts under a lease.
//!
//! Every path (sync, async inline, async relay via an edge plane) goes through the same
//! three steps: the store claims the attempt (in flight under a lease, committed: the
//! recovery point before the external call), the request is sent, and the store records
//! the outcome and the transition [`decide`] chose, only if the lease token still matches.

pub mod addresses;
pub mod http;
pub mod reaper;
pub mod recorder;
pub mod schedule;
pub mod signing;
pub mod worker;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::clock::{Clock, to_datetime};
use crate::store::{Claimed, Store, Transition};
use http::AttemptResult;
pub use schedule::{DELIVERY_JITTER, RandomSource, RetryPolicy, ThreadRandom};

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
    /// Whether targets may point at loopback, private, link-local and the other addresses
    /// [`addresses::forbidden`] names. `false` by default; the embedders whose receivers
    /// are on this machine (the sandbox, tests, benchmarks) set it through
    /// `ServerConfig::local_only`, and `serve` with `--allow-private-targets` (or `--demo`).
    pub allow_private_targets: bool,
    /// Address ranges refused whatever `allow_private_targets` says (`serve --forbid-cidr`).
    pub forbid_cidrs: Vec<addresses::Cidr>,
    /// The name lookup under the address check (`None`: the system resolver). Tests map a
    /// name to loopback to show the check judges the address a name resolves to.
    pub resolver: Option<http::Lookup>,
    /// CA certificates (PEM) trusted for receivers' server certificates besides the web PKI's
    /// roots: a private CA of HTTPS receivers (`serve --target-ca-file`; tests).
    pub target_roots_pem: Vec<String>,
    /// Negative control for tests only: decide what to claim from a read outside the write
    /// transaction and claim it unconditionally (the race the real claim prevents).
    #[cfg(feature = "fault-injection")]
    pub unsafe_stale_claim: bool,
    /// Negative control for tests only: dedup event keys by a read, then claim the key
    /// unconditionally (check-then-insert).
    #[cfg(feature = "fault-injection")]
    pub unguarded_event_dedup: bool,
    /// Negative control for tests only: the reaper records expired attempts without the
    /// fence, from a read that may be stale.
    #[cfg(feature = "fault-injection")]
    pub unfenced_reap: bool,
    /// Negative control for tests only: a replay session id is written over instead of
    /// claimed (`ON CONFLICT DO UPDATE`).
    #[cfg(feature = "fault-injection")]
    pub unguarded_replay: bool,
    /// Negative control for tests only: `POST /v1/deliveries/{id}/requeue` moves an
    /// in-flight delivery back to pending whether or not its lease expired.
    #[cfg(feature = "fault-injection")]
    pub unguarded_requeue: bool,
    /// How often the worker's loop advances the open retirements (`crate::retirement`).
    pub retirement_every: Duration,
    /// Crash point for tests only: abort the process just before or just after the commit
    /// of a retirement's transition into a state (`SWITCHYARD_TEST_CRASH_AT`).
    #[cfg(feature = "fault-injection")]
    pub retirement_crash: Option<crate::retirement::CrashPoint>,
    /// Negative control for tests only: a retirement's transition drops its `state = from`
    /// guard (and waits between its read and its write).
    #[cfg(feature = "fault-injection")]
    pub unguarded_retirement: bool,
}

impl DeliveryConfig {
    /// Where this server's webhooks may go.
    pub fn address_policy(&self) -> addresses::AddressPolicy {
        addresses::AddressPolicy {
            allow_private: self.allow_private_targets,
            forbid: self.forbid_cidrs.clone(),
        }
    }
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
            // Fail-closed: an embedder that delivers to this machine's own receivers says so
            // (`ServerConfig::local_only`, `serve --allow-private-targets`).
            allow_private_targets: false,
            forbid_cidrs: Vec::new(),
            resolver: None,
            target_roots_pem: Vec::new(),
            #[cfg(feature = "fault-injection")]
            unsafe_stale_claim: false,
            #[cfg(feature = "fault-injection")]
            unguarded_event_dedup: false,
            #[cfg(feature = "fault-injection")]
            unfenced_reap: false,
            #[cfg(feature = "fault-injection")]
            unguarded_replay: false,
            #[cfg(feature = "fault-injection")]
            unguarded_requeue: false,
            retirement_every: Duration::from_secs(1),
            #[cfg(feature = "fault-injection")]
            retirement_crash: None,
            #[cfg(feature = "fault-injection")]
            unguarded_retirement: false,
        }
    }
}

/// What the handlers and the worker share.
pub struct DeliveryContext {
    pub config: DeliveryConfig,
    pub policy: RetryPolicy,
    pub store: Arc<dyn Store>,
    pub http: http::WebhookClient,
    pub clock: Arc<dyn Clock>,
    /// Wakes the worker when new work is committed (here, or on another replica when the
    /// store can tell).
    pub wake: Arc<tokio::sync::Notify>,
    /// Set when the server drains: the worker claims nothing more and ends once the
    /// attempts it holds are recorded.
    pub draining: std::sync::atomic::AtomicBool,
    /// Notified when a drain runs out of time: the worker stops waiting for the attempts it
    /// holds and returns between two store calls, never inside one (a task aborted inside a
    /// transaction could leave the single SQLite writer unusable for the release that follows).
    pub drain_cut: tokio::sync::Notify,
    /// The attempts this process's worker holds (sent or about to be, not yet recorded), by
    /// attempt id: what a drain that runs out of time releases.
    pub in_flight: std::sync::Mutex<std::collections::HashMap<String, Claimed>>,
    /// Where recorded attempts and final states are counted (`GET /metrics`). A context of
    /// its own has a registry of its own; `crate::Server` puts the server's here.
    pub telemetry: Arc<crate::telemetry::Telemetry>,
}

impl DeliveryContext {
    pub fn new(config: DeliveryConfig, store: Arc<dyn Store>, clock: Arc<dyn Clock>) -> Self {
        let policy = RetryPolicy::with_jitter(
            config.schedule.clone(),
            config.random.clone(),
            DELIVERY_JITTER,
        );
        let http = http::WebhookClient::with_roots(
            config.address_policy(),
            config.resolver.clone(),
            &config.target_roots_pem,
        );
        Self {
            config,
            policy,
            store,
            http,
            clock,
            wake: Arc::new(tokio::sync::Notify::new()),
            draining: std::sync::atomic::AtomicBool::new(false),
            drain_cut: tokio::sync::Notify::new(),
            in_flight: std::sync::Mutex::default(),
            telemetry: Arc::default(),
        }
    }

    /// Whether the server is draining (readiness turns false; the worker claims nothing).
    pub fn is_draining(&self) -> bool {
        self.draining.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// How many attempts the worker holds right now.
    pub fn in_flight_count(&self) -> usize {
        self.in_flight.lock().expect("in-flight lock").len()
    }

    pub fn lease_margin_ms(&self) -> i64 {
        millis(self.config.lease_margin)
    }

    pub fn pickup_ms(&self) -> i64 {
        millis(self.config.edge_pickup_timeout)
    }
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX / 4)
}

/// What follows attempt `hop_number` of its hop's `max_attempts` that ended with `result`:
/// success ends the delivery; a failure is retried after the schedule's delay for the hop's
/// next attempt, or, when it was the hop's last, moves the delivery to the DLQ. Each hop
/// counts on its own: the edge plane's attempts at the webhook never spend the budget of
/// the control plane's hand-offs to it, nor the other way round. A failure no retry can
/// cure (`forbidden_address`: the target points where deliveries may not go) is dead at
/// once.
pub fn decide(
    result: &AttemptResult,
    hop_number: u32,
    max_attempts: u32,
    policy: &RetryPolicy,
    now: i64,
) -> Transition {
    if result.succeeded() {
        Transition::Succeeded
    } else if hop_number >= max_attempts || result.error_class.is_some_and(|c| !c.is_retried()) {
        Transition::Dead
    } else {
        Transition::RetryAt(now + policy.delay_before_ms(hop_number.saturating_add(1)))
    }
}

/// The webhook body: the same bytes on every attempt and replay of an event.
pub fn webhook_body(
    event_id: &str,
    event_type: &str,
    endpoint: &str,
    created_at: i64,
    payload: &str,
) -> String {
    let data: Value = serde_json::from_str(payload).unwrap_or(Value::Null);
    json!({
        "id": event_id,
        "type": event_type,
        "endpoint": endpoint,
        "timestamp": to_datetime(created_at).to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        "data": data,
    })
    .to_string()
}

impl Claimed {
    /// The full header list of the webhook request, signed at `now_ms` with every secret
    /// still valid then (one that expired between the claim and the send does not sign).
    pub fn signed_headers(&self, now_ms: i64) -> Vec<(String, String)> {
        let secrets: Vec<&str> = self
            .secrets
            .iter()
            .filter(|k| k.valid_at(now_ms))
            .map(|k| k.value.as_str())
            .collect();
        let mut headers = signing::webhook_headers(
            self.target.as_ref().map(|t| &t.headers),
            &self.event_id,
            now_ms,
            &secrets,
            self.body.as_bytes(),
        );
        headers.push(("switchyard-attempt-id".into(), self.attempt_id.clone()));
        headers.push(("switchyard-attempt".into(), self.hop_number.to_string()));
        headers.push(("switchyard-delivery-id".into(), self.delivery_id.clone()));
        headers
    }
}

/// The live part of a resource's status: an endpoint's `pending_deliveries`; a target's
/// signing secrets and open rotation (`crate::resources::secrets::live_status`).
pub async fn live_status(
    state: &crate::AppState,
    tenant: &str,
    kind: switchyard_protocol::ResourceKind,
    name: &str,
) -> Result<Option<serde_json::Value>, crate::store::StoreError> {
    match kind {
        switchyard_protocol::ResourceKind::Endpoint => {
            let pending = state.store.pending_count(tenant, name).await?;
            Ok(Some(serde_json::json!({ "pending_deliveries": pending })))
        }
        switchyard_protocol::ResourceKind::Target => Ok(Some(
            crate::resources::secrets::live_status(state, tenant, name).await?,
        )),
        switchyard_protocol::ResourceKind::Flow => Ok(None),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delivery::schedule::Fixed;
    use switchyard_protocol::ErrorClass;

    fn policy() -> RetryPolicy {
        RetryPolicy::new(
            [0, 10, 60].map(Duration::from_secs).to_vec(),
            Arc::new(Fixed(1.0)),
        )
    }

    #[test]
    fn success_ends_a_failure_retries_on_schedule_the_last_failure_is_dead() {
        let ok = AttemptResult {
            duration_ms: 3,
            status_code: Some(204),
            error_class: None,
            error: None,
        };
        let failed = AttemptResult::failed(ErrorClass::Connect, "refused");
        assert_eq!(decide(&ok, 3, 3, &policy(), 1_000), Transition::Succeeded);
        assert_eq!(
            decide(&failed, 1, 3, &policy(), 1_000),
            Transition::RetryAt(11_000)
        );
        assert_eq!(
            decide(&failed, 2, 3, &policy(), 1_000),
            Transition::RetryAt(61_000)
        );
        assert_eq!(decide(&failed, 3, 3, &policy(), 1_000), Transition::Dead);
    }

    #[test]
    fn a_forbidden_address_is_dead_at_the_first_attempt() {
        let refused = AttemptResult::failed(ErrorClass::ForbiddenAddress, "loopback");
        assert_eq!(decide(&refused, 1, 5, &policy(), 1_000), Transition::Dead);
    }
}
