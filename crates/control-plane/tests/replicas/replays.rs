//! A replay session started on one replica, with copies of the start on the others, polled
//! on a third: one session, each dead delivery replayed once.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use futures::future::join_all;
use serde_json::{Value, json};

use crate::cluster::{Cluster, eventually, spread};
use crate::support::{Receiver, status};

const DEAD: usize = 10;

/// The session's original → re-delivery pairs.
fn pairs(session: &Value) -> BTreeMap<String, String> {
    session["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|i| {
                    (
                        i["original_delivery_id"].as_str().unwrap_or("").to_owned(),
                        i["delivery_id"].as_str().unwrap_or("").to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

async fn replay_across_replicas(faults: &str) -> Result<(), String> {
    let cluster = Cluster::start(3, faults).await;
    let receiver = Receiver::start(|_| status(503));
    cluster
        .api(0)
        .route(&receiver.url, json!({"mode": "async_inline"}))
        .await;
    let cluster = &cluster;
    let events = spread(DEAD, 8, |i| async move {
        cluster.api(i).event_id(i as u64).await
    })
    .await;
    eventually("every delivery dead", Duration::from_secs(30), || async {
        let dlq = cluster.api(1).get("/v1/dlq?limit=100").await;
        (dlq["items"].as_array().unwrap().len() == DEAD).then_some(())
    })
    .await;
    receiver.set(|_| status(200));
    let before = receiver.count();

    let body = json!({"selection": {"filter": {}}});
    let barrier = Arc::new(tokio::sync::Barrier::new(9));
    let starts = (0..9).map(|i| {
        let (api, barrier, body) = (cluster.api(i).clone(), barrier.clone(), body.clone());
        tokio::spawn(async move {
            barrier.wait().await;
            api.call("PUT", "/v1/replays/retry-1", Some(body), None)
                .await
        })
    });
    let answers: Vec<(u16, Value)> = join_all(starts)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let created = answers.iter().filter(|(s, _)| *s == 201).count();
    let first = pairs(&answers[0].1);
    if created != 1
        || answers
            .iter()
            .any(|(s, a)| !(*s == 201 || *s == 200) || pairs(a) != first)
        || first.len() != DEAD
    {
        return Err(format!("{created} created; answers {answers:?}"));
    }
    let session = eventually("the session completes", Duration::from_secs(30), || async {
        let s = cluster.api(2).get("/v1/replays/retry-1").await;
        (s["status"] == "completed").then_some(s)
    })
    .await;
    if session["counts"]["succeeded"] != DEAD || pairs(&session) != first {
        return Err(format!("polled on another replica: {session}"));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let replayed: Vec<String> = receiver.received()[before..]
        .iter()
        .map(|r| r.header("webhook-id").to_owned())
        .collect();
    let distinct: HashSet<&String> = replayed.iter().collect();
    let expected: HashSet<&String> = events.iter().collect();
    if replayed.len() != DEAD || distinct != expected {
        return Err(format!(
            "the receiver got {} replays: {replayed:?}",
            replayed.len()
        ));
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_replay_session_started_on_one_replica_is_polled_on_another() {
    replay_across_replicas("").await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn negative_control_an_unguarded_session_id_is_caught_across_replicas() {
    let outcome = replay_across_replicas("unguarded_replay").await;
    assert!(
        outcome.is_err(),
        "without the guarded creation the copies disagree"
    );
    eprintln!("caught: {}", outcome.unwrap_err());
}
