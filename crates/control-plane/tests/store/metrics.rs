//! Delivery health: every recorded attempt lands in the per-minute rollups and the health
//! rows in the same transaction (what a fenced-out attempt does not), events are counted per
//! minute, and the tenant's gauges read the open deliveries and the DLQ counters.

use std::sync::Arc;

use switchyard_control_plane::delivery::http::AttemptResult;
use switchyard_control_plane::store::{DueScope, FinishedBy, Store, Transition};
use switchyard_protocol::{ErrorClass, FlowMode, MetricsGroupBy};

use crate::support::{Backend, T0, TENANT, accept, conformance, failure, route};

conformance!(
    recorded_attempts_are_rolled_up_by_minute_and_group,
    a_failure_run_is_counted_until_the_next_success,
    gauges_count_open_and_dead_deliveries,
);

const MINUTE: i64 = 60_000;

fn answered(duration_ms: u64) -> AttemptResult {
    AttemptResult {
        duration_ms,
        status_code: Some(200),
        error_class: None,
        error: None,
    }
}

/// Claims every due delivery at `now` and records `result` for each; returns how many.
async fn attempt_all(
    store: &Arc<dyn Store>,
    now: i64,
    result: &AttemptResult,
    next: Transition,
) -> usize {
    let claimed = store
        .claim_due(DueScope::Direct, now, 100, "worker", 1_000)
        .await
        .unwrap();
    for c in &claimed {
        assert!(
            store
                .finish_attempt(c.fence(), result, FinishedBy::Sender, next, now)
                .await
                .unwrap()
        );
    }
    claimed.len()
}

async fn recorded_attempts_are_rolled_up_by_minute_and_group(b: &Backend) {
    let store = b.open().await;
    route(&store, FlowMode::AsyncInline, 2).await;
    for _ in 0..3 {
        accept(&store, None, T0).await;
    }
    // Six deliveries (3 events × 2 flows): all succeed in 30 ms at T0.
    assert_eq!(
        attempt_all(&store, T0, &answered(30), Transition::Succeeded).await,
        6
    );
    // Three more events a minute later, each failing once on both flows (5xx, 700 ms).
    for _ in 0..3 {
        accept(&store, None, T0 + MINUTE).await;
    }
    let mut slow = failure();
    slow.duration_ms = 700;
    let retry = Transition::RetryAt(T0 + 10 * MINUTE);
    assert_eq!(attempt_all(&store, T0 + MINUTE, &slow, retry).await, 6);
    // A fenced-out finish records nothing, and so counts nothing.
    let again = store
        .claim_due(DueScope::Direct, T0 + 10 * MINUTE, 1, "worker", 1_000)
        .await
        .unwrap();
    let stale = again[0].fence();
    let stale = switchyard_control_plane::store::Fence {
        lease_token: stale.lease_token - 1,
        ..stale
    };
    assert!(
        !store
            .finish_attempt(
                stale,
                &answered(1),
                FinishedBy::Sender,
                Transition::Succeeded,
                T0
            )
            .await
            .unwrap()
    );

    let t0_minute = T0 / MINUTE;
    let by_flow = store
        .attempt_rollups(TENANT, MetricsGroupBy::Flow, t0_minute, 1)
        .await
        .unwrap();
    assert_eq!(by_flow.len(), 4, "two flows × two minutes: {by_flow:?}");
    let first = &by_flow[0];
    assert_eq!((first.name.as_str(), first.bucket), ("fl-0", t0_minute));
    assert_eq!((first.attempts, first.successes), (3, 3));
    assert_eq!(first.lat_3, 3, "30 ms lands in the 25-50 ms bucket");
    let second = &by_flow[1];
    assert_eq!(
        (second.bucket, second.attempts, second.successes),
        (t0_minute + 1, 3, 0)
    );
    assert_eq!(second.f_http_5xx, 3);
    assert_eq!(second.lat_7, 3, "700 ms lands in the 500-1000 ms bucket");

    // One target for both flows; wider buckets sum minutes.
    let by_target = store
        .attempt_rollups(
            TENANT,
            MetricsGroupBy::Target,
            t0_minute - t0_minute % 30,
            30,
        )
        .await
        .unwrap();
    let total: i64 = by_target.iter().map(|r| r.attempts).sum();
    assert_eq!(
        total, 12,
        "every recorded attempt once per dimension: {by_target:?}"
    );
    assert!(by_target.iter().all(|r| r.name == "tg"));
    // Nothing before the window, nothing for another tenant.
    let later = store
        .attempt_rollups(TENANT, MetricsGroupBy::Target, t0_minute + 2, 1)
        .await
        .unwrap();
    assert!(later.is_empty());
    assert!(
        store
            .attempt_rollups("other", MetricsGroupBy::Target, 0, 1)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.events_accepted(TENANT, t0_minute).await.unwrap(), 6);
    assert_eq!(
        store.events_accepted(TENANT, t0_minute + 1).await.unwrap(),
        3
    );
    assert_eq!(store.events_accepted("other", 0).await.unwrap(), 0);
    // Whole-hour buckets sum the hour rows: the same attempts.
    let hourly = store
        .attempt_rollups(TENANT, MetricsGroupBy::Flow, t0_minute - t0_minute % 60, 60)
        .await
        .unwrap();
    let hourly_total: i64 = hourly.iter().map(|r| r.attempts).sum();
    assert_eq!(hourly_total, 12, "{hourly:?}");
    assert!(hourly.iter().all(|r| r.bucket % 60 == 0));
    // Retention: minute rows before one minute go, hour rows stay until their own cutoff.
    assert!(store.sweep_rollups(0, t0_minute + 1).await.unwrap() > 0);
    assert_eq!(
        store
            .attempt_rollups(TENANT, MetricsGroupBy::Flow, 0, 60)
            .await
            .unwrap()
            .iter()
            .map(|r| r.attempts)
            .sum::<i64>(),
        12,
        "hour rows kept"
    );
    let kept = store
        .attempt_rollups(TENANT, MetricsGroupBy::Flow, 0, 1)
        .await
        .unwrap();
    assert!(kept.iter().all(|r| r.bucket == t0_minute + 1), "{kept:?}");
}

async fn a_failure_run_is_counted_until_the_next_success(b: &Backend) {
    let store = b.open().await;
    route(&store, FlowMode::AsyncInline, 1).await;
    accept(&store, None, T0).await;
    let mut at = T0;
    for _ in 0..3 {
        assert_eq!(
            attempt_all(&store, at, &failure(), Transition::RetryAt(at + 1)).await,
            1
        );
        at += 1_000;
    }
    let health = store
        .delivery_health(TENANT, MetricsGroupBy::Target)
        .await
        .unwrap();
    assert_eq!(health.len(), 1);
    let h = &health[0];
    assert_eq!((h.name.as_str(), h.consecutive_failures), ("tg", 3));
    assert_eq!(h.failing_since, Some(T0 + failure().duration_ms as i64));
    assert_eq!(h.last_success_at, None);
    assert_eq!(
        h.last_error_class.as_deref(),
        Some(ErrorClass::Http5xx.as_str())
    );
    assert_eq!(h.last_error.as_deref(), Some("receiver answered HTTP 503"));

    assert_eq!(
        attempt_all(&store, at, &answered(5), Transition::Succeeded).await,
        1
    );
    let h = store
        .delivery_health(TENANT, MetricsGroupBy::Target)
        .await
        .unwrap()
        .remove(0);
    assert_eq!(h.consecutive_failures, 0);
    assert_eq!(h.failing_since, None, "the run ended");
    assert_eq!(h.last_success_at, Some(at + 5));
    assert!(
        h.last_failure_at.is_some(),
        "the last failure is still known"
    );
    assert!(
        store
            .delivery_health("other", MetricsGroupBy::Target)
            .await
            .unwrap()
            .is_empty()
    );
}

async fn gauges_count_open_and_dead_deliveries(b: &Backend) {
    let store = b.open().await;
    route(&store, FlowMode::AsyncInline, 1).await;
    for n in 0..4 {
        accept(&store, None, T0 + n).await;
    }
    let g = store.tenant_gauges(TENANT).await.unwrap();
    assert_eq!((g.pending, g.in_flight, g.dead), (4, 0, 0));
    assert_eq!(g.oldest_pending_at, Some(T0));
    // Two die, one is left in flight, one still waits.
    let claimed = store
        .claim_due(DueScope::Direct, T0 + 10, 3, "worker", 60_000)
        .await
        .unwrap();
    assert_eq!(claimed.len(), 3);
    for c in &claimed[..2] {
        store
            .finish_attempt(
                c.fence(),
                &failure(),
                FinishedBy::Sender,
                Transition::Dead,
                T0 + 20,
            )
            .await
            .unwrap();
    }
    let g = store.tenant_gauges(TENANT).await.unwrap();
    assert_eq!(
        (g.pending, g.in_flight, g.dead, g.replays_running),
        (1, 1, 2, 0)
    );
    assert_eq!(g.oldest_pending_at, Some(T0 + 3));
    let other = store.tenant_gauges("other").await.unwrap();
    assert_eq!((other.pending, other.in_flight, other.dead), (0, 0, 0));
    assert_eq!(other.oldest_pending_at, None);

    // The report reads the same figures in one snapshot.
    let since = T0 / MINUTE - 14;
    let report = store
        .delivery_report(TENANT, MetricsGroupBy::Target, since, 1)
        .await
        .unwrap();
    assert_eq!(report.gauges, g);
    assert_eq!(
        report.rollups,
        store
            .attempt_rollups(TENANT, MetricsGroupBy::Target, since, 1)
            .await
            .unwrap()
    );
    assert_eq!(report.rollups.iter().map(|r| r.attempts).sum::<i64>(), 2);
    assert_eq!(
        report.health,
        store
            .delivery_health(TENANT, MetricsGroupBy::Target)
            .await
            .unwrap()
    );
    assert_eq!(report.events_accepted, 4);
}
