//! Concurrent duplicates: one effect, one answer — and a negative control proving these
//! checks catch a check-then-insert claim.

use std::sync::Arc;

use futures::future::join_all;
use switchyard_control_plane::idempotency::ClaimStrategy;

use crate::support::{Observed, TestServer, endpoint};

const COPIES: usize = 64;

/// Sends `COPIES` copies of one keyed create at once; returns every response and the
/// response a later retry gets.
async fn burst_same_key(s: &Arc<TestServer>, key: &str, name: &str) -> (Vec<Observed>, Observed) {
    let barrier = Arc::new(tokio::sync::Barrier::new(COPIES));
    let tasks = (0..COPIES).map(|_| {
        let (s, barrier, key, name) = (s.clone(), barrier.clone(), key.to_owned(), name.to_owned());
        tokio::spawn(async move {
            barrier.wait().await;
            Observed::of(s.create("endpoints", &key, endpoint(&name)).await).await
        })
    });
    let responses: Vec<Observed> = join_all(tasks)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let later = Observed::of(s.create("endpoints", key, endpoint(name)).await).await;
    (responses, later)
}

/// The contract for a burst of one keyed create: exactly one resource; every success is the
/// same 201; every other answer is 409 in-progress; a later retry replays that 201.
async fn check_burst(s: &Arc<TestServer>, key: &str, name: &str) -> Result<(), String> {
    let (responses, later) = burst_same_key(s, key, name).await;
    let created: Vec<&Observed> = responses.iter().filter(|r| r.status == 201).collect();
    let Some(first) = created.first() else {
        return Err("no 201 at all".into());
    };
    if let Some(odd) = responses.iter().find(|r| {
        !(r.status == 201 && r.without_replay_flag() == first.without_replay_flag()
            || r.status == 409 && r.code() == "idempotency_key_in_progress")
    }) {
        return Err(format!(
            "unexpected answer {} {}",
            odd.status,
            String::from_utf8_lossy(&odd.body)
        ));
    }
    if later.without_replay_flag() != first.without_replay_flag() {
        return Err(format!(
            "later retry got {} {}",
            later.status,
            String::from_utf8_lossy(&later.body)
        ));
    }
    let list = Observed::of(s.get("/v1/endpoints?limit=500").await)
        .await
        .json();
    let copies = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["name"] == name)
        .count();
    if copies != 1 {
        return Err(format!("{copies} resources named {name}"));
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_copies_of_one_keyed_create_have_one_effect_and_one_answer() {
    let s = Arc::new(TestServer::start().await);
    for round in 0..3 {
        check_burst(&s, &format!("burst-{round}"), &format!("orders-{round}"))
            .await
            .unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn negative_control_a_check_then_insert_claim_is_caught() {
    let s = Arc::new(
        TestServer::start_with(|c| c.idempotency.claim_strategy = ClaimStrategy::CheckThenInsert)
            .await,
    );
    let mut caught = Vec::new();
    for round in 0..5 {
        if let Err(why) =
            check_burst(&s, &format!("burst-{round}"), &format!("orders-{round}")).await
        {
            caught.push(why);
        }
    }
    assert!(
        !caught.is_empty(),
        "the burst check must detect the check-then-insert race"
    );
    eprintln!(
        "check-then-insert caught in {}/5 rounds, e.g.: {}",
        caught.len(),
        caught[0]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_creates_of_one_name_with_different_keys_create_it_once() {
    let s = Arc::new(TestServer::start().await);
    let barrier = Arc::new(tokio::sync::Barrier::new(COPIES));
    let tasks = (0..COPIES).map(|i| {
        let (s, barrier) = (s.clone(), barrier.clone());
        tokio::spawn(async move {
            barrier.wait().await;
            Observed::of(
                s.create("endpoints", &format!("key-{i}"), endpoint("orders"))
                    .await,
            )
            .await
        })
    });
    let responses: Vec<Observed> = join_all(tasks)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let created = responses.iter().filter(|r| r.status == 201).count();
    let taken = responses
        .iter()
        .filter(|r| r.status == 409 && r.code() == "name_taken")
        .count();
    assert_eq!(
        (created, taken),
        (1, COPIES - 1),
        "{:?}",
        responses.iter().map(|r| r.status).collect::<Vec<_>>()
    );
}
