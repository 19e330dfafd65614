//! The background worker: reaps expired leases, claims due attempts, sends them, records
//! their outcomes under the lease's fencing token, and advances the open retirements
//! (`crate::retirement::advance::pass`). Any number of workers (on any number of
//! replicas) may share one database: claims and fences are the store's guarded statements.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use switchyard_protocol::ErrorClass;
use tokio::sync::Semaphore;

use super::http::{self, AttemptResult};
use super::recorder::Recorder;
use super::{DeliveryContext, decide, reaper};
use crate::store::{Claimed, ClientIdentity, DueScope, FinishedBy, StoreError, Transition};

/// Sends one claimed attempt and records its outcome. Returns the result and whether it was
/// recorded (`false`: the lease was lost and a newer holder owns the delivery).
pub async fn perform(
    ctx: &DeliveryContext,
    claimed: &Claimed,
) -> Result<(AttemptResult, bool), StoreError> {
    let (result, sent) = send(ctx, claimed).await?;
    let recorded = record_attempt(ctx, claimed, &result, sent).await?;
    Ok((result, recorded))
}

/// Sends one claimed attempt; returns its result and whether a request went out (`false`:
/// the target no longer exists).
async fn send(
    ctx: &DeliveryContext,
    claimed: &Claimed,
) -> Result<(AttemptResult, bool), StoreError> {
    // The target's active client certificate (mTLS), read at send time: an activation
    // takes effect on the next attempt, retries and replays included.
    let identity = match claimed.target {
        Some(_) => {
            ctx.store
                .active_client_identity(&claimed.tenant, &claimed.target_name)
                .await?
        }
        None => None,
    };
    Ok(send_with(ctx, claimed, identity.as_ref()).await)
}

/// [`send`] presenting `identity`, already read.
async fn send_with(
    ctx: &DeliveryContext,
    claimed: &Claimed,
    identity: Option<&ClientIdentity>,
) -> (AttemptResult, bool) {
    let Some(target) = &claimed.target else {
        let result = AttemptResult::failed(
            ErrorClass::Connect,
            format!("target {:?} no longer exists", claimed.target_name),
        );
        return (result, false);
    };
    let headers = claimed.signed_headers(ctx.clock.now_ms());
    let result = http::send_as(
        &ctx.http,
        identity,
        &target.url,
        Duration::from_millis(u64::from(target.timeout_ms)),
        &headers,
        claimed.body.clone(),
    )
    .await;
    (result, true)
}

/// The active client certificate of each target in `batch`, read once per target right
/// after the claim (an activation takes effect on the attempts claimed after it). A target
/// whose certificate could not be read is left out: its attempts are not sent now, and
/// their leases expire into a retry, as when any store read before a send fails.
async fn identities(ctx: &DeliveryContext, batch: &[Claimed]) -> HashMap<TargetKey, Identity> {
    let mut found = HashMap::new();
    for c in batch.iter().filter(|c| c.target.is_some()) {
        let key = (c.tenant.clone(), c.target_name.clone());
        if found.contains_key(&key) {
            continue;
        }
        match ctx
            .store
            .active_client_identity(&c.tenant, &c.target_name)
            .await
        {
            Ok(identity) => {
                found.insert(key, identity.map(Arc::new));
            }
            Err(e) => tracing::warn!(error = %e, target = %c.target_name,
                "reading the target's client certificate failed; its attempts are retried when their leases expire"),
        }
    }
    found
}

type TargetKey = (String, String);
type Identity = Option<Arc<ClientIdentity>>;

/// Records `result` of a sent attempt for `claimed`, fenced by its lease token.
pub async fn record(
    ctx: &DeliveryContext,
    claimed: &Claimed,
    result: &AttemptResult,
) -> Result<bool, StoreError> {
    record_attempt(ctx, claimed, result, true).await
}

/// [`record`]; `sent` says whether the attempt went out (its duration is then observed).
async fn record_attempt(
    ctx: &DeliveryContext,
    claimed: &Claimed,
    result: &AttemptResult,
    sent: bool,
) -> Result<bool, StoreError> {
    let now = ctx.clock.now_ms();
    let next = decide(
        result,
        claimed.hop_number,
        claimed.max_attempts,
        &ctx.policy,
        now,
    );
    let recorded = ctx
        .telemetry
        .store(
            "finish_attempt",
            ctx.store
                .finish_attempt(claimed.fence(), result, FinishedBy::Sender, next, now),
        )
        .await?;
    if recorded {
        ctx.telemetry
            .attempt_recorded(claimed.hop, result, next, Some(&claimed.tenant), sent);
    } else {
        tracing::warn!(delivery = %claimed.delivery_id, attempt = %claimed.attempt_id,
            "attempt lease was lost before its outcome was recorded; the newer holder decides");
    }
    ctx.wake.notify_one();
    Ok(recorded)
}

/// How often at most a busy worker reaps expired leases and fails unpicked relay attempts
/// when woken by new work; a worker that sleeps until the next lease expiry or relay pickup
/// deadline (`next_wakeup`) does it as soon as it wakes.
const HOUSEKEEPING_EVERY_MS: i64 = 250;

/// Reaps expired leases and unpicked relay attempts.
async fn housekeeping(ctx: &DeliveryContext) -> Result<(), StoreError> {
    let now = ctx.clock.now_ms();
    reaper::reap_expired_leases(ctx, now).await?;
    reaper::fail_unpicked_relays(ctx, now).await?;
    Ok(())
}

/// Claims up to `limit` due direct attempts.
pub async fn claim_batch(ctx: &DeliveryContext, limit: u32) -> Result<Vec<Claimed>, StoreError> {
    #[cfg(feature = "fault-injection")]
    if ctx.config.unsafe_stale_claim {
        return stale_claim(ctx, limit).await;
    }
    let claim = ctx.store.claim_due(
        DueScope::Direct,
        ctx.clock.now_ms(),
        limit,
        &ctx.config.worker_id,
        ctx.lease_margin_ms(),
    );
    ctx.telemetry.store("claim_due", claim).await
}

/// Runs the worker until the task is aborted, or until the context is draining and every
/// attempt it claimed is recorded (or the drain is cut short: `DeliveryContext::drain_cut`).
///
/// Each pass claims as many due attempts as there are free slots; outcomes go through one
/// [`Recorder`], so attempts that finish together are recorded in one commit and free
/// their slots together, and the next pass claims them back in one batch.
pub fn spawn(ctx: Arc<DeliveryContext>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let concurrency = ctx.config.concurrency.max(1);
        let permits = Arc::new(Semaphore::new(concurrency));
        let recorder = Recorder::spawn(ctx.clone());
        let mut last_sweep = 0i64;
        let mut last_retirements = 0i64;
        let mut last_housekeeping = i64::MIN;
        let mut timer_fired = true;
        loop {
            if ctx.is_draining() {
                // Every permit back means every attempt in flight has been recorded.
                tokio::select! {
                    _all = permits.acquire_many(u32::try_from(concurrency).unwrap_or(u32::MAX)) => {
                        tracing::info!(worker = %ctx.config.worker_id, "worker drained");
                    }
                    () = ctx.drain_cut.notified() => {}
                }
                return;
            }
            if ctx.clock.now_ms() - last_sweep > 60_000 {
                last_sweep = ctx.clock.now_ms();
                if let Err(e) = sweep_event_keys(&ctx).await {
                    tracing::warn!(error = %e, "sweeping expired event keys failed; will retry");
                }
            }
            let every = i64::try_from(ctx.config.retirement_every.as_millis()).unwrap_or(1_000);
            if ctx.clock.now_ms() - last_retirements >= every {
                last_retirements = ctx.clock.now_ms();
                if let Err(e) = crate::retirement::advance::pass(&ctx).await {
                    tracing::warn!(error = %e, "advancing retirements failed; will retry");
                }
            }
            if timer_fired
                || ctx.clock.now_ms().saturating_sub(last_housekeeping) >= HOUSEKEEPING_EVERY_MS
            {
                last_housekeeping = ctx.clock.now_ms();
                if let Err(e) = housekeeping(&ctx).await {
                    tracing::warn!(error = %e, "reaping expired leases failed; retrying");
                }
            }
            let free = u32::try_from(permits.available_permits()).unwrap_or(u32::MAX);
            let mut full = false;
            match claim_batch(&ctx, free).await {
                Ok(batch) => {
                    full = free > 0 && batch.len() >= free as usize;
                    let identities = identities(&ctx, &batch).await;
                    for claimed in batch {
                        let key = (claimed.tenant.clone(), claimed.target_name.clone());
                        let identity = match identities.get(&key) {
                            Some(identity) => identity.clone(),
                            None if claimed.target.is_none() => None,
                            None => continue,
                        };
                        let Ok(permit) = permits.clone().acquire_owned().await else {
                            return;
                        };
                        start_attempt(&ctx, &recorder, claimed, identity, permit);
                    }
                }
                Err(e) => tracing::warn!(error = %e, "delivery worker pass failed; retrying"),
            }
            // Every slot taken: more may be due, and the next outcome recorded wakes the
            // loop; no need to ask the store when to look again.
            let sleep = match full {
                true => ctx.config.poll_max,
                false => until_next_due(&ctx).await,
            };
            timer_fired = tokio::select! {
                () = tokio::time::sleep(sleep) => true,
                () = ctx.wake.notified() => false,
            };
        }
    })
}

/// How long to sleep until the next attempt falls due (at least 5 ms, at most the poll
/// interval; the poll interval when the store cannot tell).
async fn until_next_due(ctx: &DeliveryContext) -> Duration {
    match ctx.store.next_wakeup(ctx.pickup_ms()).await {
        Ok(Some(at)) => {
            let ms = (at - ctx.clock.now_ms()).clamp(5, ctx.config.poll_max.as_millis() as i64);
            Duration::from_millis(ms as u64)
        }
        _ => ctx.config.poll_max,
    }
}

/// Sends `claimed` in a task of its own and records its outcome through `recorder`, which
/// frees the slot (`permit`) once the outcome is committed.
fn start_attempt(
    ctx: &Arc<DeliveryContext>,
    recorder: &Recorder,
    claimed: Claimed,
    identity: Identity,
    permit: tokio::sync::OwnedSemaphorePermit,
) {
    let (ctx, recorder) = (ctx.clone(), recorder.clone());
    ctx.in_flight
        .lock()
        .expect("in-flight lock")
        .insert(claimed.attempt_id.clone(), claimed.clone());
    tokio::spawn(async move {
        let delivery_id = claimed.delivery_id.clone();
        let (result, sent) = send_with(&ctx, &claimed, identity.as_deref()).await;
        if let Err(e) = recorder.record(claimed, result, sent, permit).await {
            tracing::warn!(error = %e, delivery = %delivery_id,
                "recording an attempt failed; its lease will expire and it is retried");
        }
    });
}

/// Releases every attempt the worker still holds when a drain runs out of time: each is
/// recorded (through its fence, so an outcome that lands first wins) as an interrupted
/// attempt and is due again at once, so the next replica or the next start sends it now
/// instead of after its lease expires. The receiver may have seen it: the copy it gets next
/// carries the same `webhook-id`. Returns how many were released.
pub async fn release_in_flight(ctx: &DeliveryContext) -> Result<usize, StoreError> {
    let held: Vec<Claimed> = ctx
        .in_flight
        .lock()
        .expect("in-flight lock")
        .drain()
        .map(|(_, c)| c)
        .collect();
    let now = ctx.clock.now_ms();
    let mut released = 0;
    for claimed in &held {
        let result = AttemptResult::failed(
            ErrorClass::Timeout,
            "interrupted: the control plane stopped before the receiver answered",
        );
        let next = match decide(
            &result,
            claimed.hop_number,
            claimed.max_attempts,
            &ctx.policy,
            now,
        ) {
            Transition::RetryAt(_) => Transition::RetryAt(now),
            other => other,
        };
        let finish =
            ctx.store
                .finish_attempt(claimed.fence(), &result, FinishedBy::Sender, next, now);
        if ctx.telemetry.store("finish_attempt", finish).await? {
            ctx.telemetry.attempt_recorded(
                claimed.hop,
                &result,
                next,
                Some(&claimed.tenant),
                false,
            );
            released += 1;
        }
    }
    Ok(released)
}

/// Deletes event keys older than the dedup window (they no longer dedup anything).
pub async fn sweep_event_keys(ctx: &DeliveryContext) -> Result<u64, StoreError> {
    let retention = i64::try_from(ctx.config.dedup_retention.as_millis()).unwrap_or(i64::MAX / 2);
    let cutoff = ctx.clock.now_ms().saturating_sub(retention);
    ctx.store.sweep_event_keys(cutoff).await
}

/// The negative control: read due work, then claim it without re-checking (check-then-act).
#[cfg(feature = "fault-injection")]
async fn stale_claim(ctx: &DeliveryContext, limit: u32) -> Result<Vec<Claimed>, StoreError> {
    let now = ctx.clock.now_ms();
    let due = ctx.store.due_ids(now, limit).await?;
    // Widen the race window the way a busy server would.
    tokio::time::sleep(Duration::from_millis(5)).await;
    ctx.store
        .claim_unguarded(&due, now, &ctx.config.worker_id, ctx.lease_margin_ms())
        .await
}
