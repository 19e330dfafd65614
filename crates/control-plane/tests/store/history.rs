//! The history import (the sandbox's day of past deliveries): every imported delivery, attempt
//! and event is counted by the DLQ, the rollups and the health rows exactly as a live one; a
//! second import into a tenant that has events imports nothing; other tenants see nothing.

use rand::SeedableRng;
use rand::rngs::StdRng;
use switchyard_control_plane::demo_history::{HISTORY_SPAN_MS, demo_history};
use switchyard_control_plane::store::history::PastEvent;
use switchyard_protocol::{DlqFilter, DlqGroupBy, MetricsGroupBy};

use crate::support::{Backend, T0, TENANT, conformance};

conformance!(
    imported_history_is_counted_like_live_deliveries,
    a_tenant_with_events_imports_nothing,
);

const SCHEDULE: [i64; 5] = [0, 2_000, 10_000, 30_000, 60_000];

fn day(seed: u64) -> Vec<PastEvent> {
    demo_history(T0, &SCHEDULE, &mut StdRng::seed_from_u64(seed))
}

async fn imported_history_is_counted_like_live_deliveries(b: &Backend) {
    let store = b.open().await;
    let events = day(3);
    assert_eq!(
        store.import_history(TENANT, &events).await.unwrap(),
        events.len() as u64
    );
    let deliveries: Vec<_> = events.iter().flat_map(|e| &e.deliveries).collect();
    let dead: Vec<_> = deliveries.iter().filter(|d| !d.succeeded()).collect();
    let attempts: usize = deliveries.iter().map(|d| d.attempts.len()).sum();
    assert!(
        dead.len() > 100,
        "a day of legacy-erp and warehouse deliveries died"
    );

    // The DLQ: counters and pages agree with what was imported, newest first.
    let counts = store
        .dlq_counts(TENANT, &DlqFilter::default(), DlqGroupBy::Target)
        .await
        .unwrap();
    assert_eq!(
        counts.iter().map(|c| c.count).sum::<u64>(),
        dead.len() as u64
    );
    let page = store
        .dlq_page(TENANT, &DlqFilter::default(), None, 5)
        .await
        .unwrap();
    let newest = dead.iter().max_by_key(|d| d.finished_at()).unwrap();
    assert_eq!(page[0].delivery_id, newest.id);
    assert_eq!(
        store.tenant_gauges(TENANT).await.unwrap().dead,
        dead.len() as i64
    );
    assert_eq!(store.tenant_gauges(TENANT).await.unwrap().pending, 0);

    // The rollups and health rows, through the same triggers as a live attempt.
    // From the hour before the history starts (hour rows start on the hour).
    let since = ((T0 - HISTORY_SPAN_MS) / 3_600_000 - 1) * 60;
    let report = store
        .delivery_report(TENANT, MetricsGroupBy::Target, since, 60)
        .await
        .unwrap();
    assert_eq!(
        report.rollups.iter().map(|r| r.attempts).sum::<i64>(),
        attempts as i64
    );
    assert_eq!(report.events_accepted, events.len() as u64);
    let health = |name: &str| report.health.iter().find(|h| h.name == name).unwrap();
    let of = |target: &'static str| deliveries.iter().filter(move |d| d.target == target);
    // legacy-erp never succeeded: every attempt is in its run, since the first one.
    let erp_attempts: Vec<_> = of("legacy-erp").flat_map(|d| &d.attempts).collect();
    let erp = health("legacy-erp");
    assert_eq!(erp.consecutive_failures, erp_attempts.len() as i64);
    assert_eq!(
        erp.failing_since,
        erp_attempts.iter().map(|a| a.finished_at()).min()
    );
    assert_eq!(erp.last_error_class.as_deref(), Some("http_5xx"));
    let billing = health("billing");
    assert_eq!(billing.consecutive_failures, 0);
    assert_eq!(
        billing.last_success_at,
        of("billing").map(|d| d.finished_at()).max()
    );

    // Another tenant sees none of it.
    let other = store
        .dlq_counts("other", &DlqFilter::default(), DlqGroupBy::Target)
        .await
        .unwrap();
    assert!(other.is_empty());
}

async fn a_tenant_with_events_imports_nothing(b: &Backend) {
    let store = b.open().await;
    let first = day(1);
    store.import_history(TENANT, &first).await.unwrap();
    // Another history (a restart: another "now", other ids) goes nowhere, from any replica.
    let again = b.open().await;
    assert_eq!(again.import_history(TENANT, &day(2)).await.unwrap(), 0);
    let dead = first
        .iter()
        .flat_map(|e| &e.deliveries)
        .filter(|d| !d.succeeded())
        .count();
    let counts = store
        .dlq_counts(TENANT, &DlqFilter::default(), DlqGroupBy::Target)
        .await
        .unwrap();
    assert_eq!(counts.iter().map(|c| c.count).sum::<u64>(), dead as u64);
    // Two replicas importing at once into an empty tenant: one history, not two.
    let (a, b2) = (b.open().await, b.open().await);
    let (h5, h4) = (day(5), day(4));
    let (x, y) = tokio::join!(
        a.import_history("fresh", &h5),
        b2.import_history("fresh", &h4)
    );
    let (x, y) = (x.unwrap(), y.unwrap());
    assert!(x == 0 || y == 0, "one import won: {x} {y}");
    assert!(x + y > 0);
}
