//! The background worker: reaps expired leases, claims due attempts, sends them, records
//! their outcomes under the lease's fencing token.

use std::sync::Arc;
use std::time::Duration;

use switchyard_protocol::ErrorClass;
use tokio::sync::Semaphore;

use super::DeliveryContext;
use super::http::{self, AttemptResult};
use super::store::{self, Claimed, Fence, FinishedBy};
use crate::store::StoreError;

/// Sends one claimed attempt and records its outcome. Returns the result and whether it was
/// recorded (`false`: the lease was lost and a newer holder owns the delivery).
pub async fn perform(
    ctx: &DeliveryContext,
    claimed: &Claimed,
) -> Result<(AttemptResult, bool), StoreError> {
    let result = match &claimed.target {
        None => AttemptResult::failed(
            ErrorClass::Connect,
            format!("target {:?} no longer exists", claimed.target_name),
        ),
        Some(target) => {
            let headers = claimed.signed_headers(ctx.clock.now_ms());
            http::send(
                &ctx.http,
                &target.url,
                Duration::from_millis(u64::from(target.timeout_ms)),
                &headers,
                claimed.body.clone(),
            )
            .await
        }
    };
    let recorded = record(ctx, claimed, &result).await?;
    Ok((result, recorded))
}

/// Records `result` for `claimed`, fenced by its lease token.
pub async fn record(
    ctx: &DeliveryContext,
    claimed: &Claimed,
    result: &AttemptResult,
) -> Result<bool, StoreError> {
    let mut tx = ctx.store.writer.begin_with("BEGIN IMMEDIATE").await?;
    let recorded = store::finish_attempt(
        &mut tx,
        Fence {
            delivery_id: &claimed.delivery_id,
            attempt_id: &claimed.attempt_id,
            lease_token: claimed.lease_token,
        },
        result,
        ctx.clock.now_ms(),
        &ctx.policy,
        FinishedBy::Sender,
    )
    .await?;
    tx.commit().await?;
    if !recorded {
        tracing::warn!(delivery = %claimed.delivery_id, attempt = %claimed.attempt_id,
            "attempt lease was lost before its outcome was recorded; the newer holder decides");
    }
    ctx.wake.notify_one();
    Ok(recorded)
}

/// One pass: reap expired leases and unpicked relay attempts, then claim up to `limit`.
pub async fn claim_batch(ctx: &DeliveryContext, limit: u32) -> Result<Vec<Claimed>, StoreError> {
    if ctx.config.unsafe_stale_claim {
        return stale_claim(ctx, limit).await;
    }
    let now = ctx.clock.now_ms();
    let mut tx = ctx.store.writer.begin_with("BEGIN IMMEDIATE").await?;
    store::reap_expired_leases(&mut tx, now, &ctx.policy).await?;
    let pickup = i64::try_from(ctx.config.edge_pickup_timeout.as_millis()).unwrap_or(i64::MAX / 4);
    store::fail_unpicked_relays(&mut tx, now, pickup, &ctx.policy, ctx.lease_margin_ms()).await?;
    let claimed = if limit == 0 {
        Vec::new()
    } else {
        store::claim_due(
            &mut tx,
            now,
            limit,
            &ctx.config.worker_id,
            ctx.lease_margin_ms(),
            None,
        )
        .await?
    };
    tx.commit().await?;
    Ok(claimed)
}

/// Runs the worker until the task is aborted.
pub fn spawn(ctx: Arc<DeliveryContext>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let permits = Arc::new(Semaphore::new(ctx.config.concurrency.max(1)));
        let mut last_sweep = 0i64;
        loop {
            if ctx.clock.now_ms() - last_sweep > 60_000 {
                last_sweep = ctx.clock.now_ms();
                if let Err(e) = sweep_event_keys(&ctx).await {
                    tracing::warn!(error = %e, "sweeping expired event keys failed; will retry");
                }
            }
            let free = u32::try_from(permits.available_permits()).unwrap_or(u32::MAX);
            match claim_batch(&ctx, free).await {
                Ok(batch) => {
                    for claimed in batch {
                        let Ok(permit) = permits.clone().acquire_owned().await else {
                            return;
                        };
                        let ctx = ctx.clone();
                        tokio::spawn(async move {
                            if let Err(e) = perform(&ctx, &claimed).await {
                                tracing::warn!(error = %e, delivery = %claimed.delivery_id,
                                    "recording an attempt failed; its lease will expire and it is retried");
                            }
                            drop(permit);
                        });
                    }
                }
                Err(e) => tracing::warn!(error = %e, "delivery worker pass failed; retrying"),
            }
            let pickup =
                i64::try_from(ctx.config.edge_pickup_timeout.as_millis()).unwrap_or(i64::MAX / 4);
            let sleep = match store::next_wakeup(&ctx.store.readers, pickup).await {
                Ok(Some(at)) => {
                    let ms =
                        (at - ctx.clock.now_ms()).clamp(5, ctx.config.poll_max.as_millis() as i64);
                    Duration::from_millis(ms as u64)
                }
                _ => ctx.config.poll_max,
            };
            tokio::select! {
                () = tokio::time::sleep(sleep) => {}
                () = ctx.wake.notified() => {}
            }
        }
    })
}

/// Deletes event keys older than the dedup window (they no longer dedup anything).
pub async fn sweep_event_keys(ctx: &DeliveryContext) -> Result<u64, StoreError> {
    let retention = i64::try_from(ctx.config.dedup_retention.as_millis()).unwrap_or(i64::MAX / 2);
    let cutoff = ctx.clock.now_ms().saturating_sub(retention);
    let done = sqlx::query("DELETE FROM event_keys WHERE created_at < ?")
        .bind(cutoff)
        .execute(&ctx.store.writer)
        .await?;
    Ok(done.rows_affected())
}

/// The negative control: read due work, then claim it without re-checking (check-then-act).
async fn stale_claim(ctx: &DeliveryContext, limit: u32) -> Result<Vec<Claimed>, StoreError> {
    let now = ctx.clock.now_ms();
    let due: Vec<String> = sqlx::query_scalar(
        "SELECT id FROM deliveries WHERE state = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?",
    )
    .bind(now)
    .bind(limit)
    .fetch_all(&ctx.store.readers)
    .await?;
    // Widen the race window the way a busy server would.
    tokio::time::sleep(Duration::from_millis(5)).await;
    let mut tx = ctx.store.writer.begin_with("BEGIN IMMEDIATE").await?;
    let mut claimed = Vec::new();
    for id in due {
        if let Some(c) = store::begin_attempt_unchecked(
            &mut tx,
            &id,
            &ctx.config.worker_id,
            now,
            ctx.lease_margin_ms(),
        )
        .await?
        {
            claimed.push(c);
        }
    }
    tx.commit().await?;
    Ok(claimed)
}
