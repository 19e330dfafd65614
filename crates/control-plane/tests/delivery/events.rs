//! Event submission: dedup (also concurrent), disabled endpoints, accepted types, details.

use std::time::Duration;

use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn duplicate_event_keys_return_the_original_even_when_concurrent() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let api = Api::new(server.url());
    let receiver = Receiver::start(|_| status(200)).await;
    api.route(&receiver.url, json!({})).await;

    let body =
        json!({"endpoint": "ep", "event_type": "t", "payload": {"n": 1}, "event_key": "order-42"});
    let calls = (0..24).map(|_| {
        let api = api.clone();
        let body = body.clone();
        tokio::spawn(async move { api.submit(body).await })
    });
    let results: Vec<_> = futures::future::join_all(calls)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let fresh: Vec<_> = results.iter().filter(|(s, _)| *s == 202).collect();
    assert_eq!(fresh.len(), 1, "exactly one submission is new: {results:?}");
    let id = fresh[0].1["id"].clone();
    for (status, body) in &results {
        assert!(
            *status == 202 || *status == 200,
            "never a 500: {status} {body}"
        );
        assert_eq!(body["id"], id);
        assert_eq!(body["duplicate"], *status == 200);
    }
    // Later, sequential duplicate: 200, duplicate, same event.
    let (status, again) = api.submit(body.clone()).await;
    assert_eq!(
        (status, &again["id"], &again["duplicate"]),
        (200, &id, &json!(true))
    );
    // Another key is another event; the same key on another endpoint is another event too.
    let (status, other) = api
        .submit(
            json!({"endpoint": "ep", "event_type": "t", "payload": {}, "event_key": "order-43"}),
        )
        .await;
    assert_eq!(status, 202);
    assert_ne!(other["id"], id);

    api.wait_state(id.as_str().unwrap(), "succeeded", Duration::from_secs(10))
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let deliveries_of_dup = receiver
        .received()
        .iter()
        .filter(|r| r.header("webhook-id") == id.as_str().unwrap())
        .count();
    assert_eq!(
        deliveries_of_dup, 1,
        "the duplicate submissions delivered nothing more"
    );
    server.stop().await.unwrap();
}

#[tokio::test]
async fn disabled_endpoint_unknown_endpoint_and_unaccepted_types_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let api = Api::new(server.url());
    api.create("endpoints", "ep", json!({"event_types": ["order.paid"]}))
        .await;

    let (status, body) = api
        .submit(json!({"endpoint": "ep", "event_type": "order.lost", "payload": {}}))
        .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("validation_failed"))
    );
    assert_eq!(body["field"], "event_type");

    let (status, body) = api
        .submit(json!({"endpoint": "nope", "event_type": "order.paid", "payload": {}}))
        .await;
    assert_eq!(status, 404, "{body}");

    let (status, body) = api.submit(json!({"endpoint": "ep", "payload": {}})).await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["detail"].as_str().unwrap().contains("event_type"),
        "{body}"
    );

    let (status, _) = api
        .call("POST", "/v1/endpoints/ep/disable", None, Some("dis-1"))
        .await;
    assert_eq!(status, 200);
    let (status, body) = api
        .submit(json!({"endpoint": "ep", "event_type": "order.paid", "payload": {}}))
        .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (409, Some("endpoint_disabled"))
    );
    server.stop().await.unwrap();
}

#[tokio::test]
async fn every_matching_flow_gets_a_delivery_and_details_show_attempts() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let api = Api::new(server.url());
    let receiver = Receiver::start(|i| if i == 0 { status(500) } else { status(200) }).await;
    api.route(&receiver.url, json!({})).await;
    api.create(
        "flows",
        "only-paid",
        json!({"endpoint": "ep", "target": "tg", "event_types": ["order.paid"]}),
    )
    .await;
    let (_, body) = api
        .submit(json!({"endpoint": "ep", "event_type": "order.created", "payload": {}}))
        .await;
    assert_eq!(
        body["deliveries"].as_array().unwrap().len(),
        1,
        "the filter excludes one flow"
    );
    let id = body["id"].as_str().unwrap();
    let d = api
        .wait_state(id, "succeeded", Duration::from_secs(10))
        .await;
    assert_eq!(d["attempts_made"], 2);
    assert_eq!(d["attempts"][0]["status_code"], 500);
    assert_eq!(d["attempts"][1]["outcome"], "succeeded");
    let again = api
        .get(&format!("/v1/deliveries/{}", d["id"].as_str().unwrap()))
        .await;
    assert_eq!(again["attempts"].as_array().unwrap().len(), 2);
    let (_, body) = api
        .submit(json!({"endpoint": "ep", "event_type": "order.paid", "payload": {}}))
        .await;
    assert_eq!(body["deliveries"].as_array().unwrap().len(), 2);
    let (status, _) = api.call("GET", "/v1/deliveries/dlv_nope", None, None).await;
    assert_eq!(status, 404);
    server.stop().await.unwrap();
}

#[tokio::test]
async fn an_event_key_dedups_only_within_the_retention_window() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(&dir.path().join("cp.db"), FAST);
    cfg.idempotency.retention = Duration::from_millis(400);
    let server = switchyard_control_plane::Server::start(cfg).await.unwrap();
    let api = Api::new(server.url());
    api.create("endpoints", "ep", json!({})).await;
    let body = json!({"endpoint": "ep", "event_type": "t", "payload": {}, "event_key": "k"});
    let (status, first) = api.submit(body.clone()).await;
    assert_eq!(status, 202);
    let (status, dup) = api.submit(body.clone()).await;
    assert_eq!((status, &dup["id"]), (200, &first["id"]));
    tokio::time::sleep(Duration::from_millis(600)).await;
    let (status, later) = api.submit(body).await;
    assert_eq!(status, 202, "past the window the key is free again");
    assert_ne!(later["id"], first["id"]);
    server.stop().await.unwrap();
}

#[tokio::test]
async fn another_tenant_sees_none_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let api = Api::new(server.url());
    let receiver = Receiver::start(|_| status(500)).await;
    api.route(&receiver.url, json!({})).await;
    let event = api.event_id(1).await;
    let d = api
        .wait_state(&event, "dead", Duration::from_secs(20))
        .await;
    let other = |path: String| {
        let api = api.clone();
        async move {
            let r = api
                .http
                .get(format!("{}{path}", api.base))
                .bearer_auth(OTHER_TOKEN)
                .send()
                .await
                .unwrap();
            let status = r.status().as_u16();
            (status, r.json::<serde_json::Value>().await.unwrap())
        }
    };
    assert_eq!(other(format!("/v1/events/{event}")).await.0, 404);
    assert_eq!(
        other(format!("/v1/deliveries/{}", d["id"].as_str().unwrap()))
            .await
            .0,
        404
    );
    let (_, dlq) = other("/v1/dlq".into()).await;
    assert_eq!(dlq["items"].as_array().unwrap().len(), 0);
    let (_, stats) = other("/v1/dlq/stats".into()).await;
    assert_eq!(stats["total"], 0);
    let r = api
        .http
        .put(format!("{}/v1/replays/r1", api.base))
        .bearer_auth(OTHER_TOKEN)
        .json(&json!({"selection": {"delivery_ids": [d["id"]]}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 201);
    let session: serde_json::Value = r.json().await.unwrap();
    assert_eq!(
        session["counts"]["skipped"], 1,
        "another tenant cannot replay it"
    );
    server.stop().await.unwrap();
}
