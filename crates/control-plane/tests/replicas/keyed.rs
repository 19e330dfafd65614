//! 64 copies of one keyed create spread over three replicas: one resource, one answer.

use std::sync::Arc;

use futures::future::join_all;
use serde_json::{Value, json};

use crate::cluster::Cluster;

const COPIES: usize = 64;

/// Sends the copies at once; `Err` says how the contract was broken.
async fn burst(cluster: &Cluster, key: &str, name: &str) -> Result<(), String> {
    let barrier = Arc::new(tokio::sync::Barrier::new(COPIES));
    let body = json!({"name": name, "spec": {}});
    let copies = (0..COPIES).map(|i| {
        let (api, barrier, body, key) = (
            cluster.api(i).clone(),
            barrier.clone(),
            body.clone(),
            key.to_owned(),
        );
        tokio::spawn(async move {
            barrier.wait().await;
            api.call("POST", "/v1/endpoints", Some(body), Some(&key))
                .await
        })
    });
    let answers: Vec<(u16, Value)> = join_all(copies)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let Some((_, created)) = answers.iter().find(|(status, _)| *status == 201) else {
        return Err(format!("no 201: {:?}", answers[0]));
    };
    for (status, answer) in &answers {
        let in_progress = *status == 409 && answer["code"] == "idempotency_key_in_progress";
        if !(in_progress || (*status == 201 && answer == created)) {
            return Err(format!(
                "a copy got {status} {answer}, another 201 {created}"
            ));
        }
    }
    let later = cluster
        .api(1)
        .call("POST", "/v1/endpoints", Some(body), Some(key))
        .await;
    if later != (201, created.clone()) {
        return Err(format!("a later retry got {later:?}"));
    }
    let listed = cluster.api(2).get("/v1/endpoints?limit=500").await;
    let copies = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == name)
        .count();
    if copies != 1 {
        return Err(format!("{copies} endpoints named {name}"));
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn copies_of_one_keyed_create_across_replicas_make_one_resource() {
    let cluster = Cluster::start(3, "").await;
    for round in 0..3 {
        burst(
            &cluster,
            &format!("key-{round}"),
            &format!("orders-{round}"),
        )
        .await
        .unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn negative_control_a_check_then_insert_key_claim_is_caught_across_replicas() {
    let cluster = Cluster::start(3, "check_then_insert_key").await;
    let mut caught = Vec::new();
    for round in 0..5 {
        if let Err(why) = burst(
            &cluster,
            &format!("key-{round}"),
            &format!("orders-{round}"),
        )
        .await
        {
            caught.push(why);
        }
    }
    assert!(
        !caught.is_empty(),
        "the burst check must catch the unguarded claim"
    );
    eprintln!("caught in {}/5 rounds, e.g. {}", caught.len(), caught[0]);
}
