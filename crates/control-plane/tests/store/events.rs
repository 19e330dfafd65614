//! Events: concurrent copies with one event key make one event; a key frees up after the
//! window; a sync flow's first attempt is claimed in the event's own commit.

use futures::future::join_all;
use switchyard_control_plane::store::Accepted;
use switchyard_protocol::{DeliveryState, FlowMode};

use crate::support::{Backend, T0, TENANT, accept, conformance, route};

conformance!(
    copies_with_one_event_key_make_one_event,
    an_event_key_frees_up_after_the_window,
    a_sync_flow_claims_its_first_attempt_with_the_event,
);

async fn copies_with_one_event_key_make_one_event(b: &Backend) {
    let handles = [b.open().await, b.open().await];
    route(&handles[0], FlowMode::AsyncInline, 2).await;
    let copies = (0..16).map(|i| {
        let store = handles[i % 2].clone();
        tokio::spawn(async move { accept(&store, Some("order-42"), T0).await })
    });
    let results: Vec<_> = join_all(copies)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let new: Vec<&String> = results
        .iter()
        .filter_map(|(id, a)| matches!(a, Accepted::New { .. }).then_some(id))
        .collect();
    assert_eq!(new.len(), 1, "one copy is accepted");
    for (_, a) in &results {
        if let Accepted::Duplicate(existing) = a {
            assert_eq!(
                existing, new[0],
                "every other copy names the accepted event"
            );
        }
    }
    let found = handles[1]
        .events_by_key(TENANT, "order-42", None, 10)
        .await
        .unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].deliveries.len(), 2, "one delivery per flow");
}

async fn an_event_key_frees_up_after_the_window(b: &Backend) {
    let store = b.open().await;
    route(&store, FlowMode::AsyncInline, 1).await;
    let (first, a) = accept(&store, Some("k"), T0).await;
    assert!(matches!(a, Accepted::New { .. }));
    let window = 86_400_000;
    assert_eq!(
        store
            .event_key_holder(TENANT, "ep", "k", T0 - 1)
            .await
            .unwrap(),
        Some(first.clone())
    );
    // Inside the window: a duplicate; a day and a moment later: a new event.
    let (_, again) = accept(&store, Some("k"), T0 + window - 1).await;
    assert!(matches!(again, Accepted::Duplicate(ref id) if *id == first));
    let (second, later) = accept(&store, Some("k"), T0 + window + 1).await;
    assert!(matches!(later, Accepted::New { .. }));
    let found = store
        .events_by_key(TENANT, "k", Some("ep"), 10)
        .await
        .unwrap();
    assert_eq!(
        found.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(),
        [second.as_str(), first.as_str()],
        "newest first"
    );
    assert_eq!(store.sweep_event_keys(T0 + window + 1).await.unwrap(), 0);
    assert_eq!(
        store.sweep_event_keys(T0 + 2 * window + 2).await.unwrap(),
        1
    );
}

async fn a_sync_flow_claims_its_first_attempt_with_the_event(b: &Backend) {
    let store = b.open().await;
    route(&store, FlowMode::Sync, 1).await;
    let (id, accepted) = accept(&store, None, T0).await;
    let Accepted::New { sync } = accepted else {
        panic!("accepted");
    };
    assert_eq!(sync.len(), 1);
    assert_eq!((sync[0].number, sync[0].max_attempts), (1, 5));
    assert_eq!(sync[0].secrets.len(), 0, "the fixture target has no secret");
    let event = store.event(TENANT, &id).await.unwrap().unwrap();
    let d = &event.deliveries[0];
    assert_eq!(d.state, DeliveryState::InFlight);
    assert_eq!(d.attempts[0].id, sync[0].attempt_id);
    assert!(sync[0].body.contains(&id), "the body names the event");
}
