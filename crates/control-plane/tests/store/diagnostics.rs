//! Diagnostics: each check finds what it looks for and nothing of another tenant's; the
//! requeue takes back only an expired lease, once, whichever handles race for it; the DLQ
//! recount leaves exact counters while deliveries keep dying on other handles.

use std::sync::Arc;

use futures::future::join_all;
use switchyard_control_plane::delivery::http::AttemptResult;
use switchyard_control_plane::store::{
    Bounds, DueScope, FinishedBy, NewReplay, Requeue, Store, Transition,
};
use switchyard_protocol::{
    AttemptOutcome, DeliveryState, DlqFilter, DlqGroupBy, ErrorClass, FlowMode, ReplayRequest,
    ReplaySelection,
};

use crate::support::{Backend, T0, TENANT, accept, conformance, failure, route, success};

conformance!(
    a_requeue_takes_back_only_an_expired_lease_once,
    the_recount_leaves_exact_counters_while_deliveries_die,
    waiting_relays_and_disabled_backlogs_are_found_and_bounded,
    failing_targets_and_overdue_replays_are_found,
);

fn requeued() -> AttemptResult {
    AttemptResult::failed(
        ErrorClass::Timeout,
        "lease expired: requeued by an operator",
    )
}

async fn requeue(store: &Arc<dyn Store>, id: &str, attempt: u32, now: i64) -> Requeue {
    let mut tx = store.begin().await.unwrap();
    let outcome = tx
        .requeue_stuck(TENANT, id, attempt, &requeued(), now)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    outcome
}

async fn a_requeue_takes_back_only_an_expired_lease_once(b: &Backend) {
    let store = b.open().await;
    route(&store, FlowMode::AsyncInline, 1).await;
    accept(&store, None, T0).await;
    let c = store
        .claim_due(DueScope::Direct, T0, 10, "w", 1_000)
        .await
        .unwrap()
        .pop()
        .unwrap();
    let id = c.delivery_id.clone();
    let expiry = c.lease_until;
    assert!(
        store
            .stuck_deliveries(TENANT, expiry - 1, 20)
            .await
            .unwrap()
            .is_empty()
    );
    let stuck = store.stuck_deliveries(TENANT, expiry, 20).await.unwrap();
    assert_eq!(stuck.len(), 1);
    assert_eq!(
        (stuck[0].id.as_str(), stuck[0].attempts_made),
        (id.as_str(), 1)
    );
    assert!(
        store
            .stuck_deliveries("other", expiry, 20)
            .await
            .unwrap()
            .is_empty()
    );

    assert_eq!(
        requeue(&store, &id, 1, expiry - 1).await,
        Requeue::NotStuck,
        "lease live"
    );
    assert_eq!(
        requeue(&store, &id, 2, expiry + 1).await,
        Requeue::NotStuck,
        "other attempt"
    );
    assert_eq!(
        requeue(&store, "dlv_nope", 1, expiry + 1).await,
        Requeue::Absent
    );

    // Several handles requeue at once: one takes it.
    let mut handles = Vec::new();
    for _ in 0..4 {
        handles.push(b.open().await);
    }
    let outcomes = join_all(handles.into_iter().map(|h| {
        let id = id.clone();
        tokio::spawn(async move { requeue(&h, &id, 1, expiry + 1).await })
    }))
    .await;
    let taken = outcomes
        .iter()
        .filter(|o| matches!(o.as_ref().unwrap(), Requeue::Requeued { .. }))
        .count();
    assert_eq!(taken, 1, "{outcomes:?}");
    // The sender reporting late is fenced out: the attempt is counted once.
    assert!(
        !store
            .finish_attempt(
                c.fence(),
                &success(),
                FinishedBy::Sender,
                Transition::Succeeded,
                expiry + 2
            )
            .await
            .unwrap()
    );
    let d = store.delivery(TENANT, &id).await.unwrap().unwrap();
    assert_eq!(d.state, DeliveryState::Pending);
    assert_eq!(d.attempts.len(), 1);
    assert_eq!(d.attempts[0].outcome, AttemptOutcome::Failed);
    assert_eq!(d.attempts[0].error_class, Some(ErrorClass::Timeout));
    let again = store
        .claim_due(DueScope::Direct, expiry + 1, 10, "w2", 1_000)
        .await
        .unwrap()
        .pop()
        .expect("due again at once");
    assert_eq!((again.number, again.hop_number), (2, 2));
    assert!(
        store
            .stuck_deliveries(TENANT, expiry + 1, 20)
            .await
            .unwrap()
            .is_empty()
    );
}

async fn the_recount_leaves_exact_counters_while_deliveries_die(b: &Backend) {
    let store = b.open().await;
    route(&store, FlowMode::AsyncInline, 1).await;
    for _ in 0..40 {
        accept(&store, None, T0).await;
    }
    let mut claimed = store
        .claim_due(DueScope::Direct, T0, 100, "w", 1_000)
        .await
        .unwrap();
    assert_eq!(claimed.len(), 40);
    for c in claimed.drain(..10) {
        assert!(
            store
                .finish_attempt(
                    c.fence(),
                    &failure(),
                    FinishedBy::Sender,
                    Transition::Dead,
                    T0
                )
                .await
                .unwrap()
        );
    }
    assert!(
        store.dlq_drift(TENANT, 20).await.unwrap().is_empty(),
        "triggers keep them exact"
    );
    b.tamper("UPDATE dlq_counts SET count = count + 3 WHERE tenant = 'acme'")
        .await;
    let drift = store.dlq_drift(TENANT, 20).await.unwrap();
    assert_eq!(drift.len(), 1);
    assert_eq!((drift[0].counted, drift[0].rows), (13, 10));
    assert!(store.dlq_drift("other", 20).await.unwrap().is_empty());

    // The other 30 die on one handle while another recounts, again and again.
    let dying = b.open().await;
    let killer = tokio::spawn(async move {
        for c in claimed {
            assert!(
                dying
                    .finish_attempt(
                        c.fence(),
                        &failure(),
                        FinishedBy::Sender,
                        Transition::Dead,
                        T0 + 1
                    )
                    .await
                    .unwrap()
            );
        }
    });
    let counting = b.open().await;
    let recounter = tokio::spawn(async move {
        let mut corrected = 0;
        for _ in 0..8 {
            let mut tx = counting.begin().await.unwrap();
            corrected += tx.recount_dlq(TENANT).await.unwrap().corrected;
            tx.commit().await.unwrap();
        }
        corrected
    });
    killer.await.unwrap();
    assert!(
        recounter.await.unwrap() >= 1,
        "the tampered group was corrected"
    );
    assert!(store.dlq_drift(TENANT, 20).await.unwrap().is_empty());
    let counts = store
        .dlq_counts(TENANT, &DlqFilter::default(), DlqGroupBy::Target)
        .await
        .unwrap();
    assert_eq!(counts.iter().map(|c| c.count).sum::<u64>(), 40);
    let mut tx = store.begin().await.unwrap();
    let last = tx.recount_dlq(TENANT).await.unwrap();
    tx.commit().await.unwrap();
    assert_eq!((last.dead, last.corrected), (40, 0));
}

async fn waiting_relays_and_disabled_backlogs_are_found_and_bounded(b: &Backend) {
    let store = b.open().await;
    route(&store, FlowMode::AsyncRelay, 1).await;
    accept(&store, None, T0).await;
    accept(&store, None, T0 + 5).await;
    let bounds = Bounds::default();
    let relays = store.waiting_relays(TENANT, bounds).await.unwrap();
    assert_eq!(relays.len(), 1);
    let r = &relays[0];
    assert_eq!(
        (r.subject.as_str(), r.count, r.oldest_at),
        ("edge-1", 2, T0)
    );
    assert_eq!((r.sample.len(), r.last_seen_at), (2, None));
    assert!(
        store
            .waiting_relays("other", bounds)
            .await
            .unwrap()
            .is_empty()
    );
    let tight = Bounds {
        sample: 1,
        count_cap: 1,
        subjects: 5,
    };
    let capped = store.waiting_relays(TENANT, tight).await.unwrap();
    assert_eq!((capped[0].count, capped[0].sample.len()), (1, 1));

    let seen = |store: Arc<dyn Store>| async move {
        store.waiting_relays(TENANT, bounds).await.unwrap()[0].last_seen_at
    };
    store.edge_seen(TENANT, "edge-1", T0 + 10).await.unwrap();
    assert_eq!(seen(store.clone()).await, Some(T0 + 10));
    store.edge_seen(TENANT, "edge-1", T0 + 500).await.unwrap();
    assert_eq!(
        seen(store.clone()).await,
        Some(T0 + 10),
        "written at most once a second"
    );
    store.edge_seen(TENANT, "edge-1", T0 + 2_000).await.unwrap();
    assert_eq!(seen(store.clone()).await, Some(T0 + 2_000));

    assert!(
        store
            .disabled_backlogs(TENANT, bounds)
            .await
            .unwrap()
            .is_empty()
    );
    b.tamper(
        "UPDATE resources SET status = '{\"enabled\": false, \"pending_deliveries\": 0}' \
         WHERE tenant = 'acme' AND kind = 'endpoint' AND name = 'ep'",
    )
    .await;
    let disabled = store.disabled_backlogs(TENANT, bounds).await.unwrap();
    assert_eq!(disabled.len(), 1);
    assert_eq!((disabled[0].subject.as_str(), disabled[0].count), ("ep", 2));
    assert!(
        store
            .disabled_backlogs("other", bounds)
            .await
            .unwrap()
            .is_empty()
    );
}

async fn failing_targets_and_overdue_replays_are_found(b: &Backend) {
    let store = b.open().await;
    route(&store, FlowMode::AsyncInline, 1).await;
    accept(&store, None, T0).await;
    accept(&store, None, T0).await;
    for c in store
        .claim_due(DueScope::Direct, T0, 10, "w", 1_000)
        .await
        .unwrap()
    {
        assert!(
            store
                .finish_attempt(
                    c.fence(),
                    &failure(),
                    FinishedBy::Sender,
                    Transition::Dead,
                    T0 + 1
                )
                .await
                .unwrap()
        );
    }
    let bounds = Bounds::default();
    let failing = store.failing_targets(TENANT, 2, bounds).await.unwrap();
    assert_eq!(failing.len(), 1);
    let f = &failing[0];
    assert_eq!(
        (f.name.as_str(), f.consecutive_failures, f.dead_in_run),
        ("tg", 2, 2)
    );
    assert_eq!(f.last_error_class.as_deref(), Some("http_5xx"));
    assert!(f.failing_since.is_some());
    assert!(
        store
            .failing_targets(TENANT, 3, bounds)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .failing_targets("other", 1, bounds)
            .await
            .unwrap()
            .is_empty()
    );

    let request = ReplayRequest {
        selection: ReplaySelection::Filter(DlqFilter::default()),
        rate_per_s: None,
        dry_run: false,
    };
    store
        .start_replay(&NewReplay {
            tenant: TENANT,
            id: "s-1",
            fingerprint: b"fp",
            request: &request,
            filter_limit: 100,
            max_attempts: 5,
            now: T0 + 100,
            overwrite: false,
        })
        .await
        .unwrap();
    assert!(
        store
            .overdue_replays(TENANT, T0 + 99, bounds)
            .await
            .unwrap()
            .is_empty()
    );
    let overdue = store
        .overdue_replays(TENANT, T0 + 100, bounds)
        .await
        .unwrap();
    assert_eq!(overdue.len(), 1);
    assert_eq!((overdue[0].subject.as_str(), overdue[0].count), ("s-1", 2));
    assert!(
        store
            .overdue_replays("other", T0 + 100, bounds)
            .await
            .unwrap()
            .is_empty()
    );
    let mut tx = store.begin().await.unwrap();
    tx.cancel_replay(TENANT, "s-1", T0 + 200).await.unwrap();
    tx.commit().await.unwrap();
    assert!(
        store
            .overdue_replays(TENANT, T0 + 300, bounds)
            .await
            .unwrap()
            .is_empty(),
        "a cancelled session is not stalled"
    );
}
