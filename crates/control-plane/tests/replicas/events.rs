//! Copies of one keyed event spread over three replicas: one event.

use std::collections::HashSet;
use std::sync::Arc;

use futures::future::join_all;
use serde_json::{Value, json};

use crate::cluster::Cluster;

const COPIES: usize = 48;

async fn burst(cluster: &Cluster, key: &str) -> Result<(), String> {
    let barrier = Arc::new(tokio::sync::Barrier::new(COPIES));
    let body =
        json!({"endpoint": "ep", "event_type": "order.paid", "event_key": key, "payload": {}});
    let copies = (0..COPIES).map(|i| {
        let (api, barrier, body) = (cluster.api(i).clone(), barrier.clone(), body.clone());
        tokio::spawn(async move {
            barrier.wait().await;
            api.submit(body).await
        })
    });
    let answers: Vec<(u16, Value)> = join_all(copies)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    if let Some(bad) = answers.iter().find(|(s, _)| *s != 200 && *s != 202) {
        return Err(format!("a copy got {bad:?}"));
    }
    let ids: HashSet<&str> = answers
        .iter()
        .filter_map(|(_, a)| a["id"].as_str())
        .collect();
    if ids.len() != 1 {
        return Err(format!("{} events answered for one key", ids.len()));
    }
    let found = cluster
        .api(2)
        .get(&format!("/v1/events?event_key={key}&limit=100"))
        .await;
    let stored = found["items"].as_array().unwrap().len();
    if stored != 1 {
        return Err(format!("{stored} events stored for one key"));
    }
    Ok(())
}

async fn cluster(faults: &str) -> Cluster {
    let cluster = Cluster::start(3, faults).await;
    cluster.api(0).create("endpoints", "ep", json!({})).await;
    cluster
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn copies_of_one_keyed_event_across_replicas_make_one_event() {
    let cluster = cluster("").await;
    for round in 0..3 {
        burst(&cluster, &format!("order-{round}")).await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn negative_control_an_unguarded_event_key_is_caught_across_replicas() {
    let cluster = cluster("unguarded_event_key").await;
    let mut caught = Vec::new();
    for round in 0..5 {
        if let Err(why) = burst(&cluster, &format!("order-{round}")).await {
            caught.push(why);
        }
    }
    assert!(
        !caught.is_empty(),
        "the check must catch the unguarded dedup"
    );
    eprintln!("caught in {}/5 rounds, e.g. {}", caught.len(), caught[0]);
}
