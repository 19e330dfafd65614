//! What receivers get: one signature per unexpired secret, computed when the request is
//! sent, on first attempts, retries and replays; the expiry the API shows is the one the
//! signer obeys (an injected clock on both sides of it).

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use switchyard_control_plane::Server;
use switchyard_control_plane::clock::{Clock, ManualClock};

use crate::support::{Api, FAST, Receiver, Reply, config, status, wait_for};
use crate::{expire, first_secret_id, overlap, rotate, signature_count, verifies};

/// A server on `clock` with a receiver answering `reply`, and the route `ep` → `tg` in
/// `mode`; returns the target's first secret.
async fn start(
    dir: &std::path::Path,
    clock: &ManualClock,
    mode: serde_json::Value,
    reply: impl Fn(usize) -> Reply + Send + Sync + 'static,
) -> (Server, Api, Receiver, String) {
    let receiver = Receiver::start(reply);
    let mut config = config(&dir.join("cp.db"), FAST);
    config.clock = Arc::new(clock.clone());
    let server = Server::start(config).await.unwrap();
    let api = Api::new(server.url());
    let first = api.route(&receiver.url, mode).await;
    (server, api, receiver, first)
}

fn millis(rfc3339: &serde_json::Value) -> i64 {
    chrono::DateTime::parse_from_rfc3339(rfc3339.as_str().unwrap())
        .unwrap()
        .timestamp_millis()
}

/// Moves `clock` to `at` (unix ms).
fn set(clock: &ManualClock, at: i64) {
    clock.advance_ms(at - clock.now_ms());
}

#[tokio::test]
async fn two_signatures_during_the_overlap_and_one_from_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(chrono::Utc::now().timestamp_millis());
    let (server, api, receiver, old) =
        start(dir.path(), &clock, json!({"mode": "sync"}), |_| status(200)).await;
    let old_id = first_secret_id(&api).await;

    let (code, rotated) = rotate(&api, "rotate-1", overlap(60)).await;
    assert_eq!(code, 201, "{rotated}");
    let new = rotated["secret"]["value"].as_str().unwrap().to_owned();
    assert!(new.starts_with("whsec_") && new != old);
    assert_eq!(rotated["previous"][0]["id"], old_id.as_str());
    let ends = millis(&rotated["previous"][0]["expires_at"]);
    assert_eq!(
        ends,
        clock.now_ms() + 60_000,
        "the overlap the request asked for"
    );
    // The target's status shows the open overlap and when it ends.
    let target = api.get("/v1/targets/tg").await;
    assert_eq!(target["status"]["rotation"]["open"], true, "{target}");
    assert_eq!(millis(&target["status"]["rotation"]["ends_at"]), ends);
    assert_eq!(
        target["status"]["signing_secrets"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    for at in [clock.now_ms(), ends - 1] {
        set(&clock, at);
        api.event_id(1).await;
        let r = receiver.received().pop().unwrap();
        assert_eq!(
            signature_count(&r),
            2,
            "at {at}: {}",
            r.header("webhook-signature")
        );
        assert!(verifies(&old, &r), "the old secret still verifies");
        assert!(verifies(&new, &r), "the returned value verifies");
    }
    set(&clock, ends);
    api.event_id(2).await;
    let r = receiver.received().pop().unwrap();
    assert_eq!(signature_count(&r), 1, "{}", r.header("webhook-signature"));
    assert!(verifies(&new, &r));
    assert!(!verifies(&old, &r), "the expired secret signs no more");
    let target = api.get("/v1/targets/tg").await;
    assert!(target["status"].get("rotation").is_none(), "{target}");
    server.stop().await.unwrap();
}

#[tokio::test]
async fn expiring_the_old_secret_ends_its_signature_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(chrono::Utc::now().timestamp_millis());
    let (server, api, receiver, old) =
        start(dir.path(), &clock, json!({"mode": "sync"}), |_| status(200)).await;
    let old_id = first_secret_id(&api).await;
    let (_, rotated) = rotate(&api, "rotate-1", json!({})).await;
    let new = rotated["secret"]["value"].as_str().unwrap().to_owned();
    // The default overlap is a day.
    assert_eq!(
        millis(&rotated["previous"][0]["expires_at"]),
        clock.now_ms() + 86_400_000
    );
    clock.advance_ms(1_000);
    let (code, expired) = expire(&api, "promote-1", &old_id).await;
    assert_eq!(code, 200, "{expired}");
    assert_eq!(millis(&expired["secret"]["expires_at"]), clock.now_ms());
    api.event_id(1).await;
    let r = receiver.received().pop().unwrap();
    assert_eq!(signature_count(&r), 1);
    assert!(verifies(&new, &r) && !verifies(&old, &r));
    let target = api.get("/v1/targets/tg").await;
    assert!(
        target["status"].get("rotation").is_none(),
        "promoted: {target}"
    );
    server.stop().await.unwrap();
}

/// Moves `clock` on in small steps until the receiver has had `n` requests. The retry of an
/// attempt is scheduled when its outcome is recorded, which may be a moment after the
/// receiver answered: one jump made before that would schedule it past the jump.
async fn until_sent(clock: &ManualClock, receiver: &Receiver, n: usize) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while receiver.count() < n {
        assert!(
            std::time::Instant::now() < deadline,
            "request {n} never came"
        );
        clock.advance_ms(250);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_retry_and_a_replay_are_signed_when_they_are_sent() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(chrono::Utc::now().timestamp_millis());
    // Five failures: the first event's delivery dies; everything after succeeds.
    let (server, api, receiver, old) = start(dir.path(), &clock, json!({}), |n| {
        status(if n < 5 { 503 } else { 200 })
    })
    .await;
    let event = api.event_id(1).await;
    wait_for("the first attempt", Duration::from_secs(10), || {
        receiver.count() == 1
    })
    .await;
    assert_eq!(signature_count(&receiver.received()[0]), 1);

    // Rotated between the first attempt and its retry: the retry carries both.
    let (code, rotated) = rotate(&api, "rotate-1", overlap(600)).await;
    assert_eq!(code, 201, "{rotated}");
    let new = rotated["secret"]["value"].as_str().unwrap().to_owned();
    until_sent(&clock, &receiver, 2).await;
    let retry = &receiver.received()[1];
    assert_eq!(retry.header("switchyard-attempt"), "2");
    assert_eq!(signature_count(retry), 2);
    assert!(verifies(&old, retry) && verifies(&new, retry));

    for n in 3..=5 {
        until_sent(&clock, &receiver, n).await;
    }
    let dead = api
        .wait_state(&event, "dead", Duration::from_secs(10))
        .await;

    // The overlap is over when the replay is sent: only the new secret signs it.
    clock.advance_ms(600_000);
    let (code, session) = api
        .call(
            "PUT",
            "/v1/replays/after-rotation",
            Some(json!({"selection": {"delivery_ids": [dead["id"]]}})),
            None,
        )
        .await;
    assert_eq!(code, 201, "{session}");
    wait_for("the replay", Duration::from_secs(10), || {
        receiver.count() == 6
    })
    .await;
    let replayed = &receiver.received()[5];
    assert_eq!(replayed.header("webhook-id"), event);
    assert_eq!(signature_count(replayed), 1);
    assert!(verifies(&new, replayed) && !verifies(&old, replayed));
    server.stop().await.unwrap();
}
