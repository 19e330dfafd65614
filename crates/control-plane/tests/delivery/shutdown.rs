//! A stop signal mid-burst costs no duplicate webhook: SIGTERM to the control plane or the
//! edge plane lets the attempts in flight finish and records them before the process exits,
//! so after a restart the receiver has seen every event exactly once. The negative controls
//! stop without waiting (`--drain-timeout 0s`) and must produce duplicates; kill -9 may
//! duplicate only what was truly in flight at the kill.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::*;

/// Events in one burst, and how long the receiver holds each request: the burst takes
/// seconds to deliver (64 at a time from the control plane, 32 from the edge), so a stop
/// lands mid-burst however slowly a loaded machine submits it.
const BURST: u64 = 200;
const HOLD: Duration = Duration::from_secs(1);

fn slow(_: usize) -> Reply {
    Reply {
        status: 200,
        delay: HOLD,
    }
}

/// Submits the burst from 16 clients at once.
async fn burst(api: &Api) -> Vec<String> {
    let mut clients = tokio::task::JoinSet::new();
    for c in 0..16 {
        let api = api.clone();
        clients.spawn(async move {
            let mut ids = Vec::new();
            for n in (c..BURST).step_by(16) {
                ids.push(api.event_id(n).await);
            }
            ids
        });
    }
    let mut events = Vec::new();
    while let Some(ids) = clients.join_next().await {
        events.extend(ids.unwrap());
    }
    events
}

/// How many requests the receiver got per `webhook-id`.
fn copies(receiver: &Receiver) -> HashMap<String, usize> {
    let mut copies = HashMap::new();
    for r in receiver.received() {
        *copies.entry(r.header("webhook-id").to_owned()).or_default() += 1;
    }
    copies
}

fn duplicated(receiver: &Receiver) -> HashSet<String> {
    copies(receiver)
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|(id, _)| id)
        .collect()
}

/// Waits until every event succeeded; returns each one's delivery.
async fn all_succeed(api: &Api, events: &[String]) -> Vec<serde_json::Value> {
    let mut deliveries = Vec::new();
    for e in events {
        deliveries.push(
            api.wait_state(e, "succeeded", Duration::from_secs(30))
                .await,
        );
    }
    deliveries
}

/// A control plane started on `db` with a burst under way at a slow receiver, stopped by
/// `stop` once a third of the burst has reached the receiver; then restarted until every
/// event is delivered. Returns the receiver, the events, their deliveries, and when the stop
/// began and when the new process was started (every request the receiver got before that
/// came from the stopped one).
async fn control_plane_stopped_mid_burst(
    db: &Path,
    extra: &[&str],
    sigterm: bool,
) -> (Receiver, Vec<String>, Vec<serde_json::Value>, [Instant; 2]) {
    let mut args = vec!["--retry-schedule", FAST, "--delivery-lease-margin", "200ms"];
    args.extend_from_slice(extra);
    let mut cp = spawn_control_plane(db, &args).await;
    let api = Api::new(cp.url.clone().unwrap());
    let receiver = Receiver::start(slow);
    api.route(&receiver.url, json!({})).await;
    let events = burst(&api).await;
    wait_for("a third of the burst", Duration::from_secs(30), || {
        receiver.count() >= (BURST / 3) as usize
    })
    .await;
    assert!(receiver.count() < BURST as usize, "stopped mid-burst");
    let stopped_at = Instant::now();
    if sigterm {
        cp.terminate();
        let status = cp.exit_status(Duration::from_secs(20)).await;
        assert!(
            status.success(),
            "a drained control plane exits 0: {status}; its log ends:\n{}",
            cp.log_tail()
        );
    } else {
        cp.kill9().await;
    }

    let restarted_at = Instant::now();
    let cp = spawn_control_plane(db, &args).await;
    let api = Api::new(cp.url.clone().unwrap());
    let deliveries = all_succeed(&api, &events).await;
    (receiver, events, deliveries, [stopped_at, restarted_at])
}

#[tokio::test]
async fn sigterm_to_the_control_plane_mid_burst_sends_no_webhook_twice() {
    let dir = tempfile::tempdir().unwrap();
    let (receiver, events, deliveries, _) =
        control_plane_stopped_mid_burst(&dir.path().join("cp.db"), &[], true).await;
    let copies = copies(&receiver);
    assert_eq!(
        copies.len(),
        events.len(),
        "every event reached the receiver"
    );
    assert_eq!(
        duplicated(&receiver),
        HashSet::new(),
        "no webhook was sent twice"
    );
    for d in &deliveries {
        let attempts = d["attempts"].as_array().unwrap();
        assert_eq!(attempts.len(), 1, "each attempt recorded once: {d:#}");
        assert_eq!(attempts[0]["outcome"], "succeeded");
    }
}

#[tokio::test]
async fn negative_control_a_stop_that_does_not_wait_duplicates_what_was_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let (receiver, events, deliveries, _) = control_plane_stopped_mid_burst(
        &dir.path().join("cp.db"),
        &["--drain-timeout", "0s"],
        true,
    )
    .await;
    assert_eq!(copies(&receiver).len(), events.len(), "nothing lost");
    let duplicated = duplicated(&receiver);
    assert!(
        !duplicated.is_empty(),
        "without waiting, the attempts in flight are sent again"
    );
    // What was released says so, and was due again at once rather than after its lease.
    let interrupted: HashSet<String> = events
        .iter()
        .zip(&deliveries)
        .filter(|(_, d)| {
            d["attempts"][0]["error"]
                .as_str()
                .is_some_and(|e| e.contains("interrupted"))
        })
        .map(|(e, _)| e.clone())
        .collect();
    assert!(
        duplicated.is_subset(&interrupted),
        "every copy is of a released attempt: {duplicated:?} vs {interrupted:?}"
    );
}

#[tokio::test]
async fn kill_9_mid_burst_duplicates_only_the_attempts_in_flight_at_the_kill() {
    let dir = tempfile::tempdir().unwrap();
    let (receiver, events, _, [killed_at, restarted_at]) =
        control_plane_stopped_mid_burst(&dir.path().join("cp.db"), &[], false).await;
    assert_eq!(copies(&receiver).len(), events.len(), "nothing lost");
    // In flight at the kill: sent by the killed process (it reached the receiver before the
    // new one started: a request on the wire at the kill may arrive just after it), and not
    // answered and recorded by then. An answer is committed a few milliseconds after it
    // arrives on a quiet machine; the margin allows for a loaded one, and is still short
    // against the 1 s the receiver holds each request.
    let margin = Duration::from_millis(500);
    let in_flight: HashSet<String> = receiver
        .received()
        .iter()
        .filter(|r| r.received_at < restarted_at)
        .filter(|r| r.answered_at.is_none_or(|a| a + margin > killed_at))
        .map(|r| r.header("webhook-id").to_owned())
        .collect();
    let duplicated = duplicated(&receiver);
    assert!(
        duplicated.is_subset(&in_flight),
        "only attempts in flight at the kill were sent again: {:?}",
        duplicated.difference(&in_flight).collect::<Vec<_>>()
    );
    assert!(duplicated.len() <= 64, "at most the worker's concurrency");
}

/// An in-process control plane relaying to an edge process with a burst under way; the edge
/// is sent SIGTERM once a third of the burst reached the receiver, then started again.
async fn edge_stopped_mid_burst(extra: &[&str]) -> (Receiver, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let api = Api::new(server.url());
    let receiver = Receiver::start(slow);
    api.route(
        &receiver.url,
        json!({"mode": "async_relay", "edge": "edge-1"}),
    )
    .await;
    let mut edge = spawn_edge_with(&server.url(), "edge-1", extra);
    let events = burst(&api).await;
    wait_for("a third of the burst", Duration::from_secs(30), || {
        receiver.count() >= (BURST / 3) as usize
    })
    .await;
    assert!(receiver.count() < BURST as usize, "stopped mid-burst");
    edge.terminate();
    let status = edge.exit_status(Duration::from_secs(20)).await;
    assert!(
        status.success(),
        "a drained edge exits 0: {status}; its log ends:\n{}",
        edge.log_tail()
    );
    let _edge = spawn_edge(&server.url(), "edge-1");
    all_succeed(&api, &events).await;
    server.stop().await.unwrap();
    (receiver, events)
}

#[tokio::test]
async fn sigterm_to_the_edge_mid_burst_sends_no_webhook_twice() {
    let (receiver, events) = edge_stopped_mid_burst(&[]).await;
    assert_eq!(
        copies(&receiver).len(),
        events.len(),
        "every event delivered"
    );
    assert_eq!(
        duplicated(&receiver),
        HashSet::new(),
        "no webhook sent twice"
    );
}

#[tokio::test]
async fn negative_control_an_edge_that_does_not_wait_duplicates_what_was_in_flight() {
    let (receiver, events) = edge_stopped_mid_burst(&["--drain-timeout", "0s"]).await;
    assert_eq!(copies(&receiver).len(), events.len(), "nothing lost");
    assert!(
        !duplicated(&receiver).is_empty(),
        "without waiting, the edge's attempts in flight are sent again"
    );
}

#[tokio::test]
async fn readiness_turns_unready_when_draining_while_liveness_stays() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let http = reqwest::Client::new();
    let ready = http
        .get(format!("{}/readyz", server.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(ready.status(), 200);
    server
        .state
        .delivery
        .draining
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let ready = http
        .get(format!("{}/readyz", server.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(ready.status(), 503);
    assert_eq!(
        ready.json::<serde_json::Value>().await.unwrap()["status"],
        "draining"
    );
    let live = http
        .get(format!("{}/healthz", server.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(live.status(), 200, "liveness is not readiness");
    server.stop().await.unwrap();
}
