//! kill -9 of the control plane and of the edge plane in the middle of an attempt: nothing
//! is lost; the receiver gets the event again with the same webhook-id (at-least-once).

use std::collections::HashSet;
use std::time::Duration;

use serde_json::json;

use crate::support::*;

/// The receiver holds its first request (the attempt in flight when the process dies) and
/// answers 200 to everything after.
fn hold_first(i: usize) -> Reply {
    if i == 0 {
        Reply {
            status: 200,
            delay: Duration::from_secs(15),
        }
    } else {
        status(200)
    }
}

#[tokio::test]
async fn kill_9_of_the_control_plane_mid_attempt_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cp.db");
    let args = ["--retry-schedule", FAST, "--delivery-lease-margin", "200ms"];
    let mut cp = spawn_control_plane(&db, &args).await;
    let api = Api::new(cp.url.clone().unwrap());
    let receiver = Receiver::start(hold_first);
    api.route(&receiver.url, json!({})).await;
    let mut events = Vec::new();
    for n in 0..10 {
        events.push(api.event_id(n).await);
    }
    wait_for(
        "the first attempt to reach the receiver",
        Duration::from_secs(10),
        || receiver.count() >= 1,
    )
    .await;
    let in_flight = receiver.received()[0].header("webhook-id").to_owned();
    cp.kill9().await;

    let cp = spawn_control_plane(&db, &args).await;
    let api = Api::new(cp.url.clone().unwrap());
    for e in &events {
        api.wait_state(e, "succeeded", Duration::from_secs(20))
            .await;
    }
    let seen: HashSet<String> = receiver
        .received()
        .iter()
        .map(|r| r.header("webhook-id").to_owned())
        .collect();
    assert_eq!(seen.len(), 10, "every event reached the receiver");
    let copies = receiver
        .received()
        .iter()
        .filter(|r| r.header("webhook-id") == in_flight)
        .count();
    assert!(
        copies >= 2,
        "the interrupted attempt was sent again, same webhook-id"
    );
    let d = api.delivery_of(&in_flight).await;
    assert_eq!(d["attempts"][0]["outcome"], "failed");
    assert_eq!(d["attempts"][0]["error_class"], "timeout");
    assert!(
        d["attempts"][0]["error"]
            .as_str()
            .unwrap()
            .contains("lease expired")
    );
    assert_eq!(
        d["attempts"].as_array().unwrap().last().unwrap()["outcome"],
        "succeeded"
    );
}

#[tokio::test]
async fn kill_9_of_the_edge_mid_attempt_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let api = Api::new(server.url());
    let receiver = Receiver::start(hold_first);
    api.route(
        &receiver.url,
        json!({"mode": "async_relay", "edge": "edge-1"}),
    )
    .await;
    let mut edge = spawn_edge(&server.url(), "edge-1");
    let event = api.event_id(1).await;
    wait_for("the edge's first attempt", Duration::from_secs(10), || {
        receiver.count() >= 1
    })
    .await;
    edge.kill9().await;
    let _edge = spawn_edge(&server.url(), "edge-1");
    let d = api
        .wait_state(&event, "succeeded", Duration::from_secs(20))
        .await;
    let received = receiver.received();
    assert!(received.len() >= 2);
    assert!(
        received.iter().all(|r| r.header("webhook-id") == event),
        "same webhook-id on every copy"
    );
    assert_eq!(d["attempts"][0]["error_class"], "timeout");
    assert_eq!(d["attempts"][0]["performed_by"], "edge:edge-1");
    assert_eq!(
        d["attempts"].as_array().unwrap().last().unwrap()["outcome"],
        "succeeded"
    );
    server.stop().await.unwrap();
}

#[tokio::test]
async fn kill_9_during_a_sync_attempt_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cp.db");
    let args = ["--retry-schedule", FAST, "--delivery-lease-margin", "200ms"];
    let mut cp = spawn_control_plane(&db, &args).await;
    let api = Api::new(cp.url.clone().unwrap());
    let receiver = Receiver::start(hold_first);
    api.route(&receiver.url, json!({"mode": "sync"})).await;
    let submit = {
        let api = api.clone();
        tokio::spawn(async move {
            api.http
                .post(format!("{}/v1/events", api.base))
                .bearer_auth(TOKEN)
                .json(&json!({"endpoint": "ep", "event_type": "t", "payload": {}}))
                .send()
                .await
        })
    };
    wait_for("the sync attempt", Duration::from_secs(10), || {
        receiver.count() >= 1
    })
    .await;
    let event = receiver.received()[0].header("webhook-id").to_owned();
    cp.kill9().await;
    assert!(
        submit.await.unwrap().is_err(),
        "the submitter saw the connection die"
    );

    let cp = spawn_control_plane(&db, &args).await;
    let api = Api::new(cp.url.clone().unwrap());
    let d = api
        .wait_state(&event, "succeeded", Duration::from_secs(20))
        .await;
    assert_eq!(d["mode"], "sync");
    assert_eq!(d["attempts"][0]["error_class"], "timeout");
    assert!(
        receiver
            .received()
            .iter()
            .all(|r| r.header("webhook-id") == event)
    );
    assert!(receiver.count() >= 2);
}
