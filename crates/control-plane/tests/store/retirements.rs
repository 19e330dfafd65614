//! Retirement sessions: the id is claimed once, one open retirement per resource, each
//! guarded transition is won by exactly one of several writers, the drain guard holds while
//! a delivery is open, and advancers racing on several handles walk every state once (with
//! a negative control that drops the guard and shows the walk repeating states).

use std::collections::HashMap;
use std::sync::Arc;

use futures::future::join_all;
use switchyard_control_plane::clock::ManualClock;
use switchyard_control_plane::delivery::{DeliveryConfig, DeliveryContext};
use switchyard_control_plane::retirement::advance;
use switchyard_control_plane::store::{
    DueScope, FinishedBy, Inserted, NewRetirement, RetirementChange, Store, Transition,
};
use switchyard_protocol::{
    DlqDisposition, FlowMode, ResourceKind, RetirementImpact, RetirementRequest, RetirementState,
};

use crate::support::{Backend, T0, TENANT, accept, conformance, route, success};

conformance!(
    a_retirement_id_is_claimed_once,
    one_writer_wins_each_transition,
    the_drain_guard_holds_while_a_delivery_is_open,
    racing_advancers_enter_each_state_once,
    without_the_guard_racing_advancers_repeat_states,
);

fn request(kind: ResourceKind, name: &str) -> RetirementRequest {
    RetirementRequest {
        kind,
        name: name.to_owned(),
        grace_seconds: 0,
        cascade_flows: true,
        dlq: DlqDisposition::Keep,
        dry_run: false,
    }
}

async fn insert(store: Arc<dyn Store>, id: &str, request: &RetirementRequest) -> Inserted {
    let mut tx = store.begin().await.unwrap();
    let impact = RetirementImpact::default();
    let inserted = tx
        .insert_retirement(&NewRetirement {
            tenant: TENANT,
            id,
            fingerprint: b"fp",
            request,
            state: RetirementState::Draining,
            blockers: &[],
            impact: &impact,
            now: T0,
        })
        .await
        .unwrap();
    tx.commit().await.unwrap();
    inserted
}

/// `from → to` in a unit of work of its own; whether this writer won.
async fn change(
    store: Arc<dyn Store>,
    id: &str,
    from: RetirementState,
    to: RetirementState,
    require_drained: bool,
) -> bool {
    let mut tx = store.begin().await.unwrap();
    let impact = RetirementImpact::default();
    let won = tx
        .change_retirement(&RetirementChange {
            tenant: TENANT,
            id,
            from,
            to,
            blockers: &[],
            impact: &impact,
            cascaded_flows: &[],
            enabled_before: None,
            drain_eta: None,
            delete_at: None,
            require_drained,
            now: T0 + 1,
            unguarded: false,
        })
        .await
        .unwrap();
    tx.commit().await.unwrap();
    won
}

fn entered(history: &[(RetirementState, i64)]) -> HashMap<RetirementState, usize> {
    let mut counts = HashMap::new();
    for (state, _) in history {
        *counts.entry(*state).or_default() += 1;
    }
    counts
}

async fn a_retirement_id_is_claimed_once(b: &Backend) {
    let handles = [b.open().await, b.open().await];
    route(&handles[0], FlowMode::AsyncInline, 1).await;
    let target = request(ResourceKind::Target, "tg");
    let copies = (0..6).map(|i| {
        let store = handles[i % 2].clone();
        let target = target.clone();
        tokio::spawn(async move { insert(store, "ret-1", &target).await })
    });
    let outcomes: Vec<Inserted> = join_all(copies)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        outcomes.iter().filter(|o| **o == Inserted::Created).count(),
        1,
        "{outcomes:?}"
    );
    assert!(
        outcomes
            .iter()
            .all(|o| matches!(o, Inserted::Created | Inserted::IdTaken))
    );
    // Another id for the same resource while the first is open.
    assert_eq!(
        insert(handles[1].clone(), "ret-2", &target).await,
        Inserted::ResourceRetiring
    );
    let row = handles[0]
        .retirement(TENANT, "ret-1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.history.len(), 1, "one creation, one history entry");
    assert_eq!(row.fingerprint, b"fp");
    // Once it is final, the resource may be retired again.
    assert!(
        change(
            handles[0].clone(),
            "ret-1",
            RetirementState::Draining,
            RetirementState::Cancelled,
            false
        )
        .await
    );
    assert_eq!(
        insert(handles[1].clone(), "ret-2", &target).await,
        Inserted::Created
    );
}

async fn one_writer_wins_each_transition(b: &Backend) {
    let handles = [b.open().await, b.open().await, b.open().await];
    route(&handles[0], FlowMode::AsyncInline, 1).await;
    insert(
        handles[0].clone(),
        "ret-1",
        &request(ResourceKind::Endpoint, "ep"),
    )
    .await;
    for (from, to) in [
        (RetirementState::Draining, RetirementState::Disabled),
        (RetirementState::Disabled, RetirementState::Scheduled),
        (RetirementState::Scheduled, RetirementState::Deleted),
    ] {
        let racers = (0..6).map(|i| {
            let store = handles[i % 3].clone();
            tokio::spawn(async move { change(store, "ret-1", from, to, false).await })
        });
        let won = join_all(racers)
            .await
            .into_iter()
            .map(Result::unwrap)
            .filter(|w| *w)
            .count();
        assert_eq!(won, 1, "{from:?} → {to:?} is won once");
    }
    let row = handles[1]
        .retirement(TENANT, "ret-1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.state, RetirementState::Deleted);
    let states: Vec<RetirementState> = row.history.iter().map(|(s, _)| *s).collect();
    assert_eq!(
        states,
        [
            RetirementState::Draining,
            RetirementState::Disabled,
            RetirementState::Scheduled,
            RetirementState::Deleted
        ]
    );
    // A final retirement takes no transition, not even a cancel.
    assert!(
        !change(
            handles[2].clone(),
            "ret-1",
            RetirementState::Deleted,
            RetirementState::Cancelled,
            false
        )
        .await
    );
    assert!(
        !change(
            handles[2].clone(),
            "ret-1",
            RetirementState::Scheduled,
            RetirementState::Cancelled,
            false
        )
        .await
    );
}

async fn the_drain_guard_holds_while_a_delivery_is_open(b: &Backend) {
    let store = b.open().await;
    route(&store, FlowMode::AsyncInline, 1).await;
    accept(&store, None, T0).await;
    insert(store.clone(), "ret-1", &request(ResourceKind::Target, "tg")).await;
    let facts = store
        .retirement_facts(TENANT, ResourceKind::Target, "tg")
        .await
        .unwrap();
    assert_eq!(facts.pending_count(), 1);
    assert_eq!(facts.flows, ["fl-0"]);
    assert!(
        !change(
            store.clone(),
            "ret-1",
            RetirementState::Draining,
            RetirementState::Disabled,
            true
        )
        .await,
        "a pending delivery holds the drain"
    );
    let claimed = store
        .claim_due(DueScope::Direct, T0, 10, "w", 1_000)
        .await
        .unwrap();
    assert!(
        !change(
            store.clone(),
            "ret-1",
            RetirementState::Draining,
            RetirementState::Disabled,
            true
        )
        .await,
        "an attempt in flight holds it too"
    );
    for c in claimed {
        assert!(
            store
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
    }
    assert!(
        change(
            store.clone(),
            "ret-1",
            RetirementState::Draining,
            RetirementState::Disabled,
            true
        )
        .await
    );
}

/// A delivery context of its own on `store` (another replica's worker), with `clock`.
fn advancer(store: Arc<dyn Store>, clock: &ManualClock, unguarded: bool) -> Arc<DeliveryContext> {
    let config = DeliveryConfig {
        unguarded_retirement: unguarded,
        ..DeliveryConfig::default()
    };
    Arc::new(DeliveryContext::new(config, store, Arc::new(clock.clone())))
}

/// Creates a retirement of the endpoint `ep` (its flows cascaded, no grace) through the
/// real start, then lets `racers` advancers on their own handles walk it concurrently.
async fn race(b: &Backend, unguarded: bool) -> HashMap<RetirementState, usize> {
    let clock = ManualClock::new(T0);
    let handles = [b.open().await, b.open().await, b.open().await];
    route(&handles[0], FlowMode::AsyncInline, 2).await;
    let ctxs: Vec<_> = handles
        .iter()
        .map(|h| advancer(h.clone(), &clock, unguarded))
        .collect();
    let req = request(ResourceKind::Endpoint, "ep");
    assert!(matches!(
        advance::start(&ctxs[0], TENANT, "ret-1", b"fp", &req)
            .await
            .unwrap(),
        advance::Started::Created(_)
    ));
    for _ in 0..6 {
        clock.advance_ms(10);
        let racers = ctxs
            .iter()
            .cloned()
            .map(|ctx| tokio::spawn(async move { advance::advance(&ctx, TENANT, "ret-1").await }));
        for r in join_all(racers).await {
            // The unguarded copies may trip over each other's deletes; the guarded never.
            let outcome = r.unwrap();
            if !unguarded {
                outcome.unwrap();
            }
        }
    }
    let row = handles[1]
        .retirement(TENANT, "ret-1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.state, RetirementState::Deleted);
    if !unguarded {
        assert_eq!(row.cascaded_flows, ["fl-0", "fl-1"]);
        let tombstones = handles[2]
            .tombstones(TENANT, ResourceKind::Endpoint, "ep")
            .await
            .unwrap();
        assert_eq!(tombstones.len(), 1, "one delete, one tombstone");
        for flow in ["fl-0", "fl-1"] {
            let flows = handles[2]
                .tombstones(TENANT, ResourceKind::Flow, flow)
                .await
                .unwrap();
            assert_eq!(flows.len(), 1, "{flow} retired once");
        }
        assert!(
            handles[0]
                .get_resource(TENANT, ResourceKind::Endpoint, "ep")
                .await
                .unwrap()
                .is_none()
        );
    }
    entered(&row.history)
}

async fn racing_advancers_enter_each_state_once(b: &Backend) {
    let entered = race(b, false).await;
    for state in [
        RetirementState::Draining,
        RetirementState::Disabled,
        RetirementState::Scheduled,
        RetirementState::Deleted,
    ] {
        assert_eq!(entered.get(&state), Some(&1), "{state:?}: {entered:?}");
    }
}

async fn without_the_guard_racing_advancers_repeat_states(b: &Backend) {
    let entered = race(b, true).await;
    assert!(
        entered.values().any(|n| *n > 1),
        "without the guard, racing advancers enter some state more than once: {entered:?}"
    );
}
