//! Event submission: dedup (also concurrent), disabled endpoints, accepted types, details.

use std::time::Duration;

use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn duplicate_event_keys_return_the_original_even_when_concurrent() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let api = Api::new(server.url());
    let receiver = Receiver::start(|_| status(200));
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
    let receiver = Receiver::start(|i| if i == 0 { status(500) } else { status(200) });
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
    let receiver = Receiver::start(|_| status(500));
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

#[tokio::test]
async fn events_are_found_by_key_with_all_their_deliveries_newest_first() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(&dir.path().join("cp.db"), FAST);
    // A short dedup window, so one key can hold two events of one endpoint.
    cfg.idempotency.retention = Duration::from_millis(300);
    let server = switchyard_control_plane::Server::start(cfg).await.unwrap();
    let api = Api::new(server.url());
    let ok = Receiver::start(|_| status(200));
    let failing = Receiver::start(|_| status(503));
    api.route(&ok.url, json!({})).await;
    api.create(
        "targets",
        "down",
        json!({"url": failing.url, "timeout_ms": 2000}),
    )
    .await;
    api.create(
        "flows",
        "to-down",
        json!({"endpoint": "ep", "target": "down"}),
    )
    .await;
    api.create("endpoints", "ep2", json!({})).await;

    let submit = |endpoint: &'static str| {
        let api = api.clone();
        async move {
            let (status, body) = api
                .submit(json!({"endpoint": endpoint, "event_type": "order.paid", "payload": {}, "event_key": "order-7"}))
                .await;
            assert_eq!(status, 202, "{body}");
            body["id"].as_str().unwrap().to_owned()
        }
    };
    let old = submit("ep").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let new = submit("ep").await;
    let elsewhere = submit("ep2").await;
    api.submit(json!({"endpoint": "ep", "event_type": "order.paid", "payload": {}, "event_key": "order-8"}))
        .await;
    // The new event's delivery to `down` dies (503 five times); the one to `tg` succeeds.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let event = api.get(&format!("/v1/events/{new}")).await;
        let mut states: Vec<_> = event["deliveries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                (
                    d["target"].as_str().unwrap().to_owned(),
                    d["state"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        states.sort();
        if states
            == [
                ("down".into(), "dead".into()),
                ("tg".into(), "succeeded".into()),
            ]
        {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{states:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // Every event with the key, newest first, across endpoints.
    let found = api.get("/v1/events?event_key=order-7").await;
    let ids: Vec<_> = found["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids, [elsewhere.clone(), new.clone(), old.clone()]);
    assert_eq!(found["more"], false);
    // Narrowed to one endpoint; each event carries all its deliveries with their attempts.
    let on_ep = api.get("/v1/events?event_key=order-7&endpoint=ep").await;
    let items = on_ep["items"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["id"], new.as_str());
    assert_eq!(items[0]["event_key"], "order-7");
    let deliveries = items[0]["deliveries"].as_array().unwrap();
    assert_eq!(deliveries.len(), 2);
    let dead = deliveries.iter().find(|d| d["target"] == "down").unwrap();
    assert_eq!(dead["state"], "dead");
    assert_eq!(dead["attempts"].as_array().unwrap().len(), 5);
    assert_eq!(dead["error_class"], "http_5xx");
    // The dead one is the DLQ entry of that event.
    let dlq = api.get("/v1/dlq?target=down").await;
    assert!(
        dlq["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["delivery_id"] == dead["id"] && e["event_id"] == new.as_str())
    );
    // A limit, with `more` saying there were more.
    let one = api.get("/v1/events?event_key=order-7&limit=1").await;
    assert_eq!(
        (one["items"].as_array().unwrap().len(), &one["more"]),
        (1, &json!(true))
    );
    assert_eq!(one["items"][0]["id"], elsewhere.as_str());
    // An unknown key: an empty list, not a 404.
    let none = api.get("/v1/events?event_key=nope").await;
    assert_eq!(none["items"], json!([]));

    // Bad input names the parameter.
    for (path, field) in [
        ("/v1/events", "event_key"),
        ("/v1/events?endpoint=ep", "event_key"),
        ("/v1/events?event_key=", "event_key"),
        ("/v1/events?event_key=k&endpoint=Not%20A%20Name", "endpoint"),
        ("/v1/events?event_key=k&limit=0", "limit"),
        ("/v1/events?event_key=k&limit=101", "limit"),
    ] {
        let (status, body) = api.call("GET", path, None, None).await;
        assert_eq!(
            (status, body["code"].as_str(), body["field"].as_str()),
            (400, Some("validation_failed"), Some(field)),
            "{path}: {body}"
        );
    }
    let (status, body) = api.call("GET", "/v1/events?key=k", None, None).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("validation_failed"))
    );

    // Tenant-scoped: another tenant finds nothing with the same key.
    let r = api
        .http
        .get(format!("{}/v1/events?event_key=order-7", api.base))
        .bearer_auth(OTHER_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let other: serde_json::Value = r.json().await.unwrap();
    assert_eq!(other["items"], json!([]));
    server.stop().await.unwrap();
}
