//! Idempotency keys: one claim wins, takeovers and completions are fenced, a unit of work
//! commits claim and effect together or not at all — whether the key is claimed before the
//! effect or recorded, completed, after it.

use futures::future::join_all;
use serde_json::json;
use switchyard_control_plane::store::{
    ClaimOutcome, KeyScope, KeyState, ResourceRow, StoredResponse,
};
use switchyard_protocol::ResourceKind;

use crate::support::{Backend, T0, TENANT, conformance};

conformance!(
    one_claim_wins_across_handles,
    a_takeover_fences_the_previous_holder,
    a_unit_of_work_commits_claim_and_effect_together,
    copies_in_units_of_work_see_the_committed_answer,
    a_renewed_lease_is_not_taken_over,
    copies_recording_the_key_at_commit_leave_one_effect,
    a_key_recorded_by_a_unit_that_rolls_back_is_free,
);

fn scope(key: &str) -> KeyScope {
    KeyScope {
        tenant: TENANT.into(),
        key: key.into(),
    }
}

fn response(body: &str) -> StoredResponse {
    StoredResponse {
        status: 201,
        headers: vec![("content-type".into(), "application/json".into())],
        body: body.as_bytes().to_vec(),
    }
}

async fn one_claim_wins_across_handles(b: &Backend) {
    let handles = [b.open().await, b.open().await];
    let claims = (0..32).map(|i| {
        let store = handles[i % 2].clone();
        tokio::spawn(async move {
            store
                .claim_key(&scope("k1"), b"fp", T0, T0 + 10_000)
                .await
                .unwrap()
        })
    });
    let outcomes: Vec<ClaimOutcome> = join_all(claims)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let won = outcomes
        .iter()
        .filter(|o| matches!(o, ClaimOutcome::Claimed { attempt: 1 }))
        .count();
    assert_eq!(won, 1, "exactly one claim wins: {outcomes:?}");
    for o in &outcomes {
        if let ClaimOutcome::Existing(record) = o {
            assert_eq!((record.state, record.attempt), (KeyState::InProgress, 1));
        }
    }
}

async fn a_takeover_fences_the_previous_holder(b: &Backend) {
    let (a, c) = (b.open().await, b.open().await);
    let k = scope("k2");
    assert_eq!(
        a.claim_key(&k, b"fp", T0, T0 + 1_000).await.unwrap(),
        ClaimOutcome::Claimed { attempt: 1 }
    );
    // Not before the lease expires …
    assert_eq!(
        c.take_over_key(&k, 1, T0 + 999, T0 + 2_000).await.unwrap(),
        None
    );
    // … then once: the second takeover of the same attempt loses.
    assert_eq!(
        c.take_over_key(&k, 1, T0 + 1_000, T0 + 2_000)
            .await
            .unwrap(),
        Some(2)
    );
    assert_eq!(
        a.take_over_key(&k, 1, T0 + 1_000, T0 + 2_000)
            .await
            .unwrap(),
        None
    );
    // The fenced-out holder cannot complete; the new one can, once.
    let mut stale = a.begin().await.unwrap();
    assert!(!stale.complete_key(&k, 1, &response("stale")).await.unwrap());
    drop(stale);
    let mut fresh = c.begin().await.unwrap();
    assert!(fresh.complete_key(&k, 2, &response("fresh")).await.unwrap());
    fresh.commit().await.unwrap();
    let record = a.get_key(&k).await.unwrap().unwrap();
    assert_eq!(record.state, KeyState::Completed);
    assert_eq!(record.response.unwrap().body, b"fresh");
    // A completed key is neither taken over nor released.
    assert_eq!(
        c.take_over_key(&k, 2, T0 + 9_999, T0 + 20_000)
            .await
            .unwrap(),
        None
    );
    c.release_key(&k, 2).await.unwrap();
    assert!(a.get_key(&k).await.unwrap().is_some());
}

fn endpoint(name: &str) -> ResourceRow {
    ResourceRow {
        kind: ResourceKind::Endpoint,
        name: name.into(),
        version: 1,
        spec: json!({}),
        status: json!({"enabled": true}),
        created_at: T0,
        updated_at: T0,
    }
}

async fn a_unit_of_work_commits_claim_and_effect_together(b: &Backend) {
    let store = b.open().await;
    let k = scope("k3");
    let mut tx = store.begin().await.unwrap();
    assert!(matches!(
        tx.claim_key(&k, b"fp", T0, T0 + 1_000).await.unwrap(),
        ClaimOutcome::Claimed { .. }
    ));
    assert!(
        tx.insert_resource(TENANT, &endpoint("orders"))
            .await
            .unwrap()
    );
    drop(tx); // rolled back: neither the claim nor the endpoint exists
    assert!(store.get_key(&k).await.unwrap().is_none());
    assert!(
        store
            .get_resource(TENANT, ResourceKind::Endpoint, "orders")
            .await
            .unwrap()
            .is_none()
    );
    let mut tx = store.begin().await.unwrap();
    let ClaimOutcome::Claimed { attempt } = tx.claim_key(&k, b"fp", T0, T0 + 1_000).await.unwrap()
    else {
        panic!("the key is free again");
    };
    assert!(
        tx.insert_resource(TENANT, &endpoint("orders"))
            .await
            .unwrap()
    );
    assert!(
        tx.complete_key(&k, attempt, &response("made"))
            .await
            .unwrap()
    );
    tx.commit().await.unwrap();
    assert_eq!(
        store.get_key(&k).await.unwrap().unwrap().state,
        KeyState::Completed
    );
    assert!(
        store
            .get_resource(TENANT, ResourceKind::Endpoint, "orders")
            .await
            .unwrap()
            .is_some()
    );
}

/// Copies of one keyed write, each in its own unit of work on its own handle: one runs the
/// effect, every other finds the completed key and its answer (never a half-done one).
async fn copies_in_units_of_work_see_the_committed_answer(b: &Backend) {
    let handles = [b.open().await, b.open().await];
    let copies = (0..16).map(|i| {
        let store = handles[i % 2].clone();
        tokio::spawn(async move {
            let k = scope("k4");
            let mut tx = store.begin().await.unwrap();
            match tx.claim_key(&k, b"fp", T0, T0 + 10_000).await.unwrap() {
                ClaimOutcome::Claimed { attempt } => {
                    let created = tx
                        .insert_resource(TENANT, &endpoint("billing"))
                        .await
                        .unwrap();
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                    assert!(
                        tx.complete_key(&k, attempt, &response("one"))
                            .await
                            .unwrap()
                    );
                    tx.commit().await.unwrap();
                    Some(created)
                }
                ClaimOutcome::Existing(record) => {
                    assert_eq!(
                        record.state,
                        KeyState::Completed,
                        "a copy saw an uncommitted claim"
                    );
                    assert_eq!(record.response.unwrap().body, b"one");
                    None
                }
            }
        })
    });
    let ran: Vec<Option<bool>> = join_all(copies)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(ran.iter().filter(|r| r.is_some()).count(), 1, "{ran:?}");
    assert_eq!(ran.iter().flatten().next(), Some(&true));
}

/// The holder's heartbeat keeps its lease; once taken over, its renewals are refused.
async fn a_renewed_lease_is_not_taken_over(b: &Backend) {
    let (holder, copy) = (b.open().await, b.open().await);
    let k = scope("k5");
    holder.claim_key(&k, b"fp", T0, T0 + 1_000).await.unwrap();
    assert!(holder.renew_key(&k, 1, T0 + 5_000).await.unwrap());
    assert!(
        holder.renew_key(&k, 1, T0 + 2_000).await.unwrap(),
        "a late heartbeat never shortens the lease"
    );
    assert_eq!(
        copy.take_over_key(&k, 1, T0 + 4_999, T0 + 9_000)
            .await
            .unwrap(),
        None,
        "the renewed lease still holds"
    );
    assert_eq!(
        copy.take_over_key(&k, 1, T0 + 5_000, T0 + 9_000)
            .await
            .unwrap(),
        Some(2)
    );
    assert!(
        !holder.renew_key(&k, 1, T0 + 20_000).await.unwrap(),
        "fenced out"
    );
    assert_eq!(
        copy.get_key(&k).await.unwrap().unwrap().locked_until,
        T0 + 9_000
    );
}

/// Copies of one keyed write that each write their effect first and then record the key,
/// completed, in their own unit of work on two handles: one records it and commits; every
/// other waits for that commit, finds the winner's answer, and rolls its own effect back.
/// Each copy's effect is a different row, so only the key's guard keeps the copies apart.
async fn copies_recording_the_key_at_commit_leave_one_effect(b: &Backend) {
    let handles = [b.open().await, b.open().await];
    let copies = (0..16).map(|i| {
        let store = handles[i % 2].clone();
        tokio::spawn(async move {
            let k = scope("k6");
            let mut tx = store.begin().await.unwrap();
            let name = format!("copy-{i}");
            assert!(tx.insert_resource(TENANT, &endpoint(&name)).await.unwrap());
            let mine = response(&name);
            match tx.record_completed_key(&k, b"fp", T0, &mine).await.unwrap() {
                ClaimOutcome::Claimed { attempt } => {
                    assert_eq!(attempt, 1);
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                    tx.commit().await.unwrap();
                    Some(name)
                }
                ClaimOutcome::Existing(record) => {
                    assert_eq!(record.state, KeyState::Completed, "{record:?}");
                    let body = record.response.unwrap().body;
                    assert!(body.starts_with(b"copy-") && body != name.as_bytes());
                    None // dropped: this copy's row rolls back
                }
            }
        })
    });
    let winners: Vec<String> = join_all(copies)
        .await
        .into_iter()
        .filter_map(Result::unwrap)
        .collect();
    assert_eq!(winners.len(), 1, "{winners:?}");
    let store = b.open().await;
    let rows = store
        .list_resources(TENANT, ResourceKind::Endpoint, None, 100)
        .await
        .unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, [winners[0].as_str()], "one effect, the key's");
    let key = store.get_key(&scope("k6")).await.unwrap().unwrap();
    assert_eq!(key.response.unwrap().body, winners[0].as_bytes());
}

/// A unit that recorded the key and then rolled back leaves the key free for the next.
async fn a_key_recorded_by_a_unit_that_rolls_back_is_free(b: &Backend) {
    let store = b.open().await;
    let k = scope("k7");
    let mut tx = store.begin().await.unwrap();
    assert!(matches!(
        tx.record_completed_key(&k, b"fp", T0, &response("first"))
            .await
            .unwrap(),
        ClaimOutcome::Claimed { .. }
    ));
    drop(tx);
    assert_eq!(store.get_key(&k).await.unwrap(), None);
    let mut tx = store.begin().await.unwrap();
    assert!(matches!(
        tx.record_completed_key(&k, b"fp", T0, &response("second"))
            .await
            .unwrap(),
        ClaimOutcome::Claimed { attempt: 1 }
    ));
    tx.commit().await.unwrap();
    let key = store.get_key(&k).await.unwrap().unwrap();
    assert_eq!(
        (key.state, key.fingerprint),
        (KeyState::Completed, b"fp".to_vec())
    );
    assert_eq!(key.response.unwrap().body, b"second");
}
