//! Deliveries with workers on every replica: each event is delivered once per flow; a
//! replica killed mid-attempt loses nothing and no attempt is counted twice.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use serde_json::{Value, json};

use crate::cluster::{Cluster, eventually, spread};
use crate::support::{Receiver, Reply, status};

/// Submits `n` events, each to the next replica; returns their ids.
async fn submit(cluster: &Cluster, n: usize) -> Vec<String> {
    spread(
        n,
        24,
        |i| async move { cluster.api(i).event_id(i as u64).await },
    )
    .await
}

async fn delivered_once(cluster: &Cluster, events: usize) -> Result<HashSet<String>, String> {
    let receiver = Receiver::start(|_| status(200));
    cluster
        .api(0)
        .route(&receiver.url, json!({"mode": "async_inline"}))
        .await;
    let ids = submit(cluster, events).await;
    let distinct = || {
        receiver
            .received()
            .iter()
            .map(|r| r.header("webhook-id").to_owned())
            .collect::<HashSet<_>>()
            .len()
    };
    eventually("every event delivered", Duration::from_secs(90), || async {
        (distinct() >= events).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    if receiver.count() != events {
        let mut sent: HashMap<String, usize> = HashMap::new();
        for r in receiver.received() {
            *sent.entry(r.header("webhook-id").to_owned()).or_default() += 1;
        }
        let twice = sent.iter().find(|(_, n)| **n > 1).map(|(id, _)| id.clone());
        let example = match twice {
            Some(id) => cluster.api(0).delivery_of(&id).await.to_string(),
            None => String::new(),
        };
        return Err(format!(
            "{} requests for {events} events; one sent twice: {example}",
            receiver.count()
        ));
    }
    // Which replicas delivered (a sample of the attempts' `performed_by`).
    let mut workers = HashSet::new();
    for (i, id) in ids.iter().enumerate().step_by(events / 60) {
        let d = cluster.api(i).delivery_of(id).await;
        workers.insert(
            d["attempts"][0]["performed_by"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    Ok(workers)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_thousand_events_are_delivered_once_by_workers_on_every_replica() {
    let cluster = Cluster::start(3, "").await;
    let workers = delivered_once(&cluster, 2_000).await.unwrap();
    assert!(
        workers.len() >= 2,
        "the replicas shared the work: {workers:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn negative_control_stale_claims_across_replicas_deliver_twice() {
    let cluster = Cluster::start(3, "stale_claim").await;
    let outcome = delivered_once(&cluster, 300).await;
    assert!(
        outcome.is_err(),
        "without the guarded claim some events go out twice"
    );
    eprintln!("caught: {}", outcome.unwrap_err());
}

/// The events' deliveries as the API shows them, by event id.
async fn deliveries(cluster: &Cluster, ids: &[String]) -> HashMap<String, Value> {
    let mut out = HashMap::new();
    for (i, id) in ids.iter().enumerate() {
        out.insert(id.clone(), cluster.api(i).delivery_of(id).await);
    }
    out
}

/// Each attempt of each delivery is counted once and sent once: numbered 1..n, none left in
/// flight, one success and it is the last, and the receiver saw exactly n requests.
fn each_attempt_counted_once(
    found: &HashMap<String, Value>,
    requests: &HashMap<String, usize>,
) -> Result<(), String> {
    for (event, d) in found {
        let attempts = d["attempts"].as_array().unwrap();
        let numbers: Vec<u64> = attempts
            .iter()
            .map(|a| a["number"].as_u64().unwrap())
            .collect();
        let expected: Vec<u64> = (1..=attempts.len() as u64).collect();
        let succeeded = attempts
            .iter()
            .filter(|a| a["outcome"] == "succeeded")
            .count();
        let in_flight = attempts
            .iter()
            .filter(|a| a["outcome"] == "in_flight")
            .count();
        let sent = requests.get(event).copied().unwrap_or(0);
        if d["state"] != "succeeded"
            || numbers != expected
            || d["attempts_made"] != attempts.len()
            || succeeded != 1
            || in_flight != 0
            || attempts.last().unwrap()["outcome"] != "succeeded"
            || sent != attempts.len()
        {
            return Err(format!("{event}: {sent} requests, delivery {d}"));
        }
    }
    Ok(())
}

/// Kills the replica holding the most attempts while they are in flight, then checks that
/// the others finish every delivery with each attempt counted once.
async fn kill_mid_attempt(faults: &str) -> Result<(), String> {
    let mut cluster = Cluster::start_with(3, faults, "300ms").await;
    const EVENTS: usize = 30;
    // The first attempts are held at the receiver for a while: in flight when the kill comes.
    let receiver = Receiver::start(|n| Reply {
        status: 200,
        delay: if n < EVENTS {
            Duration::from_millis(1_500)
        } else {
            Duration::ZERO
        },
    });
    cluster
        .api(0)
        .route(&receiver.url, json!({"mode": "async_inline"}))
        .await;
    let ids = submit(&cluster, EVENTS).await;
    eventually(
        "every first attempt in flight",
        Duration::from_secs(20),
        || async { (receiver.count() >= EVENTS).then_some(()) },
    )
    .await;
    let mut holders: HashMap<String, usize> = HashMap::new();
    for d in deliveries(&cluster, &ids).await.values() {
        *holders
            .entry(
                d["attempts"][0]["performed_by"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            )
            .or_default() += 1;
    }
    let (victim, held) = holders.iter().max_by_key(|(_, n)| **n).unwrap();
    let index: usize = victim.trim_start_matches("replica-").parse().unwrap();
    cluster.nodes[index].kill9().await;
    cluster.apis.remove(index);
    eprintln!("killed {victim} holding {held} of {EVENTS} attempts");

    eventually(
        "every delivery finished",
        Duration::from_secs(30),
        || async {
            let found = deliveries(&cluster, &ids).await;
            found
                .values()
                .all(|d| d["state"] == "succeeded")
                .then_some(())
        },
    )
    .await;
    // Late reapers (the negative control's) get their chance to do damage.
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    let found = deliveries(&cluster, &ids).await;
    let lease_lost = found
        .values()
        .flat_map(|d| d["attempts"].as_array().unwrap().clone())
        .filter(|a| a["error"].as_str().unwrap_or("").contains("lease expired"))
        .count();
    assert!(
        lease_lost > 0,
        "the killed replica held attempts: {found:?}"
    );
    let mut requests: HashMap<String, usize> = HashMap::new();
    for r in receiver.received() {
        *requests
            .entry(r.header("webhook-id").to_owned())
            .or_default() += 1;
    }
    each_attempt_counted_once(&found, &requests)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_replica_killed_mid_attempt_loses_nothing_and_counts_no_attempt_twice() {
    kill_mid_attempt("").await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn negative_control_an_unfenced_reaper_counts_attempts_twice() {
    let outcome = kill_mid_attempt("unfenced_reap").await;
    assert!(
        outcome.is_err(),
        "without the fence an attempt is counted twice"
    );
    eprintln!("caught: {}", outcome.unwrap_err());
}
