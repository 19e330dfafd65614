//! Replay sessions: exactly once per session, same/different body, dry run, cancel,
//! failure back to the DLQ linked to its session.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::*;

/// `n` dead deliveries of target `tg` (the receiver answers 500 until told otherwise).
async fn dead_letters(api: &Api, receiver: &Receiver, n: u64) -> Vec<String> {
    api.route(&receiver.url, json!({})).await;
    let mut events = Vec::new();
    for i in 0..n {
        events.push(api.event_id(i).await);
    }
    for e in &events {
        api.wait_state(e, "dead", Duration::from_secs(20)).await;
    }
    events
}

async fn wait_session(api: &Api, id: &str, status: &str) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let s = api.get(&format!("/v1/replays/{id}")).await;
        if s["status"] == status {
            return s;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "session never {status}: {s:#}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

#[tokio::test]
async fn a_session_redelivers_each_dead_delivery_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let api = Api::new(server.url());
    let receiver = Receiver::start(|_| status(500));
    let events = dead_letters(&api, &receiver, 4).await;
    let before = receiver.count();
    receiver.set(|_| status(200));

    let body = json!({"selection": {"filter": {"target": "tg", "error_class": "http_5xx"}}});
    // The same session id, concurrently: one 201, the rest 200 with the same session.
    let calls = (0..8).map(|_| {
        let (api, body) = (api.clone(), body.clone());
        tokio::spawn(async move {
            api.call("PUT", "/v1/replays/night-1", Some(body), None)
                .await
        })
    });
    let results: Vec<_> = futures::future::join_all(calls)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        results.iter().filter(|(s, _)| *s == 201).count(),
        1,
        "{results:?}"
    );
    assert!(
        results
            .iter()
            .all(|(s, b)| (*s == 201 || *s == 200) && b["counts"]["total"] == 4)
    );

    let done = wait_session(&api, "night-1", "completed").await;
    assert_eq!(done["counts"]["succeeded"], 4);
    assert_eq!(done["counts"]["pending"], 0);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let replayed: Vec<_> = receiver.received().split_off(before);
    let mut per_event: HashMap<String, usize> = HashMap::new();
    for r in &replayed {
        *per_event
            .entry(r.header("webhook-id").to_owned())
            .or_default() += 1;
    }
    assert_eq!(per_event.len(), 4);
    for e in &events {
        assert_eq!(
            per_event.get(e),
            Some(&1),
            "event {e} re-delivered exactly once, same webhook-id"
        );
    }
    // The same request again: 200, nothing new. Another body under the same id: 422.
    let (status, _) = api
        .call("PUT", "/v1/replays/night-1", Some(body.clone()), None)
        .await;
    assert_eq!(status, 200);
    let (status, problem) = api
        .call(
            "PUT",
            "/v1/replays/night-1",
            Some(json!({"selection": {"filter": {}}})),
            None,
        )
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (422, Some("replay_session_reused"))
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(receiver.count(), before + 4);
    // Replayed deliveries left the DLQ; a new session on the same ids skips them.
    let dlq = api.get("/v1/dlq?target=tg").await;
    assert_eq!(dlq["items"].as_array().unwrap().len(), 0, "{dlq}");
    let ids: Vec<_> = done["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["original_delivery_id"].clone())
        .collect();
    let (status, second) = api
        .call(
            "PUT",
            "/v1/replays/night-2",
            Some(json!({"selection": {"delivery_ids": ids}})),
            None,
        )
        .await;
    assert_eq!(status, 201);
    assert_eq!(second["counts"]["skipped"], 4);
    assert_eq!(second["counts"]["total"], 0);
    let list = api.get("/v1/replays").await;
    assert_eq!(list["items"].as_array().unwrap().len(), 2);
    server.stop().await.unwrap();
}

#[tokio::test]
async fn dry_run_counts_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let api = Api::new(server.url());
    let receiver = Receiver::start(|_| status(500));
    dead_letters(&api, &receiver, 3).await;
    let before = receiver.count();
    let (status, body) = api
        .call(
            "PUT",
            "/v1/replays/dry",
            Some(json!({"selection": {"filter": {"target": "tg"}}, "dry_run": true})),
            None,
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        (body["dry_run"].clone(), body["count"].clone()),
        (json!(true), json!(3))
    );
    let (status, _) = api.call("GET", "/v1/replays/dry", None, None).await;
    assert_eq!(status, 404, "a dry run creates no session");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(receiver.count(), before);
    assert_eq!(api.get("/v1/dlq/stats?group_by=target").await["total"], 3);
    server.stop().await.unwrap();
}

#[tokio::test]
async fn cancel_withdraws_unsent_redeliveries_and_is_keyed() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let api = Api::new(server.url());
    let receiver = Receiver::start(|_| status(500));
    dead_letters(&api, &receiver, 5).await;
    receiver.set(|_| status(200));
    // A rate too slow to schedule (found by the API fuzzer: it overflowed the due times and
    // answered 500) or too fast is a 400 naming the field, and starts nothing.
    for rate in [5e-324, 0.0009, 10_001.0] {
        let (status, problem) = api
            .call(
                "PUT",
                "/v1/replays/too-slow",
                Some(json!({"selection": {"filter": {}}, "rate_per_s": rate})),
                None,
            )
            .await;
        assert_eq!(
            (status, problem["field"].as_str()),
            (400, Some("rate_per_s")),
            "{rate}: {problem}"
        );
    }
    let (status, _) = api
        .call(
            "PUT",
            "/v1/replays/slow",
            Some(json!({"selection": {"filter": {}}, "rate_per_s": 0.5})),
            None,
        )
        .await;
    assert_eq!(status, 201);
    // The first goes at once; the others are spaced two seconds apart.
    wait_for("the first re-delivery", Duration::from_secs(5), || {
        receiver.count() > 25
    })
    .await;
    let (status, missing_key) = api
        .call("POST", "/v1/replays/slow/cancel", None, None)
        .await;
    assert_eq!(
        (status, missing_key["code"].as_str()),
        (400, Some("idempotency_key_missing"))
    );
    let (status, cancelled) = api
        .call("POST", "/v1/replays/slow/cancel", None, Some("cancel-1"))
        .await;
    assert_eq!(status, 200, "{cancelled}");
    assert_eq!(cancelled["status"], "cancelled");
    assert_eq!(cancelled["counts"]["succeeded"], 1);
    assert_eq!(cancelled["counts"]["cancelled"], 4);
    let response = api
        .http
        .post(format!("{}/v1/replays/slow/cancel", api.base))
        .bearer_auth(TOKEN)
        .header("idempotency-key", "cancel-1")
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["idempotent-replayed"], "true");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        receiver.count(),
        26,
        "nothing more was sent after the cancel"
    );
    let dlq = api.get("/v1/dlq").await;
    assert_eq!(
        dlq["items"].as_array().unwrap().len(),
        4,
        "withdrawn items are back in the DLQ"
    );
    let (status, _) = api
        .call("POST", "/v1/replays/none/cancel", None, Some("cancel-2"))
        .await;
    assert_eq!(status, 404);
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_replay_that_dies_again_returns_to_the_dlq_linked_to_its_session() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let api = Api::new(server.url());
    let receiver = Receiver::start(|_| status(500));
    dead_letters(&api, &receiver, 1).await;
    let (status, _) = api
        .call(
            "PUT",
            "/v1/replays/again",
            Some(json!({"selection": {"filter": {}}})),
            None,
        )
        .await;
    assert_eq!(status, 201);
    let done = wait_session(&api, "again", "completed").await;
    assert_eq!(done["counts"]["failed"], 1);
    let dlq = api.get("/v1/dlq").await;
    let items = dlq["items"].as_array().unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["replay_session"], "again");
    assert_eq!(items[0]["attempts"], 5);
    assert_eq!(receiver.count(), 10);
    server.stop().await.unwrap();
}
