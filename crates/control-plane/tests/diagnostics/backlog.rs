//! `disabled_endpoint_backlog`, `stalled_replay` and `dlq_counter_drift`, each provoked, found,
//! fixed by its action under one Idempotency-Key twice, and gone; the receiver's log shows
//! nothing lost and nothing twice.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;
use switchyard_control_plane::Server;
use switchyard_protocol::{FindingClass, Severity};

use crate::fix::{diagnostics, finding, run, run_twice, wait_finding};
use crate::support::*;

/// A receiver that answers 500 until `healthy` is set.
async fn flaky(healthy: &Arc<AtomicBool>) -> Receiver {
    let healthy = healthy.clone();
    Receiver::start(move |_| {
        status(if healthy.load(Ordering::SeqCst) {
            200
        } else {
            500
        })
    })
}

/// A server with slow retries (deliveries stay open for seconds) routing `ep` to a receiver
/// that fails until `healthy` is set.
async fn slow_route(dir: &std::path::Path) -> (Server, Api, Arc<AtomicBool>, Receiver) {
    let server = Server::start(config(&dir.join("cp.db"), "0s,3s,3s,3s,3s"))
        .await
        .unwrap();
    let api = Api::new(server.url());
    let healthy = Arc::new(AtomicBool::new(false));
    let receiver = flaky(&healthy).await;
    api.route(&receiver.url, json!({})).await;
    (server, api, healthy, receiver)
}

#[tokio::test]
async fn a_disabled_endpoint_with_open_deliveries_is_found_and_enabled() {
    let dir = tempfile::tempdir().unwrap();
    let (server, api, healthy, receiver) = slow_route(dir.path()).await;
    let events = [api.event_id(1).await, api.event_id(2).await];
    wait_for("both first attempts", Duration::from_secs(5), || {
        receiver.count() >= 2
    })
    .await;
    let (status, body) = api
        .call("POST", "/v1/endpoints/ep/disable", None, Some("disable-ep"))
        .await;
    assert_eq!(status, 200, "{body}");
    let id = "disabled_endpoint_backlog:endpoint:ep";
    let f = wait_finding(&api, id, Duration::from_secs(5), |_| true).await;
    assert_eq!(f.class, FindingClass::DisabledEndpointBacklog);
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(f.evidence.count, Some(2));
    assert_eq!(f.evidence.delivery_ids.len(), 2);
    let enable = &f.actions[0];
    assert_eq!(
        (enable.method.as_str(), enable.path.as_str()),
        ("POST", "/v1/endpoints/ep/enable")
    );
    let (status, body) = run_twice(&api, enable, "fix-enable-ep").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"]["enabled"], true);
    assert!(finding(&api, id).await.is_none());

    healthy.store(true, Ordering::SeqCst);
    let fixed_at = receiver.count();
    for e in &events {
        api.wait_state(e, "succeeded", Duration::from_secs(15))
            .await;
    }
    let after = receiver.received()[fixed_at..].to_vec();
    for e in &events {
        let n = after.iter().filter(|r| r.header("webhook-id") == e).count();
        assert_eq!(n, 1, "event {e} accepted once");
    }
    server.stop().await.unwrap();
}

#[tokio::test]
async fn an_endpoint_a_retirement_is_draining_is_not_reported_as_disabled() {
    let dir = tempfile::tempdir().unwrap();
    let (server, api, _healthy, receiver) = slow_route(dir.path()).await;
    api.event_id(1).await;
    wait_for("the first attempt", Duration::from_secs(5), || {
        receiver.count() >= 1
    })
    .await;
    let (status, body) = api
        .call(
            "PUT",
            "/v1/retirements/r-ep",
            Some(json!({"kind": "endpoint", "name": "ep", "cascade_flows": true})),
            None,
        )
        .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["state"], "draining", "{body}");
    // Disabled by the retirement, with its delivery still open: the drain is the plan.
    let endpoint = api.get("/v1/endpoints/ep").await;
    assert_eq!(endpoint["status"]["enabled"], false, "{endpoint}");
    let id = "disabled_endpoint_backlog:endpoint:ep";
    assert!(finding(&api, id).await.is_none(), "reported while retiring");

    // Cancelled, the endpoint is enabled again as it was; disabled by hand, it is reported.
    let (status, body) = api
        .call(
            "POST",
            "/v1/retirements/r-ep/cancel",
            None,
            Some("cancel-r-ep"),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = api
        .call("POST", "/v1/endpoints/ep/disable", None, Some("disable-ep"))
        .await;
    assert_eq!(status, 200, "{body}");
    wait_finding(&api, id, Duration::from_secs(5), |_| true).await;
    server.stop().await.unwrap();
}

/// Two dead deliveries to `tg`, on a server that is then stopped.
async fn two_dead(db: &std::path::Path, receiver: &Receiver) -> Vec<String> {
    let server = Server::start(config(db, FAST)).await.unwrap();
    let api = Api::new(server.url());
    api.route(&receiver.url, json!({})).await;
    let events = vec![api.event_id(1).await, api.event_id(2).await];
    for e in &events {
        api.wait_state(e, "dead", Duration::from_secs(10)).await;
    }
    server.stop().await.unwrap();
    events
}

#[tokio::test]
async fn a_replay_nobody_sends_is_found_and_cancelled_with_its_originals_back_in_the_dlq() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cp.db");
    let healthy = Arc::new(AtomicBool::new(false));
    let receiver = flaky(&healthy).await;
    let events = two_dead(&db, &receiver).await;
    let before = receiver.count();

    // Every worker is down: the replay's re-deliveries are due and nobody sends them.
    let mut config = config(&db, FAST);
    config.delivery.run_worker = false;
    config.diagnostics.replay_stall = Duration::from_secs(1);
    let server = Server::start(config).await.unwrap();
    let api = Api::new(server.url());
    let (status, session) = api
        .call(
            "PUT",
            "/v1/replays/s-1",
            Some(json!({"selection": {"filter": {"target": "tg"}}})),
            None,
        )
        .await;
    assert_eq!(status, 201, "{session}");
    let id = "stalled_replay:replay:s-1";
    let f = wait_finding(&api, id, Duration::from_secs(10), |f| {
        f.evidence.count == Some(2)
    })
    .await;
    assert_eq!(f.class, FindingClass::StalledReplay);
    let cancel = &f.actions[0];
    assert_eq!(cancel.path, "/v1/replays/s-1/cancel");
    assert!(cancel.destructive, "a cancel cannot be undone");
    let (status, body) = run_twice(&api, cancel, "fix-cancel-s-1").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "cancelled");
    assert_eq!(body["counts"]["cancelled"], 2);
    assert!(finding(&api, id).await.is_none());
    let dlq = api.get("/v1/dlq").await;
    let mut back: Vec<String> = dlq["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["event_id"].as_str().unwrap().to_owned())
        .collect();
    back.sort();
    let mut expected = events.clone();
    expected.sort();
    assert_eq!(back, expected, "both originals are in the DLQ again");
    assert_eq!(receiver.count(), before, "nothing was sent");
    server.stop().await.unwrap();
}

#[tokio::test]
async fn tampered_dlq_counters_are_found_and_recounted_atomically() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cp.db");
    let healthy = Arc::new(AtomicBool::new(false));
    let receiver = flaky(&healthy).await;
    two_dead(&db, &receiver).await;
    let server = Server::start(config(&db, FAST)).await.unwrap();
    let api = Api::new(server.url());
    assert!(
        diagnostics(&api)
            .await
            .findings
            .iter()
            .all(|f| f.class != FindingClass::DlqCounterDrift)
    );

    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    sqlx::query("UPDATE dlq_counts SET count = count + 5 WHERE tenant = 'acme'")
        .execute(&pool)
        .await
        .unwrap();
    let id = "dlq_counter_drift:tenant:acme";
    let f = wait_finding(&api, id, Duration::from_secs(5), |_| true).await;
    assert_eq!((f.evidence.expected, f.evidence.actual), (Some(2), Some(7)));
    assert_eq!(f.evidence.count, Some(1), "one counter group drifted");
    let other = Api::new(server.url());
    let (status, theirs) = other
        .http
        .get(format!("{}/v1/diagnostics", server.url()))
        .bearer_auth(OTHER_TOKEN)
        .send()
        .await
        .map(|r| (r.status().as_u16(), r))
        .unwrap();
    assert_eq!(status, 200);
    let theirs: serde_json::Value = theirs.json().await.unwrap();
    assert_eq!(
        theirs["findings"],
        json!([]),
        "another tenant sees none of it"
    );

    let recount = &f.actions[0];
    assert_eq!(recount.path, "/v1/dlq/recount");
    let (status, body) = run_twice(&api, recount, "fix-recount").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body, json!({"dead": 2, "corrected": 1}));
    assert!(finding(&api, id).await.is_none());
    let (_, _, again) = run(&api, recount, "fix-recount-2").await;
    assert_eq!(
        again,
        json!({"dead": 2, "corrected": 0}),
        "nothing left to correct"
    );
    let stats = api.get("/v1/dlq/stats?group_by=target").await;
    assert_eq!(stats["total"], 2, "{stats}");
    assert_eq!(
        stats["groups"],
        json!([{"key": "tg", "count": 2}]),
        "{stats}"
    );
    server.stop().await.unwrap();
}
