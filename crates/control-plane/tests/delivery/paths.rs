//! Every delivery path: exactly 5 attempts per hop then the DLQ; headers and signatures;
//! sync mode.

use std::time::{Duration, Instant};

use serde_json::json;
use switchyard_control_plane::delivery::signing;

use crate::support::*;

/// Checks the 5 requests of one dead delivery as the receiver saw them.
fn assert_five_attempts(received: &[Received], event_id: &str) {
    assert_eq!(received.len(), 5, "exactly 5 attempts reach the receiver");
    let mut attempt_ids = std::collections::HashSet::new();
    for (i, r) in received.iter().enumerate() {
        assert_eq!(
            r.header("webhook-id"),
            event_id,
            "webhook-id is the event id on every attempt"
        );
        assert_eq!(r.header("switchyard-attempt"), (i + 1).to_string());
        assert!(attempt_ids.insert(r.header("switchyard-attempt-id").to_owned()));
    }
}

async fn assert_dead_in_dlq(api: &Api, event_id: &str, class: &str, performed_by: &str) {
    let d = api
        .wait_state(event_id, "dead", Duration::from_secs(20))
        .await;
    assert_eq!(d["attempts_made"], 5);
    assert_eq!(d["error_class"], class);
    let hop = if performed_by.starts_with("edge:") {
        "edge_webhook"
    } else {
        "control_plane_webhook"
    };
    assert_eq!(d["exhausted_hop"], hop, "the hop whose budget ran out");
    let attempts = d["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 5);
    for (i, a) in attempts.iter().enumerate() {
        assert_eq!(a["number"], i + 1);
        assert_eq!(
            (a["hop"].as_str(), &a["hop_attempt"]),
            (Some(hop), &json!(i + 1))
        );
        assert_eq!(a["outcome"], "failed");
        assert!(
            a["performed_by"]
                .as_str()
                .unwrap()
                .starts_with(performed_by),
            "{a}"
        );
    }
    assert!(
        d.get("next_attempt_at").is_none(),
        "a dead delivery plans no attempt"
    );
    let page = api.get("/v1/dlq?target=tg").await;
    assert!(
        page["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["delivery_id"] == d["id"]
                && e["error_class"] == class
                && e["exhausted_hop"] == hop),
        "the DLQ lists it: {page}"
    );
}

#[tokio::test]
async fn async_inline_makes_exactly_five_attempts_then_dlq() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let api = Api::new(server.url());
    let receiver = Receiver::start(|_| status(500));
    api.route(&receiver.url, json!({"mode": "async_inline"}))
        .await;
    let event = api.event_id(1).await;
    assert_dead_in_dlq(&api, &event, "http_5xx", "worker-").await;
    tokio::time::sleep(Duration::from_millis(600)).await; // nothing more arrives
    assert_five_attempts(&receiver.received(), &event);
    server.stop().await.unwrap();
}

#[tokio::test]
async fn connect_and_timeout_failures_are_classified() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let api = Api::new(server.url());
    // A port nobody listens on: take one and release it.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    api.create("endpoints", "ep", json!({})).await;
    api.create(
        "targets",
        "tg",
        json!({"url": format!("http://{closed}/x"), "timeout_ms": 2000}),
    )
    .await;
    api.create("flows", "fl", json!({"endpoint": "ep", "target": "tg"}))
        .await;
    let event = api.event_id(1).await;
    assert_dead_in_dlq(&api, &event, "connect", "worker-").await;

    let slow = Receiver::start(|_| Reply {
        status: 200,
        delay: Duration::from_secs(2),
    });
    api.call(
        "PATCH",
        "/v1/targets/tg",
        Some(json!({"spec": {"url": slow.url, "timeout_ms": 100}})),
        Some("p1"),
    )
    .await;
    let event = api.event_id(2).await;
    let d = api
        .wait_state(&event, "dead", Duration::from_secs(20))
        .await;
    assert_eq!(d["error_class"], "timeout");
    assert_eq!(slow.count(), 5);
    server.stop().await.unwrap();
}

#[tokio::test]
async fn sync_mode_answers_after_the_first_attempt_and_retries_in_background() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let api = Api::new(server.url());
    let receiver = Receiver::start(|_| Reply {
        status: 200,
        delay: Duration::from_millis(300),
    });
    api.route(&receiver.url, json!({"mode": "sync"})).await;

    let started = Instant::now();
    let (code, body) = api
        .submit(json!({"endpoint": "ep", "event_type": "t", "payload": {"x": 1}}))
        .await;
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "answered before the attempt finished"
    );
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["sync_attempt"]["outcome"], "succeeded");
    assert_eq!(body["sync_attempt"]["status_code"], 200);
    assert_eq!(body["deliveries"][0]["state"], "succeeded");
    assert_eq!(
        receiver.count(),
        1,
        "the receiver had the event when the answer came"
    );

    // A failing first attempt: 202 with the outcome; the rest happen in the background.
    receiver.set(|_| status(503));
    let (code, body) = api
        .submit(json!({"endpoint": "ep", "event_type": "t", "payload": {"x": 2}}))
        .await;
    assert_eq!(code, 202, "{body}");
    assert_eq!(body["sync_attempt"]["outcome"], "failed");
    assert_eq!(body["sync_attempt"]["error_class"], "http_5xx");
    let event = body["id"].as_str().unwrap().to_owned();
    assert_dead_in_dlq(&api, &event, "http_5xx", "").await;
    let for_event: Vec<_> = receiver
        .received()
        .into_iter()
        .filter(|r| r.header("webhook-id") == event)
        .collect();
    assert_five_attempts(&for_event, &event);
    server.stop().await.unwrap();
}

#[tokio::test]
async fn webhook_headers_and_signature_verify_at_the_receiver() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let api = Api::new(server.url());
    let receiver = Receiver::start(|_| status(204));
    let secret = api.route(&receiver.url, json!({})).await;
    assert!(secret.starts_with("whsec_"));
    let (_, body) = api
        .submit(json!({"endpoint": "ep", "event_type": "order.paid", "payload": {"amount": 5}}))
        .await;
    let event = body["id"].as_str().unwrap().to_owned();
    let d = api
        .wait_state(&event, "succeeded", Duration::from_secs(10))
        .await;
    let r = receiver.received().pop().unwrap();
    assert_eq!(r.header("content-type"), "application/json");
    assert_eq!(r.header("webhook-id"), event);
    assert_eq!(r.header("switchyard-attempt"), "1");
    assert_eq!(
        r.header("switchyard-attempt-id"),
        d["attempts"][0]["id"].as_str().unwrap()
    );
    let ts: i64 = r.header("webhook-timestamp").parse().unwrap();
    assert!((chrono::Utc::now().timestamp() - ts).abs() < 30);
    let sig = r.header("webhook-signature");
    assert!(sig.starts_with("v1,"));
    assert!(
        signing::verify(&secret, &event, ts, r.body.as_bytes(), sig),
        "signature verifies"
    );
    assert!(!signing::verify(&secret, &event, ts, b"tampered", sig));
    let body: serde_json::Value = serde_json::from_str(&r.body).unwrap();
    assert_eq!(body["type"], "order.paid");
    assert_eq!(body["data"]["amount"], 5);
    server.stop().await.unwrap();
}

#[tokio::test]
async fn async_relay_through_a_real_edge_process_makes_five_attempts_then_dlq() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let api = Api::new(server.url());
    let receiver = Receiver::start(|_| status(500));
    let secret = api
        .route(
            &receiver.url,
            json!({"mode": "async_relay", "edge": "edge-1"}),
        )
        .await;
    let _edge = spawn_edge(&server.url(), "edge-1");
    let event = api.event_id(1).await;
    assert_dead_in_dlq(&api, &event, "http_5xx", "edge:edge-1").await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    let received = receiver.received();
    assert_five_attempts(&received, &event);
    let r = &received[0];
    let ts: i64 = r.header("webhook-timestamp").parse().unwrap();
    assert!(signing::verify(
        &secret,
        &event,
        ts,
        r.body.as_bytes(),
        r.header("webhook-signature")
    ));

    // And a healthy receiver gets it once.
    receiver.set(|_| status(200));
    let event = api.event_id(2).await;
    let d = api
        .wait_state(&event, "succeeded", Duration::from_secs(10))
        .await;
    assert_eq!(d["attempts_made"], 1);
    assert_eq!(d["attempts"][0]["performed_by"], "edge:edge-1");
    server.stop().await.unwrap();
}

#[tokio::test]
async fn relay_with_no_edge_counts_five_failed_hops_then_dlq() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(&dir.path().join("cp.db"), FAST);
    config.delivery.edge_pickup_timeout = Duration::from_millis(100);
    let server = switchyard_control_plane::Server::start(config)
        .await
        .unwrap();
    let api = Api::new(server.url());
    let receiver = Receiver::start(|_| status(200));
    api.route(
        &receiver.url,
        json!({"mode": "async_relay", "edge": "nobody"}),
    )
    .await;
    let event = api.event_id(1).await;
    let d = api
        .wait_state(&event, "dead", Duration::from_secs(20))
        .await;
    assert_eq!(d["attempts_made"], 5);
    assert_eq!(d["error_class"], "connect");
    assert_eq!(d["exhausted_hop"], "control_plane_edge");
    assert!(
        d["attempts"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["hop"] == "control_plane_edge")
    );
    assert_eq!(receiver.count(), 0);
    server.stop().await.unwrap();
}

/// Each hop has its own budget: hand-offs no edge plane took (control plane → edge) do not
/// spend the edge plane's attempts at the webhook, which still get all five, and the DLQ
/// says the webhook hop ran out.
#[tokio::test]
async fn each_hop_has_its_own_budget_of_five() {
    let dir = tempfile::tempdir().unwrap();
    let schedule = "0s,400ms,400ms,400ms,400ms";
    let mut config = config(&dir.path().join("cp.db"), schedule);
    config.delivery.edge_pickup_timeout = Duration::from_millis(150);
    let server = switchyard_control_plane::Server::start(config)
        .await
        .unwrap();
    let api = Api::new(server.url());
    let receiver = Receiver::start(|_| status(503));
    api.route(
        &receiver.url,
        json!({"mode": "async_relay", "edge": "edge-1"}),
    )
    .await;
    let event = api.event_id(1).await;
    // No edge plane yet: the hand-offs fail; after two, the edge plane comes up.
    let started = Instant::now();
    while api.delivery_of(&event).await["attempts_made"]
        .as_u64()
        .unwrap()
        < 2
    {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "no hand-off failed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let _edge = spawn_edge(&server.url(), "edge-1");
    let d = api
        .wait_state(&event, "dead", Duration::from_secs(20))
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_five_attempts(&receiver.received(), &event);
    assert_eq!(d["exhausted_hop"], "edge_webhook");
    let attempts = d["attempts"].as_array().unwrap();
    let at = |hop: &str| {
        attempts
            .iter()
            .filter(|a| a["hop"] == hop)
            .collect::<Vec<_>>()
    };
    let (handoffs, sends) = (at("control_plane_edge"), at("edge_webhook"));
    assert!((2..5).contains(&handoffs.len()), "{handoffs:?}");
    assert_eq!(sends.len(), 5);
    for (i, a) in sends.iter().enumerate() {
        assert_eq!(a["hop_attempt"], i + 1);
        assert_eq!(a["performed_by"], "edge:edge-1");
    }
    assert_eq!(d["attempts_made"], handoffs.len() + 5);
    let page = api.get("/v1/dlq").await;
    assert_eq!(page["items"][0]["exhausted_hop"], "edge_webhook", "{page}");
    server.stop().await.unwrap();
}
