//! Two workers on one database never deliver the same attempt; a stale lease is fenced.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use switchyard_control_plane::clock::SystemClock;
use switchyard_control_plane::delivery::http::AttemptResult;
use switchyard_control_plane::delivery::{DeliveryConfig, DeliveryContext, decide, reaper, worker};
use switchyard_control_plane::store::{DueScope, FinishedBy};

use crate::support::*;

async fn context(db: &std::path::Path, worker_id: &str) -> Arc<DeliveryContext> {
    context_with(db, worker_id, false).await
}

async fn context_with(
    db: &std::path::Path,
    worker_id: &str,
    unsafe_stale_claim: bool,
) -> Arc<DeliveryContext> {
    let store = switchyard_control_plane::store::open(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    let config = DeliveryConfig {
        worker_id: worker_id.to_owned(),
        poll_max: Duration::from_millis(20),
        unsafe_stale_claim,
        ..config(db, FAST).delivery
    };
    Arc::new(DeliveryContext::new(config, store, Arc::new(SystemClock)))
}

#[tokio::test]
async fn two_workers_never_deliver_the_same_attempt() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cp.db");
    let mut cfg = config(&db, FAST);
    cfg.delivery.run_worker = false; // only the two workers below deliver
    let server = switchyard_control_plane::Server::start(cfg).await.unwrap();
    let api = Api::new(server.url());
    let receiver = Receiver::start(|_| Reply {
        status: 200,
        delay: Duration::from_millis(2),
    });
    api.route(&receiver.url, json!({})).await;
    let mut events = Vec::new();
    for n in 0..200 {
        events.push(api.event_id(n).await);
    }
    // Both are ready before either starts, so they compete from the first pass.
    let (ctx_a, ctx_b) = (
        context(&db, "worker-a").await,
        context(&db, "worker-b").await,
    );
    let a = worker::spawn(ctx_a);
    let b = worker::spawn(ctx_b);
    wait_for("200 deliveries", Duration::from_secs(30), || {
        receiver.count() >= 200
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    a.abort();
    b.abort();

    let received = receiver.received();
    assert_eq!(received.len(), 200, "no attempt was sent twice");
    let attempt_ids: HashSet<_> = received
        .iter()
        .map(|r| r.header("switchyard-attempt-id"))
        .collect();
    let event_ids: HashSet<_> = received.iter().map(|r| r.header("webhook-id")).collect();
    assert_eq!((attempt_ids.len(), event_ids.len()), (200, 200));
    let mut by_worker: HashMap<String, usize> = HashMap::new();
    for e in &events {
        let d = api.wait_state(e, "succeeded", Duration::from_secs(5)).await;
        assert_eq!(d["attempts_made"], 1);
        *by_worker
            .entry(
                d["attempts"][0]["performed_by"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            )
            .or_default() += 1;
    }
    assert_eq!(
        by_worker.len(),
        2,
        "both workers delivered (they really competed): {by_worker:?}"
    );
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_stale_lease_holder_cannot_record_over_the_reaper() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cp.db");
    let mut cfg = config(&db, FAST);
    cfg.delivery.run_worker = false;
    let server = switchyard_control_plane::Server::start(cfg).await.unwrap();
    let api = Api::new(server.url());
    api.route("http://127.0.0.1:9/x", json!({})).await;
    let event = api.event_id(1).await;
    let endpoint = api.get("/v1/endpoints/ep").await;
    assert_eq!(endpoint["status"]["pending_deliveries"], 1, "{endpoint}");
    let listed = api.get("/v1/endpoints").await;
    assert_eq!(listed["items"][0]["status"]["pending_deliveries"], 1);
    let ctx = context(&db, "worker-a").await;
    let now = chrono::Utc::now().timestamp_millis();

    let claimed = ctx
        .store
        .claim_due(DueScope::Direct, now, 10, "worker-a", 100)
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);
    let stale = claimed[0].clone();
    // Nothing else can claim it while the lease holds.
    assert!(
        ctx.store
            .claim_due(DueScope::Direct, now + 10_000, 10, "worker-b", 100)
            .await
            .unwrap()
            .is_empty()
    );
    // The lease expires: the reaper counts the attempt failed and schedules attempt 2 …
    let reaped = reaper::reap_expired_leases(&ctx, stale.lease_until + 1)
        .await
        .unwrap();
    assert_eq!(reaped, 1);
    // … which worker-b claims.
    let fresh = ctx
        .store
        .claim_due(
            DueScope::Direct,
            stale.lease_until + 10_000,
            10,
            "worker-b",
            100,
        )
        .await
        .unwrap();
    assert_eq!(fresh.len(), 1);
    assert_eq!(fresh[0].number, 2);
    // The paused first holder wakes up with a success: fenced out, nothing written.
    let ok = AttemptResult {
        duration_ms: 5,
        status_code: Some(200),
        error_class: None,
        error: None,
    };
    let next = decide(&ok, stale.number, stale.max_attempts, &ctx.policy, now);
    let recorded = ctx
        .store
        .finish_attempt(stale.fence(), &ok, FinishedBy::Sender, next, now)
        .await
        .unwrap();
    assert!(!recorded, "a stale lease token must not record");
    let d = api.delivery_of(&event).await;
    assert_eq!(d["state"], "in_flight");
    assert_eq!(d["attempts"][0]["outcome"], "failed");
    server.stop().await.unwrap();
}

/// Negative control: the same two workers deciding from a read outside the write
/// transaction (check-then-act) do send some attempts twice, so the test above can fail.
#[tokio::test]
async fn negative_control_a_stale_read_claim_double_delivers() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cp.db");
    let mut cfg = config(&db, FAST);
    cfg.delivery.run_worker = false;
    let server = switchyard_control_plane::Server::start(cfg).await.unwrap();
    let api = Api::new(server.url());
    let receiver = Receiver::start(|_| Reply {
        status: 200,
        delay: Duration::from_millis(2),
    });
    api.route(&receiver.url, json!({})).await;
    for n in 0..200 {
        api.event_id(n).await;
    }
    let (ctx_a, ctx_b) = (
        context_with(&db, "worker-a", true).await,
        context_with(&db, "worker-b", true).await,
    );
    let a = worker::spawn(ctx_a);
    let b = worker::spawn(ctx_b);
    let seen = || {
        receiver
            .received()
            .iter()
            .map(|r| r.header("webhook-id").to_owned())
            .collect::<HashSet<_>>()
            .len()
    };
    wait_for("every event", Duration::from_secs(30), || seen() >= 200).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    a.abort();
    b.abort();
    assert!(
        receiver.count() > 200,
        "without the atomic claim some attempts go out twice ({} requests for 200 events)",
        receiver.count()
    );
    server.stop().await.unwrap();
}

/// Drains `server` (or, when `drain` is false, stops it at once) while an attempt is at the
/// receiver; returns the attempt's outcome as stored afterwards.
async fn stop_during_an_attempt(drain: bool) -> String {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cp.db");
    let server = switchyard_control_plane::Server::start(config(&db, FAST))
        .await
        .unwrap();
    let api = Api::new(server.url());
    let receiver = Receiver::start(|_| Reply {
        status: 200,
        delay: Duration::from_millis(800),
    });
    api.route(&receiver.url, json!({})).await;
    let event = api.event_id(1).await;
    wait_for(
        "the attempt at the receiver",
        Duration::from_secs(10),
        || receiver.count() == 1,
    )
    .await;
    if drain {
        server.drain(Duration::from_secs(10)).await.unwrap();
    } else {
        server.stop().await.unwrap();
    }
    let store = switchyard_control_plane::store::open(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    let found = store.event("acme", &event).await.unwrap().unwrap();
    let attempt = &found.deliveries[0].attempts[0];
    format!("{:?}", attempt.outcome)
}

#[tokio::test]
async fn a_draining_server_records_the_attempts_it_holds_before_it_exits() {
    assert_eq!(stop_during_an_attempt(true).await, "Succeeded");
    // Stopped without draining, the same attempt is left to its lease (another replica, or
    // this one after a restart, counts it as timed out and sends it again).
    assert_eq!(stop_during_an_attempt(false).await, "InFlight");
}
