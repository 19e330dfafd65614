//! The edge plane process: leases relayed attempts from its control plane, sends them to
//! the webhooks, reports the outcomes (retried on the delivery schedule; idempotent).

use std::sync::Arc;
use std::time::Duration;

use switchyard_protocol::{
    EdgeAttemptAck, EdgeAttemptReport, EdgeLease, EdgeLeaseRequest, RelayedAttempt,
};
use tokio::sync::Semaphore;

use crate::delivery::http;
use crate::delivery::schedule::{RetryPolicy, ThreadRandom};

/// How an edge plane runs.
#[derive(Clone)]
pub struct EdgeConfig {
    /// Base URL of the control plane, e.g. `http://127.0.0.1:8080`.
    pub control_plane: String,
    /// The tenant's bearer token.
    pub token: String,
    /// This edge's name, as flows name it in `spec.edge`.
    pub name: String,
    /// Attempts sent at once.
    pub concurrency: usize,
    /// Sleep between leases when there was nothing to do.
    pub idle_poll: Duration,
    /// Delays before each try of a report (5 by default, like every hop).
    pub report_schedule: Vec<Duration>,
    /// Whether webhooks may go to loopback, private, link-local and the other addresses
    /// `crate::delivery::addresses` forbids (`edge --allow-private-targets`).
    pub allow_private_targets: bool,
    /// Address ranges refused whatever `allow_private_targets` says (`edge --forbid-cidr`).
    pub forbid_cidrs: Vec<crate::delivery::addresses::Cidr>,
}

/// What an edge's drain did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EdgeDrain {
    /// Attempts held when the stop came.
    pub in_flight: usize,
    /// Of those, how many were still unreported when time ran out and were released.
    pub released: usize,
}

/// The attempts this edge holds (leased, not yet reported), by attempt id.
type Held = Arc<std::sync::Mutex<std::collections::HashMap<String, i64>>>;

/// Runs the edge until `stop` resolves, then drains: leases nothing more, lets the attempts
/// in flight finish and report their outcomes for at most `drain_within`, and releases what
/// is left (reported as interrupted, so the control plane retries it at once instead of
/// after the lease expires).
pub async fn run_until(
    config: EdgeConfig,
    stop: impl std::future::Future<Output = ()>,
    drain_within: Duration,
) -> anyhow::Result<EdgeDrain> {
    let config = Arc::new(config);
    let control = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(10))
        .build()?;
    let concurrency = config.concurrency.max(1);
    let permits = Arc::new(Semaphore::new(concurrency));
    let held: Held = Arc::default();
    tracing::info!(edge = %config.name, control_plane = %config.control_plane, "edge plane started");
    tokio::select! {
        result = lease_loop(&config, &control, &permits, &held) => result?,
        () = stop => {}
    }
    let mut drain = EdgeDrain {
        in_flight: held.lock().expect("held lock").len(),
        released: 0,
    };
    tracing::info!(
        in_flight = drain.in_flight,
        "edge draining: leasing nothing more"
    );
    let everything = u32::try_from(concurrency).unwrap_or(u32::MAX);
    if tokio::time::timeout(drain_within, permits.acquire_many(everything))
        .await
        .is_err()
    {
        let left: Vec<(String, i64)> = held.lock().expect("held lock").drain().collect();
        for (attempt_id, lease_token) in left {
            let report = EdgeAttemptReport {
                lease_token,
                duration_ms: 0,
                status_code: None,
                error_class: Some(switchyard_protocol::ErrorClass::Timeout),
                error: Some("interrupted: the edge stopped before the receiver answered".into()),
            };
            if send_report(&config, &control, &attempt_id, &report).await == Reported::Recorded {
                drain.released += 1;
            }
        }
        tracing::warn!(
            released = drain.released,
            "edge drain timed out: released the rest"
        );
    }
    tracing::info!(
        reported = drain.in_flight.saturating_sub(drain.released),
        released = drain.released,
        "edge drained"
    );
    Ok(drain)
}

/// Asks the control plane for up to `max` due attempts.
async fn request_lease(
    config: &EdgeConfig,
    control: &reqwest::Client,
    max: u32,
) -> anyhow::Result<EdgeLease> {
    let r = control
        .post(format!(
            "{}/v1/edges/{}/lease",
            config.control_plane, config.name
        ))
        .bearer_auth(&config.token)
        .json(&EdgeLeaseRequest { max })
        .send()
        .await?;
    if !r.status().is_success() {
        anyhow::bail!("control plane answered HTTP {}", r.status());
    }
    Ok(r.json::<EdgeLease>().await?)
}

/// Leases attempts and starts each in its own task, until the future is dropped.
async fn lease_loop(
    config: &Arc<EdgeConfig>,
    control: &reqwest::Client,
    permits: &Arc<Semaphore>,
    held: &Held,
) -> anyhow::Result<()> {
    let policy = crate::delivery::addresses::AddressPolicy {
        allow_private: config.allow_private_targets,
        forbid: config.forbid_cidrs.clone(),
    };
    let webhooks = http::WebhookClient::with_roots(policy, None, &[]);
    let policy = RetryPolicy::new(config.report_schedule.clone(), Arc::new(ThreadRandom));
    let mut failures: u32 = 0;
    loop {
        let free = permits.available_permits().min(100) as u32;
        if free == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
            continue;
        }
        let lease = request_lease(config, control, free).await;
        let lease = match lease {
            Ok(lease) => {
                failures = 0;
                lease
            }
            Err(e) => {
                failures = failures.saturating_add(1);
                let wait = Duration::from_millis((100u64 << failures.min(5)).min(2_000));
                tracing::warn!(error = %e, "leasing from the control plane failed; retrying in {wait:?}");
                tokio::time::sleep(wait).await;
                continue;
            }
        };
        if lease.attempts.is_empty() {
            tokio::time::sleep(config.idle_poll).await;
            continue;
        }
        // Every leased attempt is recorded as held before anything can stop the loop, so a
        // drain knows what to wait for or release.
        let permits_for_lease: Vec<_> = {
            let mut taken = Vec::with_capacity(lease.attempts.len());
            for _ in &lease.attempts {
                taken.push(permits.clone().acquire_owned().await?);
            }
            taken
        };
        {
            let mut held = held.lock().expect("held lock");
            for attempt in &lease.attempts {
                held.insert(attempt.attempt_id.clone(), attempt.lease_token);
            }
        }
        for (attempt, permit) in lease.attempts.into_iter().zip(permits_for_lease) {
            let (config, control, webhooks, policy, held) = (
                config.clone(),
                control.clone(),
                webhooks.clone(),
                policy.clone(),
                held.clone(),
            );
            tokio::spawn(async move {
                let id = attempt.attempt_id.clone();
                deliver(&config, &control, &webhooks, &policy, attempt).await;
                held.lock().expect("held lock").remove(&id);
                drop(permit);
            });
        }
    }
}

async fn deliver(
    config: &EdgeConfig,
    control: &reqwest::Client,
    webhooks: &http::WebhookClient,
    policy: &RetryPolicy,
    attempt: RelayedAttempt,
) {
    let result = http::send(
        webhooks,
        &attempt.url,
        Duration::from_millis(u64::from(attempt.timeout_ms)),
        &attempt.headers,
        attempt.body.clone(),
    )
    .await;
    let report = EdgeAttemptReport {
        lease_token: attempt.lease_token,
        duration_ms: result.duration_ms,
        status_code: result.status_code,
        error_class: result.error_class,
        error: result.error.clone(),
    };
    for number in 1..=policy.max_attempts() {
        tokio::time::sleep(Duration::from_millis(policy.delay_before_ms(number) as u64)).await;
        match send_report(config, control, &attempt.attempt_id, &report).await {
            Reported::Recorded | Reported::Final => return,
            Reported::Retry => {}
        }
    }
    tracing::error!(attempt = %attempt.attempt_id,
        "report not delivered after every retry; the control plane counts the attempt when its lease expires");
}

/// How one report went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reported {
    /// The control plane recorded it.
    Recorded,
    /// Answered, and repeating it would not change the answer (already counted, or a 4xx).
    Final,
    /// Not answered, or a 5xx: worth repeating.
    Retry,
}

async fn send_report(
    config: &EdgeConfig,
    control: &reqwest::Client,
    attempt_id: &str,
    report: &EdgeAttemptReport,
) -> Reported {
    let url = format!(
        "{}/v1/edges/{}/attempts/{}",
        config.control_plane, config.name, attempt_id
    );
    let sent = control
        .post(&url)
        .bearer_auth(&config.token)
        .json(report)
        .send()
        .await;
    match sent {
        Ok(r) if r.status().is_success() => match r.json::<EdgeAttemptAck>().await {
            Ok(ack) if !ack.recorded => {
                tracing::warn!(attempt = %attempt_id, reason = ?ack.reason,
                    "control plane refused the report; it already counted the attempt");
                Reported::Final
            }
            _ => Reported::Recorded,
        },
        // A 4xx will not get better by repeating it.
        Ok(r) if r.status().is_client_error() => {
            tracing::warn!(attempt = %attempt_id, status = %r.status(), "report rejected");
            Reported::Final
        }
        Ok(r) => {
            tracing::warn!(attempt = %attempt_id, status = %r.status(), "report failed; retrying");
            Reported::Retry
        }
        Err(e) => {
            tracing::warn!(attempt = %attempt_id, error = %e, "report failed; retrying");
            Reported::Retry
        }
    }
}
