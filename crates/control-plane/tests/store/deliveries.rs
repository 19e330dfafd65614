//! Deliveries: each due delivery is claimed by one handle, an outcome is recorded once under
//! its lease, an expired lease is counted once, the last failure lands in the DLQ.

use std::collections::HashSet;
use std::sync::Arc;

use futures::future::join_all;
use switchyard_control_plane::store::{DueScope, Fence, Finish, FinishedBy, Store, Transition};
use switchyard_protocol::{AttemptOutcome, DeliveryState, DlqFilter, DlqGroupBy, FlowMode, Hop};

use crate::support::{Backend, T0, TENANT, accept, conformance, failure, route, success};

conformance!(
    each_due_delivery_is_claimed_by_one_handle,
    an_outcome_is_recorded_once_under_its_lease,
    outcomes_recorded_together_are_each_fenced,
    an_expired_lease_is_counted_once,
    the_last_failure_moves_to_the_dlq_and_the_counts_agree,
    relay_claims_take_only_their_scope,
    each_hop_counts_its_own_attempts,
);

async fn events(store: &Arc<dyn Store>, n: usize) {
    for _ in 0..n {
        accept(store, None, T0).await;
    }
}

async fn each_due_delivery_is_claimed_by_one_handle(b: &Backend) {
    let first = b.open().await;
    route(&first, FlowMode::AsyncInline, 1).await;
    events(&first, 100).await;
    let mut handles = vec![first];
    for _ in 0..3 {
        handles.push(b.open().await);
    }
    let workers = handles.into_iter().enumerate().map(|(i, store)| {
        tokio::spawn(async move {
            let owner = format!("worker-{i}");
            let mut mine = Vec::new();
            loop {
                let batch = store
                    .claim_due(DueScope::Direct, T0, 7, &owner, 1_000)
                    .await
                    .unwrap();
                if batch.is_empty() {
                    return mine;
                }
                mine.extend(batch.into_iter().map(|c| c.delivery_id));
            }
        })
    });
    let claimed: Vec<String> = join_all(workers)
        .await
        .into_iter()
        .flat_map(Result::unwrap)
        .collect();
    let distinct: HashSet<&String> = claimed.iter().collect();
    assert_eq!(claimed.len(), 100, "every delivery claimed once");
    assert_eq!(distinct.len(), 100);
}

async fn an_outcome_is_recorded_once_under_its_lease(b: &Backend) {
    let (store, other) = (b.open().await, b.open().await);
    route(&store, FlowMode::AsyncInline, 1).await;
    events(&store, 1).await;
    let c = store
        .claim_due(DueScope::Direct, T0, 10, "w", 1_000)
        .await
        .unwrap()
        .pop()
        .unwrap();
    assert_eq!(c.lease_until, T0 + 1_000 + 1_000, "target timeout + margin");
    let wrong = Fence {
        lease_token: c.lease_token + 1,
        ..c.fence()
    };
    assert!(
        !other
            .finish_attempt(
                wrong,
                &success(),
                FinishedBy::Sender,
                Transition::Succeeded,
                T0
            )
            .await
            .unwrap()
    );
    assert!(
        other
            .finish_attempt(
                c.fence(),
                &success(),
                FinishedBy::Sender,
                Transition::Succeeded,
                T0
            )
            .await
            .unwrap()
    );
    assert!(
        !store
            .finish_attempt(
                c.fence(),
                &failure(),
                FinishedBy::Sender,
                Transition::Dead,
                T0
            )
            .await
            .unwrap(),
        "a second outcome for the same lease is refused"
    );
    let d = store
        .delivery(TENANT, &c.delivery_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(d.state, DeliveryState::Succeeded);
    assert_eq!(d.attempts.len(), 1);
    assert_eq!(d.attempts[0].outcome, AttemptOutcome::Succeeded);
    assert_eq!(d.attempts[0].status_code, Some(200));
}

/// The worker's group commit (`finish_attempts`): each outcome of a batch is its own fenced
/// update, so one fenced out does not carry the others with it, and two handles recording
/// the same batch at once record each outcome once.
async fn outcomes_recorded_together_are_each_fenced(b: &Backend) {
    let (store, other) = (b.open().await, b.open().await);
    route(&store, FlowMode::AsyncInline, 1).await;
    events(&store, 3).await;
    let claimed = store
        .claim_due(DueScope::Direct, T0, 10, "w", 1_000)
        .await
        .unwrap();
    let [c1, c2, c3] = claimed.as_slice() else {
        panic!("three claims: {claimed:?}")
    };
    // c2's outcome is already recorded (say, by the reaper after its lease expired).
    assert!(
        other
            .finish_attempt(
                c2.fence(),
                &failure(),
                FinishedBy::Reaper,
                Transition::Dead,
                T0
            )
            .await
            .unwrap()
    );
    let (ok, failed) = (success(), failure());
    let stale = Fence {
        lease_token: c3.lease_token - 1,
        ..c3.fence()
    };
    let item = |fence, result, next| Finish {
        fence,
        result,
        finished_by: FinishedBy::Sender,
        next,
    };
    let batch = [
        item(c1.fence(), &ok, Transition::Succeeded),
        item(c2.fence(), &ok, Transition::Succeeded),
        item(stale, &ok, Transition::Succeeded),
        item(c3.fence(), &failed, Transition::RetryAt(T0 + 10_000)),
    ];
    let answers: Vec<bool> = store
        .finish_attempts(&batch, T0)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(answers, [true, false, false, true]);
    let state = |id: String| {
        let store = store.clone();
        async move { store.delivery(TENANT, &id).await.unwrap().unwrap() }
    };
    let (d1, d2, d3) = (
        state(c1.delivery_id.clone()).await,
        state(c2.delivery_id.clone()).await,
        state(c3.delivery_id.clone()).await,
    );
    assert_eq!(d1.state, DeliveryState::Succeeded);
    assert_eq!(d2.state, DeliveryState::Dead, "the reaper's outcome stands");
    assert_eq!(d2.attempts[0].outcome, AttemptOutcome::Failed);
    assert_eq!(d3.state, DeliveryState::Pending);
    assert_eq!(d3.attempts.len(), 1);

    // Two handles recording the same outcomes at once: each recorded by one of them.
    let again = store
        .claim_due(DueScope::Direct, T0 + 10_000, 10, "w", 1_000)
        .await
        .unwrap();
    assert_eq!(again.len(), 1, "c3, due again");
    events(&store, 4).await;
    let mut claimed = again;
    claimed.extend(
        store
            .claim_due(DueScope::Direct, T0 + 10_000, 10, "w", 1_000)
            .await
            .unwrap(),
    );
    assert_eq!(claimed.len(), 5);
    let batch: Vec<Finish<'_>> = claimed
        .iter()
        .map(|c| item(c.fence(), &ok, Transition::Succeeded))
        .collect();
    let (a, b) = tokio::join!(
        store.finish_attempts(&batch, T0 + 10_000),
        other.finish_attempts(&batch, T0 + 10_000)
    );
    for (i, (a, b)) in a.into_iter().zip(b).enumerate() {
        let (a, b) = (a.unwrap(), b.unwrap());
        assert!(a ^ b, "outcome {i} recorded once: {a} {b}");
    }
}

async fn an_expired_lease_is_counted_once(b: &Backend) {
    let handles = [b.open().await, b.open().await, b.open().await];
    route(&handles[0], FlowMode::AsyncInline, 1).await;
    events(&handles[0], 1).await;
    let c = handles[0]
        .claim_due(DueScope::Direct, T0, 10, "w", 1_000)
        .await
        .unwrap()
        .pop()
        .unwrap();
    assert!(
        handles[1]
            .expired_leases(c.lease_until - 1, 10)
            .await
            .unwrap()
            .is_empty()
    );
    let reapers = handles.iter().map(|store| {
        let store = store.clone();
        tokio::spawn(async move {
            let mut counted = 0;
            for lease in store.expired_leases(c.lease_until, 10).await.unwrap() {
                assert_eq!(
                    (lease.hop, lease.hop_number, lease.max_attempts),
                    (Hop::ControlPlaneWebhook, 1, 5)
                );
                let next = Transition::RetryAt(c.lease_until + 10_000);
                if store
                    .finish_attempt(
                        lease.fence(),
                        &failure(),
                        FinishedBy::Reaper,
                        next,
                        c.lease_until,
                    )
                    .await
                    .unwrap()
                {
                    counted += 1;
                }
            }
            counted
        })
    });
    let counted: u32 = join_all(reapers)
        .await
        .into_iter()
        .map(Result::unwrap)
        .sum();
    assert_eq!(counted, 1, "three reapers, one count");
    let d = handles[0]
        .delivery(TENANT, &c.delivery_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((d.state, d.attempts_made), (DeliveryState::Pending, 1));
    // Due again at the retry time, as attempt 2.
    assert!(
        handles[0]
            .claim_due(DueScope::Direct, c.lease_until + 9_999, 10, "w", 1_000)
            .await
            .unwrap()
            .is_empty()
    );
    let again = handles[0]
        .claim_due(DueScope::Direct, c.lease_until + 10_000, 10, "w", 1_000)
        .await
        .unwrap();
    assert_eq!(again[0].number, 2);
}

async fn the_last_failure_moves_to_the_dlq_and_the_counts_agree(b: &Backend) {
    let store = b.open().await;
    route(&store, FlowMode::AsyncInline, 3).await;
    events(&store, 4).await;
    let claimed = store
        .claim_due(DueScope::Direct, T0, 100, "w", 1_000)
        .await
        .unwrap();
    assert_eq!(claimed.len(), 12);
    for (i, c) in claimed.iter().enumerate() {
        let now = T0 + i as i64;
        assert!(
            store
                .finish_attempt(
                    c.fence(),
                    &failure(),
                    FinishedBy::Sender,
                    Transition::Dead,
                    now
                )
                .await
                .unwrap()
        );
    }
    let page = store
        .dlq_page(TENANT, &DlqFilter::default(), None, 100)
        .await
        .unwrap();
    assert_eq!(page.len(), 12);
    assert!(
        page.windows(2).all(|w| w[0].dead_at >= w[1].dead_at),
        "newest first"
    );
    let rest = store
        .dlq_page(
            TENANT,
            &DlqFilter::default(),
            Some((
                page[4].dead_at.timestamp_millis(),
                page[4].delivery_id.clone(),
            )),
            100,
        )
        .await
        .unwrap();
    assert_eq!(rest.len(), 7, "the page after the fifth entry");
    let by_target = store
        .dlq_counts(TENANT, &DlqFilter::default(), DlqGroupBy::Target)
        .await
        .unwrap();
    assert_eq!(by_target.len(), 1);
    assert_eq!(
        (by_target[0].target.as_deref(), by_target[0].count),
        (Some("tg"), 12)
    );
    let filtered = DlqFilter {
        flow: Some("fl-1".into()),
        ..DlqFilter::default()
    };
    let by_class = store
        .dlq_counts(TENANT, &filtered, DlqGroupBy::ErrorClass)
        .await
        .unwrap();
    assert_eq!(by_class.len(), 1);
    assert_eq!(
        (by_class[0].error_class.as_deref(), by_class[0].count),
        (Some("http_5xx"), 4)
    );
}

async fn relay_claims_take_only_their_scope(b: &Backend) {
    let store = b.open().await;
    route(&store, FlowMode::AsyncRelay, 1).await;
    events(&store, 2).await;
    assert!(
        store
            .claim_due(DueScope::Direct, T0, 10, "w", 1_000)
            .await
            .unwrap()
            .is_empty(),
        "the control plane's worker leaves relay deliveries to their edge"
    );
    let other_edge = DueScope::Relay {
        tenant: TENANT,
        edge: "edge-2",
    };
    assert!(
        store
            .claim_due(other_edge, T0, 10, "edge:edge-2", 1_000)
            .await
            .unwrap()
            .is_empty()
    );
    let unpicked = |due_before| DueScope::UnpickedRelays { due_before };
    assert!(
        store
            .claim_due(unpicked(T0 - 1), T0 + 30_000, 10, "control-plane", 1_000)
            .await
            .unwrap()
            .is_empty(),
        "not due long enough to count as unpicked"
    );
    let edge = DueScope::Relay {
        tenant: TENANT,
        edge: "edge-1",
    };
    let leased = store
        .claim_due(edge, T0, 1, "edge:edge-1", 1_000)
        .await
        .unwrap();
    assert_eq!(leased.len(), 1);
    assert_eq!(leased[0].edge.as_deref(), Some("edge-1"));
    let late = store
        .claim_due(unpicked(T0), T0 + 30_000, 10, "control-plane", 1_000)
        .await
        .unwrap();
    assert_eq!(late.len(), 1, "the other one no edge took");
    assert_ne!(late[0].delivery_id, leased[0].delivery_id);
    let attempt = store
        .relayed_attempt(TENANT, &leased[0].attempt_id, "edge:edge-1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (attempt.hop, attempt.hop_number, attempt.outcome),
        (Hop::EdgeWebhook, 1, AttemptOutcome::InFlight)
    );
    assert!(
        store
            .relayed_attempt(TENANT, &leased[0].attempt_id, "edge:edge-2")
            .await
            .unwrap()
            .is_none(),
        "another edge cannot report on it"
    );
}

/// A relay delivery's hand-offs to the edge and the edge's sends count apart; the DLQ names
/// the hop whose budget ran out.
async fn each_hop_counts_its_own_attempts(b: &Backend) {
    let store = b.open().await;
    route(&store, FlowMode::AsyncRelay, 1).await;
    events(&store, 1).await;
    let edge = DueScope::Relay {
        tenant: TENANT,
        edge: "edge-1",
    };
    // Two hand-offs no edge took, then the edge's five sends.
    let mut seen = Vec::new();
    for round in 0..7 {
        let now = T0 + round;
        let scope = if round < 2 {
            DueScope::UnpickedRelays { due_before: now }
        } else {
            edge
        };
        let c = store
            .claim_due(scope, now, 10, "x", 1_000)
            .await
            .unwrap()
            .pop()
            .unwrap();
        seen.push((c.number, c.hop, c.hop_number));
        let last = round == 6;
        let next = if last {
            Transition::Dead
        } else {
            Transition::RetryAt(now + 1)
        };
        assert!(
            store
                .finish_attempt(c.fence(), &failure(), FinishedBy::Sender, next, now)
                .await
                .unwrap()
        );
    }
    use Hop::{ControlPlaneEdge as Handoff, EdgeWebhook as Send};
    assert_eq!(
        seen,
        [
            (1, Handoff, 1),
            (2, Handoff, 2),
            (3, Send, 1),
            (4, Send, 2),
            (5, Send, 3),
            (6, Send, 4),
            (7, Send, 5)
        ]
    );
    let entry = store
        .dlq_page(TENANT, &DlqFilter::default(), None, 10)
        .await
        .unwrap()
        .pop()
        .unwrap();
    assert_eq!((entry.attempts, entry.exhausted_hop), (7, Some(Send)));
    let d = store
        .delivery(TENANT, &entry.delivery_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(d.exhausted_hop, Some(Send));
    let hops: Vec<(Hop, u32)> = d.attempts.iter().map(|a| (a.hop, a.hop_attempt)).collect();
    assert_eq!(hops[..3], [(Handoff, 1), (Handoff, 2), (Send, 1)]);
}
