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
}

/// Runs the edge until the process ends.
pub async fn run(config: EdgeConfig) -> anyhow::Result<()> {
    let config = Arc::new(config);
    let control = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(10))
        .build()?;
    let webhooks = http::client();
    let permits = Arc::new(Semaphore::new(config.concurrency.max(1)));
    let policy = RetryPolicy::new(config.report_schedule.clone(), Arc::new(ThreadRandom));
    let mut failures: u32 = 0;
    tracing::info!(edge = %config.name, control_plane = %config.control_plane, "edge plane started");
    loop {
        let free = permits.available_permits().min(100) as u32;
        if free == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
            continue;
        }
        let leased = control
            .post(format!(
                "{}/v1/edges/{}/lease",
                config.control_plane, config.name
            ))
            .bearer_auth(&config.token)
            .json(&EdgeLeaseRequest { max: free })
            .send()
            .await;
        let lease = match leased {
            Ok(r) if r.status().is_success() => {
                r.json::<EdgeLease>().await.map_err(anyhow::Error::from)
            }
            Ok(r) => Err(anyhow::anyhow!(
                "control plane answered HTTP {}",
                r.status()
            )),
            Err(e) => Err(e.into()),
        };
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
        for attempt in lease.attempts {
            let permit = permits.clone().acquire_owned().await?;
            let (config, control, webhooks, policy) = (
                config.clone(),
                control.clone(),
                webhooks.clone(),
                policy.clone(),
            );
            tokio::spawn(async move {
                deliver(&config, &control, &webhooks, &policy, attempt).await;
                drop(permit);
            });
        }
    }
}

async fn deliver(
    config: &EdgeConfig,
    control: &reqwest::Client,
    webhooks: &reqwest::Client,
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
    let url = format!(
        "{}/v1/edges/{}/attempts/{}",
        config.control_plane, config.name, attempt.attempt_id
    );
    for number in 1..=policy.max_attempts() {
        tokio::time::sleep(Duration::from_millis(policy.delay_before_ms(number) as u64)).await;
        let sent = control
            .post(&url)
            .bearer_auth(&config.token)
            .json(&report)
            .send()
            .await;
        match sent {
            Ok(r) if r.status().is_success() => {
                if let Ok(ack) = r.json::<EdgeAttemptAck>().await
                    && !ack.recorded
                {
                    tracing::warn!(attempt = %attempt.attempt_id, reason = ?ack.reason,
                        "control plane refused the report; it already counted the attempt");
                }
                return;
            }
            // A 4xx will not get better by repeating it.
            Ok(r) if r.status().is_client_error() => {
                tracing::warn!(attempt = %attempt.attempt_id, status = %r.status(), "report rejected");
                return;
            }
            Ok(r) => {
                tracing::warn!(attempt = %attempt.attempt_id, status = %r.status(), "report failed; retrying")
            }
            Err(e) => {
                tracing::warn!(attempt = %attempt.attempt_id, error = %e, "report failed; retrying")
            }
        }
    }
    tracing::error!(attempt = %attempt.attempt_id,
        "report not delivered after every retry; the control plane counts the attempt when its lease expires");
}
