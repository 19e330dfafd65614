//! What the counters and gauges say after scripted requests, deliveries and a replay.

use prometheus_parse::Value as Sample;
use serde_json::json;
use switchyard_control_plane::Server;
use switchyard_control_plane::telemetry::{MetricsConfig, MetricsToken};

use crate::support::*;

#[tokio::test]
async fn a_scrape_counts_requests_keys_events_attempts_and_reads_the_gauges() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(config(dir.path(), MetricsConfig::default()))
        .await
        .unwrap();
    let receiver = receiver();
    let url = server.metrics_url();
    assert_eq!(
        url,
        format!("{}/metrics", server.url()),
        "on the API's listener by default"
    );

    let (_, before) = scrape(&url, None).await;
    assert_eq!(value(&before, "switchyard_events_accepted_total", &[]), 0.0);
    assert_eq!(attempts(&before, "failed"), 0.0);

    routes(&server, &receiver).await; // six keyed creates, executed
    // The same keyed request again: replayed; the key with another body: reused (422).
    let body = json!({"name": "ep-good", "spec": {}});
    let (status, _) = call(
        &server,
        "POST",
        "/v1/endpoints",
        Some(body),
        Some("create-endpoints-ep-good"),
    )
    .await;
    assert_eq!(status, 201);
    let other = json!({"name": "ep-other", "spec": {}});
    let (status, _) = call(
        &server,
        "POST",
        "/v1/endpoints",
        Some(other),
        Some("create-endpoints-ep-good"),
    )
    .await;
    assert_eq!(status, 422);

    // Five events (the copy of a keyed one is a duplicate, not accepted again): three to
    // the receiver's 200, two to its 500.
    let (status, first) = submit(&server, "ep-good", Some("order-1")).await;
    assert_eq!(status, 202, "{first}");
    let (status, duplicate) = submit(&server, "ep-good", Some("order-1")).await;
    assert_eq!((status, &duplicate["duplicate"]), (200, &json!(true)));
    for endpoint in ["ep-good", "ep-good", "ep-bad", "ep-bad"] {
        assert_eq!(submit(&server, endpoint, None).await.0, 202);
    }
    let event_id = first["id"].as_str().unwrap().to_owned();
    assert_eq!(
        call(
            &server,
            "GET",
            &format!("/v1/events/{event_id}"),
            None,
            None
        )
        .await
        .0,
        200
    );
    assert_eq!(
        call(&server, "GET", "/no/such/route-xyz123", None, None)
            .await
            .0,
        404
    );
    assert_eq!(
        call(&server, "DELETE", "/v1/events", None, None).await.0,
        405
    );

    let (text, s) = scrape_until(&url, None, "five recorded attempts", |s| {
        attempts(s, "succeeded") + attempts(s, "failed") >= 5.0
    })
    .await;
    assert_eq!(hits(&receiver), 5);
    assert_eq!(value(&s, "switchyard_events_accepted_total", &[]), 5.0);
    assert_eq!(attempts(&s, "succeeded"), 3.0);
    assert_eq!(attempts(&s, "failed"), 2.0);
    for hop in ["control_plane_edge", "edge_webhook"] {
        assert_eq!(
            value(&s, ATTEMPTS, &[("outcome", "failed"), ("hop", hop)]),
            0.0
        );
    }
    assert_eq!(finished(&s, "succeeded"), 3.0);
    assert_eq!(finished(&s, "dead"), 2.0);
    assert_eq!(finished(&s, "cancelled"), 0.0);
    let duration = "switchyard_delivery_attempt_duration_seconds";
    assert_eq!(value(&s, &format!("{duration}_count"), &[HOP]), 5.0);
    let buckets = s
        .samples
        .iter()
        .find(|x| x.metric == duration && x.labels.get("hop") == Some(HOP.1))
        .map(|x| x.value.clone());
    match buckets {
        Some(Sample::Histogram(buckets)) => {
            let inf = buckets.iter().find(|b| b.less_than.is_infinite());
            assert_eq!(
                inf.map(|b| b.count),
                Some(5.0),
                "+Inf holds every attempt: {buckets:?}"
            );
        }
        other => panic!("no attempt histogram: {other:?}"),
    }
    assert_eq!(
        value(&s, "switchyard_worker_lease_takeovers_total", &[]),
        0.0
    );
    // Store latency: every accepted event timed once; the worker's outcomes are written in
    // batches (one timed call each: as many as the attempts when each finished alone, fewer
    // when some finished together); claims and keyed transactions timed too (how many
    // claims ran depends on the worker's polling).
    let store = "switchyard_store_operation_duration_seconds_count";
    let op = |name: &'static str| value(&s, store, &[("operation", name)]);
    assert_eq!(op("accept_event"), 6.0, "5 new events and the duplicate");
    let batches = op("finish_attempts");
    assert!((1.0..=5.0).contains(&batches), "{batches} batches");
    assert!(op("claim_due") >= 1.0);
    assert!(
        op("begin") >= 6.0,
        "one write transaction per keyed request at least"
    );
    assert_eq!(idempotency(&s, "executed"), 6.0);
    assert_eq!(idempotency(&s, "replayed"), 1.0);
    assert_eq!(idempotency(&s, "reused"), 1.0);
    assert_eq!(idempotency(&s, "in_progress"), 0.0);
    assert_eq!(value(&s, "switchyard_dlq_depth", &[]), 2.0);
    assert_eq!(value(&s, "switchyard_deliveries_pending", &[]), 0.0);
    assert_eq!(value(&s, "switchyard_deliveries_in_flight", &[]), 0.0);
    assert_eq!(value(&s, "switchyard_replays_running", &[]), 0.0);

    // Requests by route template, never the raw path.
    assert_eq!(http(&s, "/v1/events", "POST", "202"), 5.0);
    assert_eq!(http(&s, "/v1/events", "POST", "200"), 1.0);
    assert_eq!(http(&s, "/v1/endpoints", "POST", "201"), 3.0);
    assert_eq!(http(&s, "/v1/endpoints", "POST", "422"), 1.0);
    let by_id = [
        ("route", "/v1/events/{id}"),
        ("method", "GET"),
        ("status", "200"),
    ];
    assert_eq!(
        raw_value(&text, "switchyard_http_requests_total", &by_id),
        1.0
    );
    assert_eq!(http(&s, "unmatched", "GET", "404"), 1.0);
    assert_eq!(http(&s, "/v1/events", "DELETE", "405"), 1.0);
    assert_eq!(
        value(
            &s,
            "switchyard_http_request_duration_seconds_count",
            &[("route", "/v1/events"), ("method", "POST")]
        ),
        6.0
    );
    for raw in ["xyz123", event_id.as_str(), "ep-good", "order-1"] {
        assert!(!text.contains(raw), "{raw:?} is in /metrics:\n{text}");
    }
    for tenant in [ALPHA, BETA] {
        assert!(
            !text.contains(tenant),
            "tenant {tenant} named without the flag:\n{text}"
        );
    }

    // A replay: the first re-delivery goes at once (and dies again), the second waits
    // 1000 s; cancelling withdraws it.
    let body = json!({"selection": {"filter": {}}, "rate_per_s": 0.001});
    let (status, started) = call(&server, "PUT", "/v1/replays/night-1", Some(body), None).await;
    assert_eq!(status, 201, "{started}");
    let (_, s) = scrape_until(&url, None, "the first re-delivery", |s| {
        attempts(s, "failed") >= 3.0
    })
    .await;
    assert_eq!(value(&s, "switchyard_replays_running", &[]), 1.0);
    assert_eq!(value(&s, "switchyard_deliveries_pending", &[]), 1.0);
    assert_eq!(
        value(&s, "switchyard_dlq_depth", &[]),
        1.0,
        "originals left the DLQ"
    );
    assert_eq!(finished(&s, "dead"), 3.0);
    let (status, cancelled) = call(
        &server,
        "POST",
        "/v1/replays/night-1/cancel",
        None,
        Some("cancel-1"),
    )
    .await;
    assert_eq!(
        (status, &cancelled["counts"]["cancelled"]),
        (200, &json!(1))
    );
    let (status, _) = call(
        &server,
        "POST",
        "/v1/replays/night-1/cancel",
        None,
        Some("cancel-1"),
    )
    .await;
    assert_eq!(status, 200);
    let (_, s) = scrape(&url, None).await;
    assert_eq!(
        finished(&s, "cancelled"),
        1.0,
        "the replayed cancel withdrew nothing more"
    );
    assert_eq!(value(&s, "switchyard_replays_running", &[]), 0.0);
    assert_eq!(value(&s, "switchyard_deliveries_pending", &[]), 0.0);
    assert_eq!(
        value(&s, "switchyard_dlq_depth", &[]),
        2.0,
        "the withdrawn one's original is back"
    );
    assert_eq!(idempotency(&s, "executed"), 7.0);
    assert_eq!(idempotency(&s, "replayed"), 2.0);
    assert!(
        http(&s, "/metrics", "GET", "200") >= 3.0,
        "scrapes count under their route"
    );
    server.stop().await.unwrap();
}

/// The edge protocol's hop and a lease that expires: an edge plane leases two relayed
/// attempts, reports one (succeeded, 42 ms) and vanishes with the other, which the reaper
/// records as failed (a takeover) and, with one attempt per hop, dead. With tenant labels
/// the reaped delivery's final state carries its tenant (looked up by the reaper).
#[tokio::test]
async fn edge_hops_and_lease_takeovers_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let metrics = MetricsConfig {
        tenant_labels: true,
        token: Some(MetricsToken::new(SCRAPE_TOKEN)),
        listen: None,
    };
    let mut config = config(dir.path(), metrics);
    config.delivery.lease_margin = std::time::Duration::from_millis(200);
    let server = Server::start(config).await.unwrap();
    let receiver = receiver();
    create(&server, "endpoints", "ep-relay", json!({})).await;
    let url = format!("{}/ok", receiver.base);
    create(
        &server,
        "targets",
        "tg-relay",
        json!({"url": url, "timeout_ms": 100}),
    )
    .await;
    let flow =
        json!({"endpoint": "ep-relay", "target": "tg-relay", "mode": "async_relay", "edge": "e1"});
    create(&server, "flows", "fl-relay", flow).await;
    for _ in 0..2 {
        assert_eq!(submit(&server, "ep-relay", None).await.0, 202);
    }
    let mut leased = Vec::new();
    for _ in 0..2 {
        let (status, lease) = call(
            &server,
            "POST",
            "/v1/edges/e1/lease",
            Some(json!({"max": 1})),
            None,
        )
        .await;
        assert_eq!(status, 200, "{lease}");
        leased.push(lease["attempts"][0].clone());
    }
    let reported = &leased[0];
    let report =
        json!({"lease_token": reported["lease_token"], "duration_ms": 42, "status_code": 200});
    let path = format!(
        "/v1/edges/e1/attempts/{}",
        reported["attempt_id"].as_str().unwrap()
    );
    let (status, ack) = call(&server, "POST", &path, Some(report), None).await;
    assert_eq!((status, &ack["recorded"]), (200, &json!(true)), "{ack}");

    let edge = ("hop", "edge_webhook");
    let (_, s) = scrape_until(
        &server.metrics_url(),
        Some(SCRAPE_TOKEN),
        "the reaper",
        |s| value(s, "switchyard_worker_lease_takeovers_total", &[]) >= 1.0,
    )
    .await;
    assert_eq!(
        value(&s, "switchyard_worker_lease_takeovers_total", &[]),
        1.0
    );
    assert_eq!(value(&s, ATTEMPTS, &[("outcome", "succeeded"), edge]), 1.0);
    assert_eq!(value(&s, ATTEMPTS, &[("outcome", "failed"), edge]), 1.0);
    assert_eq!(value(&s, ATTEMPTS, &[("outcome", "failed"), HOP]), 0.0);
    let duration = "switchyard_delivery_attempt_duration_seconds";
    assert_eq!(
        value(&s, &format!("{duration}_count"), &[edge]),
        1.0,
        "only the sent one"
    );
    assert_eq!(value(&s, &format!("{duration}_sum"), &[edge]), 0.042);
    let alpha = ("tenant", ALPHA);
    for outcome in ["succeeded", "dead"] {
        let labels = [("outcome", outcome), alpha];
        assert_eq!(
            value(&s, "switchyard_deliveries_finished_total", &labels),
            1.0,
            "{outcome}"
        );
    }
    assert_eq!(value(&s, "switchyard_dlq_depth", &[alpha]), 1.0);
    assert_eq!(value(&s, "switchyard_deliveries_in_flight", &[alpha]), 0.0);
    assert_eq!(
        hits(&receiver),
        0,
        "the edge plane sends, not the control plane"
    );
    server.stop().await.unwrap();
}

/// A copy of a keyed call out (a target test) that arrives while the first still waits for
/// the receiver answers 409 and counts as `in_progress`; the first counts as `executed`.
#[tokio::test]
async fn a_copy_of_a_keyed_call_in_progress_counts_as_in_progress() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(config(dir.path(), MetricsConfig::default()))
        .await
        .unwrap();
    let receiver = receiver();
    let url = format!("{}/slow", receiver.base);
    create(
        &server,
        "targets",
        "tg-slow",
        json!({"url": url, "timeout_ms": 5000}),
    )
    .await;
    let test = || {
        call(
            &server,
            "POST",
            "/v1/targets/tg-slow/test",
            Some(json!({})),
            Some("test-1"),
        )
    };
    let copy = async {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        test().await
    };
    let ((first, answer), (second, _)) = tokio::join!(test(), copy);
    assert_eq!((first, &answer["ok"]), (200, &json!(true)), "{answer}");
    assert_eq!(second, 409);
    let (_, s) = scrape(&server.metrics_url(), None).await;
    assert_eq!(idempotency(&s, "in_progress"), 1.0);
    assert_eq!(
        idempotency(&s, "executed"),
        2.0,
        "the target's create and the test"
    );
    assert_eq!(
        value(&s, ATTEMPTS, &[("outcome", "succeeded"), HOP]),
        0.0,
        "a test is no delivery"
    );
    server.stop().await.unwrap();
}

/// The worker's group commit, seen from outside: twenty attempts answered at about the same
/// moment are recorded in fewer store writes than attempts, and each is counted once.
#[tokio::test]
async fn attempts_that_finish_together_are_recorded_in_fewer_writes() {
    let dir = tempfile::tempdir().unwrap();
    let receiver = receiver();
    // The backlog first, with no worker: the worker then claims all twenty in one pass,
    // and the receiver's `/slow` answers them all about 600 ms later.
    let mut cfg = config(dir.path(), MetricsConfig::default());
    cfg.delivery.run_worker = false;
    let server = Server::start(cfg).await.unwrap();
    create(&server, "endpoints", "ep-slow", json!({})).await;
    let url = format!("{}/slow", receiver.base);
    let target = json!({"url": url, "timeout_ms": 5000});
    create(&server, "targets", "tg-slow", target).await;
    let flow = json!({"endpoint": "ep-slow", "target": "tg-slow"});
    create(&server, "flows", "fl-slow", flow).await;
    for _ in 0..20 {
        assert_eq!(submit(&server, "ep-slow", None).await.0, 202);
    }
    server.stop().await.unwrap();

    let server = Server::start(config(dir.path(), MetricsConfig::default()))
        .await
        .unwrap();
    let (_, s) = scrape_until(&server.metrics_url(), None, "20 deliveries", |s| {
        finished(s, "succeeded") == 20.0
    })
    .await;
    assert_eq!(attempts(&s, "succeeded"), 20.0, "each attempt counted once");
    let store = "switchyard_store_operation_duration_seconds_count";
    let writes = value(&s, store, &[("operation", "finish_attempts")]);
    assert!(
        (1.0..20.0).contains(&writes),
        "20 outcomes in {writes} writes: outcomes that finish together share one"
    );
    server.stop().await.unwrap();
}
