//! Attempts whose sender vanished: expired leases, and relay attempts no edge plane took.
//! Each is decided here and recorded through the attempt's fence, so several replicas
//! reaping at once count each attempt once.

use switchyard_protocol::ErrorClass;

use super::http::AttemptResult;
use super::{DeliveryContext, decide};
use crate::store::{DueScope, ExpiredLease, FinishedBy, StoreError, Transition};

/// How many expired leases or unpicked relays one pass handles.
const BATCH: u32 = 200;

/// Counts every in-flight attempt whose lease expired as failed (`timeout`): its worker or
/// edge vanished (crash, kill -9, partition). The delivery is retried per the schedule, so
/// the receiver may see the event again, with the same `webhook-id`.
pub async fn reap_expired_leases(ctx: &DeliveryContext, now: i64) -> Result<u64, StoreError> {
    #[cfg(feature = "fault-injection")]
    if ctx.config.unfenced_reap {
        return reap_unfenced(ctx, now).await;
    }
    let mut reaped = 0;
    for lease in ctx.store.expired_leases(now, BATCH).await? {
        let result = AttemptResult::failed(
            ErrorClass::Timeout,
            format!(
                "lease expired: {} stopped before recording the outcome",
                lease.owner.as_deref().unwrap_or("the sender")
            ),
        );
        let next = decide(
            &result,
            lease.hop_number,
            lease.max_attempts,
            &ctx.policy,
            now,
        );
        if ctx
            .store
            .finish_attempt(lease.fence(), &result, FinishedBy::Reaper, next, now)
            .await?
        {
            count_reaped(ctx, &lease, &result, next).await;
            reaped += 1;
        }
    }
    Ok(reaped)
}

/// Counts a reaped lease: a takeover, a failed attempt, and the delivery's final state if
/// it died (labelled with its tenant, looked up only when tenant labels are on).
async fn count_reaped(
    ctx: &DeliveryContext,
    lease: &ExpiredLease,
    result: &AttemptResult,
    next: Transition,
) {
    let telemetry = &ctx.telemetry;
    let tenant = if telemetry.wants_tenant(next) {
        ctx.store
            .delivery_tenant(&lease.delivery_id)
            .await
            .unwrap_or_else(|e| {
                tracing::warn!(error = %e, delivery = %lease.delivery_id,
                    "reading a reaped delivery's tenant for its metric failed");
                None
            })
    } else {
        None
    };
    telemetry.attempt_recorded(lease.hop, result, next, tenant.as_deref(), false);
    // After the attempt: a scrape that sees the takeover sees the attempt too.
    telemetry.lease_taken_over();
}

/// The negative control: decide from a read, then record without the fence after a while
/// (a busy replica: each expired lease after its own random delay of up to 0.8 s).
#[cfg(feature = "fault-injection")]
async fn reap_unfenced(ctx: &DeliveryContext, now: i64) -> Result<u64, StoreError> {
    for lease in ctx.store.expired_leases(now, BATCH).await? {
        let (store, policy) = (ctx.store.clone(), ctx.policy.clone());
        tokio::spawn(async move {
            let delay = rand::random::<u64>() % 800;
            tokio::time::sleep(std::time::Duration::from_millis(delay)).await;
            let result =
                AttemptResult::failed(ErrorClass::Timeout, "lease expired (unfenced reaper)");
            let next = decide(&result, lease.hop_number, lease.max_attempts, &policy, now);
            let _ = store
                .finish_attempt_unfenced(lease.fence(), &result, FinishedBy::Reaper, next, now)
                .await;
        });
    }
    Ok(0)
}

/// Counts a relay attempt that no edge plane leased within the pickup timeout of being due
/// as a failed control plane → edge hop (`connect`).
pub async fn fail_unpicked_relays(ctx: &DeliveryContext, now: i64) -> Result<u64, StoreError> {
    let pickup_ms = ctx.pickup_ms();
    let claimed = ctx
        .store
        .claim_due(
            DueScope::UnpickedRelays {
                due_before: now - pickup_ms,
            },
            now,
            BATCH,
            "control-plane",
            ctx.lease_margin_ms(),
        )
        .await?;
    let mut failed = 0;
    for c in claimed {
        let result = AttemptResult::failed(
            ErrorClass::Connect,
            format!(
                "no edge plane {:?} took the attempt within {pickup_ms} ms",
                c.edge.as_deref().unwrap_or_default()
            ),
        );
        let next = decide(&result, c.hop_number, c.max_attempts, &ctx.policy, now);
        if ctx
            .store
            .finish_attempt(c.fence(), &result, FinishedBy::Sender, next, now)
            .await?
        {
            ctx.telemetry
                .attempt_recorded(c.hop, &result, next, Some(&c.tenant), false);
            failed += 1;
        }
    }
    Ok(failed)
}
