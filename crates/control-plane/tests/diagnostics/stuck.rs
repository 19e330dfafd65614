//! `stuck_delivery`: a control plane killed (-9) mid-attempt leaves the delivery in flight;
//! restarted with no worker (all workers down), nobody reaps it, the finding shows, and its
//! requeue takes it back exactly once. The negative control: a requeue without the lease
//! guard, taken while the sender is alive, delivers twice.

use std::time::Duration;

use serde_json::json;
use switchyard_control_plane::Server;
use switchyard_protocol::{FindingClass, FixAction, Severity};

use crate::fix::{diagnostics, run, run_twice, wait_finding};
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
async fn a_delivery_left_in_flight_by_a_kill_9_is_found_and_requeued_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cp.db");
    let args = ["--retry-schedule", FAST, "--delivery-lease-margin", "200ms"];
    let mut cp = spawn_control_plane(&db, &args).await;
    let api = Api::new(cp.url.clone().unwrap());
    let receiver = Receiver::start(hold_first);
    api.route(&receiver.url, json!({})).await;
    let mut events = Vec::new();
    for n in 0..3 {
        events.push(api.event_id(n).await);
    }
    wait_for(
        "every event to reach the receiver",
        Duration::from_secs(10),
        || receiver.count() >= 3,
    )
    .await;
    let held = receiver.received()[0].header("webhook-id").to_owned();
    // The others were answered 200 at once, but their outcome may not be recorded yet: killed
    // now, they would be in flight too (a second stuck finding, a second copy each).
    for e in events.iter().filter(|e| **e != held) {
        api.wait_state(e, "succeeded", Duration::from_secs(10))
            .await;
    }
    cp.kill9().await;

    // Every worker is down: this replica only serves the API.
    let no_worker = [&args[..], &["--no-worker", "--diagnose-stuck-after", "1s"]].concat();
    let mut cp = spawn_control_plane(&db, &no_worker).await;
    let api = Api::new(cp.url.clone().unwrap());
    let stuck = api.delivery_of(&held).await;
    assert_eq!(stuck["state"], "in_flight");
    let id = stuck["id"].as_str().unwrap().to_owned();
    let finding = wait_finding(
        &api,
        &format!("stuck_delivery:delivery:{id}"),
        Duration::from_secs(15),
        |_| true,
    )
    .await;
    assert_eq!(finding.class, FindingClass::StuckDelivery);
    assert_eq!(finding.severity, Severity::Critical);
    assert_eq!(finding.evidence.delivery_ids, std::slice::from_ref(&id));
    assert!(
        finding.detail.contains("no worker is reaping"),
        "{}",
        finding.detail
    );
    let requeue = &finding.actions[0];
    assert_eq!(
        (requeue.method.as_str(), requeue.path.as_str()),
        ("POST", format!("/v1/deliveries/{id}/requeue").as_str())
    );
    assert_eq!(requeue.body, Some(json!({"attempt": 1})));
    assert!(!requeue.destructive);

    let (status, body) = run_twice(&api, requeue, "fix-stuck-1").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        json!({"delivery_id": id, "attempt": 1, "state": "pending"})
    );
    let after = diagnostics(&api).await;
    assert!(
        after
            .findings
            .iter()
            .all(|f| f.class != FindingClass::StuckDelivery),
        "{after:#?}"
    );
    // The same fix under another key finds nothing stuck: the attempt is not taken twice.
    let (again, _, problem) = run(&api, requeue, "fix-stuck-2").await;
    assert_eq!(again, 409, "{problem}");
    assert_eq!(problem["code"], "delivery_not_stuck");

    // A worker comes back and delivers it.
    cp.kill9().await;
    let cp = spawn_control_plane(&db, &args).await;
    let api = Api::new(cp.url.clone().unwrap());
    for e in &events {
        api.wait_state(e, "succeeded", Duration::from_secs(20))
            .await;
    }
    let d = api.delivery_of(&held).await;
    assert_eq!(
        d["attempts_made"], 2,
        "one attempt stuck, one after the requeue: {d:#}"
    );
    let attempts = d["attempts"].as_array().unwrap();
    assert_eq!(attempts[0]["outcome"], "failed");
    assert_eq!(attempts[0]["error_class"], "timeout");
    assert!(
        attempts[0]["error"]
            .as_str()
            .unwrap()
            .contains("requeued by an operator"),
        "{d:#}"
    );
    assert_eq!(attempts[1]["outcome"], "succeeded");
    let received = receiver.received();
    for e in &events {
        let copies = received
            .iter()
            .filter(|r| r.header("webhook-id") == e)
            .count();
        let expected = if *e == held { 2 } else { 1 };
        assert_eq!(
            copies, expected,
            "event {e}: the held copy and one after the requeue"
        );
    }
}

/// Requeues the delivery while its first attempt is still with a live receiver (lease not
/// expired): the answer, and how many copies the receiver got once it succeeded.
async fn requeue_while_sending(unguarded: bool) -> (u16, String, usize) {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(&dir.path().join("cp.db"), FAST);
    config.delivery.unguarded_requeue = unguarded;
    let server = Server::start(config).await.unwrap();
    let api = Api::new(server.url());
    let receiver = Receiver::start(|i| {
        if i == 0 {
            Reply {
                status: 200,
                delay: Duration::from_millis(1500),
            }
        } else {
            status(200)
        }
    });
    api.route(&receiver.url, json!({})).await;
    let event = api.event_id(1).await;
    wait_for("the first attempt", Duration::from_secs(10), || {
        receiver.count() >= 1
    })
    .await;
    let id = api.delivery_of(&event).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let requeue = FixAction {
        label: "requeue".into(),
        method: "POST".into(),
        path: format!("/v1/deliveries/{id}/requeue"),
        body: Some(json!({"attempt": 1})),
        destructive: false,
    };
    let (status, _, body) = run(&api, &requeue, "requeue-live").await;
    api.wait_state(&event, "succeeded", Duration::from_secs(10))
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let copies = receiver
        .received()
        .iter()
        .filter(|r| r.header("webhook-id") == event)
        .count();
    server.stop().await.unwrap();
    (
        status,
        body["code"].as_str().unwrap_or_default().to_owned(),
        copies,
    )
}

#[tokio::test]
async fn the_lease_guard_keeps_a_requeue_off_a_live_attempt_and_without_it_the_event_goes_twice() {
    let (status, code, copies) = requeue_while_sending(false).await;
    assert_eq!((status, code.as_str()), (409, "delivery_not_stuck"));
    assert_eq!(copies, 1, "delivered once");

    let (status, _, copies) = requeue_while_sending(true).await;
    assert_eq!(status, 200, "the unguarded requeue took a live attempt");
    assert_eq!(
        copies, 2,
        "negative control: the receiver got the event twice"
    );
}

#[tokio::test]
async fn a_requeue_names_its_attempt_and_bad_input_names_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let api = Api::new(server.url());
    let path = "/v1/deliveries/dlv_nope/requeue";
    for (body, field) in [
        (json!({}), "attempt"),
        (json!({"attempt": 0}), "attempt"),
        (json!({"attempt": "1"}), "attempt"),
        (json!({"attempt": 1, "extra": true}), "extra"),
        (json!([1]), "body"),
    ] {
        let (status, problem) = api
            .call("POST", path, Some(body.clone()), Some("k-bad"))
            .await;
        assert_eq!(status, 400, "{body}: {problem}");
        assert_eq!(problem["code"], "validation_failed");
        assert_eq!(problem["field"], field, "{body}");
    }
    let (status, problem) = api
        .call("POST", path, Some(json!({"attempt": 1})), None)
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (400, Some("idempotency_key_missing"))
    );
    let (status, problem) = api
        .call("POST", path, Some(json!({"attempt": 1})), Some("k-absent"))
        .await;
    assert_eq!((status, problem["code"].as_str()), (404, Some("not_found")));
    server.stop().await.unwrap();
}
