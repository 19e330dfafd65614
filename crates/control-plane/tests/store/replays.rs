//! Replay sessions: one session per id, one re-delivery per original whichever sessions
//! race for it, cancelling withdraws what was not sent.

use std::collections::HashMap;
use std::sync::Arc;

use futures::future::join_all;
use switchyard_control_plane::store::{
    DueScope, FinishedBy, NewReplay, ReplayRow, ReplayStart, Store, Transition,
};
use switchyard_protocol::{DeliveryState, DlqFilter, FlowMode, ReplayRequest, ReplaySelection};

use crate::support::{Backend, T0, TENANT, accept, conformance, failure, route};

conformance!(
    a_session_is_created_once,
    racing_sessions_replay_each_original_once,
    cancelling_withdraws_what_was_not_sent,
);

/// `n` dead deliveries.
async fn dead(store: &Arc<dyn Store>, n: usize) {
    route(store, FlowMode::AsyncInline, 1).await;
    for _ in 0..n {
        accept(store, None, T0).await;
    }
    for c in store
        .claim_due(DueScope::Direct, T0, 100, "w", 1_000)
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
                    T0
                )
                .await
                .unwrap()
        );
    }
}

fn everything() -> ReplayRequest {
    ReplayRequest {
        selection: ReplaySelection::Filter(DlqFilter::default()),
        rate_per_s: None,
        dry_run: false,
    }
}

async fn start(store: Arc<dyn Store>, id: &str, fingerprint: &[u8]) -> ReplayStart {
    let request = everything();
    store
        .start_replay(&NewReplay {
            tenant: TENANT,
            id,
            fingerprint,
            request: &request,
            filter_limit: 1_000,
            max_attempts: 5,
            now: T0 + 1_000,
            overwrite: false,
        })
        .await
        .unwrap()
}

fn replayed(row: &ReplayRow) -> Vec<&str> {
    row.items
        .iter()
        .filter_map(|i| i.delivery_id.as_deref())
        .collect()
}

async fn a_session_is_created_once(b: &Backend) {
    let handles = [b.open().await, b.open().await];
    dead(&handles[0], 6).await;
    assert_eq!(
        handles[1]
            .count_replayable(TENANT, &everything(), 1_000)
            .await
            .unwrap(),
        6
    );
    let copies = (0..8).map(|i| tokio::spawn(start(handles[i % 2].clone(), "s-1", b"fp")));
    let starts: Vec<ReplayStart> = join_all(copies)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let created: Vec<&ReplayRow> = starts
        .iter()
        .filter_map(|s| match s {
            ReplayStart::Created(row) => Some(row),
            ReplayStart::Exists { .. } => None,
        })
        .collect();
    assert_eq!(created.len(), 1, "one copy creates the session");
    assert_eq!(replayed(created[0]).len(), 6);
    for s in &starts {
        if let ReplayStart::Exists {
            fingerprint,
            session,
        } = s
        {
            assert_eq!(fingerprint, b"fp");
            assert_eq!(
                replayed(session),
                replayed(created[0]),
                "the copies see the whole session"
            );
        }
    }
    assert!(
        handles[0]
            .dlq_page(TENANT, &DlqFilter::default(), None, 100)
            .await
            .unwrap()
            .is_empty(),
        "every original left the DLQ"
    );
    let listed = handles[1].list_replays(TENANT, None, 10).await.unwrap();
    assert_eq!(listed.len(), 1);
}

async fn racing_sessions_replay_each_original_once(b: &Backend) {
    let handles = [b.open().await, b.open().await];
    dead(&handles[0], 6).await;
    let racers = (0..4).map(|i| {
        let id = format!("s-{i}");
        let store = handles[i % 2].clone();
        tokio::spawn(async move { start(store, &id, b"fp").await })
    });
    let mut by_original: HashMap<String, usize> = HashMap::new();
    for s in join_all(racers).await.into_iter().map(Result::unwrap) {
        let ReplayStart::Created(row) = s else {
            panic!("distinct ids are distinct sessions");
        };
        for item in &row.items {
            if item.delivery_id.is_some() {
                *by_original.entry(item.original_id.clone()).or_default() += 1;
            } else {
                assert!(
                    item.skip_reason
                        .as_deref()
                        .unwrap()
                        .starts_with("not in the DLQ")
                );
            }
        }
    }
    assert_eq!(by_original.len(), 6);
    assert!(by_original.values().all(|n| *n == 1), "{by_original:?}");
}

async fn cancelling_withdraws_what_was_not_sent(b: &Backend) {
    let store = b.open().await;
    dead(&store, 3).await;
    let ReplayStart::Created(row) = start(store.clone(), "s-c", b"fp").await else {
        panic!("created");
    };
    // One re-delivery is sent (in flight) before the cancel; two are still pending.
    let sent = store
        .claim_due(DueScope::Direct, T0 + 1_000, 1, "w", 1_000)
        .await
        .unwrap()
        .pop()
        .unwrap();
    let mut tx = store.begin().await.unwrap();
    let cancelled = tx
        .cancel_replay(TENANT, "s-c", T0 + 2_000)
        .await
        .unwrap()
        .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(cancelled.cancelled_at, Some(T0 + 2_000));
    let states: Vec<Option<DeliveryState>> = cancelled.items.iter().map(|i| i.state).collect();
    assert_eq!(
        states
            .iter()
            .filter(|s| **s == Some(DeliveryState::Cancelled))
            .count(),
        2
    );
    assert_eq!(
        store
            .dlq_page(TENANT, &DlqFilter::default(), None, 100)
            .await
            .unwrap()
            .len(),
        2,
        "the withdrawn ones' originals are back in the DLQ"
    );
    // The one in flight fails: not retried, withdrawn too, its original back in the DLQ.
    assert!(
        store
            .finish_attempt(
                sent.fence(),
                &failure(),
                FinishedBy::Sender,
                Transition::RetryAt(T0 + 60_000),
                T0 + 3_000
            )
            .await
            .unwrap()
    );
    let d = store
        .delivery(TENANT, &sent.delivery_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(d.state, DeliveryState::Cancelled);
    assert_eq!(
        store
            .dlq_page(TENANT, &DlqFilter::default(), None, 100)
            .await
            .unwrap()
            .len(),
        3
    );
    let mut tx = store.begin().await.unwrap();
    assert!(
        tx.cancel_replay(TENANT, "nope", T0)
            .await
            .unwrap()
            .is_none()
    );
    drop(tx);
    assert_eq!(replayed(&row).len(), 3);
}
