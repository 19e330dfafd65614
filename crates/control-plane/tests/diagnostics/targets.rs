//! `failing_target`: a receiver that answers 500 until it is fixed. The finding carries the
//! run (length, since when, last error) and two fixes: a test webhook, and a replay of the
//! run's dead deliveries under a session id of its own, so a repeated fix starts nothing new.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;
use switchyard_protocol::{FindingClass, Severity};

use crate::fix::{finding, run, run_twice, wait_finding};
use crate::support::*;

#[tokio::test]
async fn a_failing_target_is_found_and_its_dead_deliveries_replayed_once_after_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let api = Api::new(server.url());
    let healthy = Arc::new(AtomicBool::new(false));
    let receiver = {
        let healthy = healthy.clone();
        Receiver::start(move |_| {
            status(if healthy.load(Ordering::SeqCst) {
                200
            } else {
                500
            })
        })
    };
    api.route(&receiver.url, json!({})).await;
    let events = [api.event_id(1).await, api.event_id(2).await];
    for e in &events {
        api.wait_state(e, "dead", Duration::from_secs(10)).await;
    }
    let id = "failing_target:target:tg";
    let f = wait_finding(&api, id, Duration::from_secs(5), |_| true).await;
    assert_eq!(f.class, FindingClass::FailingTarget);
    assert_eq!(f.severity, Severity::Critical, "deliveries died in the run");
    assert_eq!(f.evidence.count, Some(10), "5 attempts each, all failed");
    assert!(
        f.evidence
            .last_error
            .as_deref()
            .unwrap()
            .starts_with("http_5xx"),
        "{:?}",
        f.evidence.last_error
    );
    assert!(f.evidence.since.is_some());
    assert!(f.detail.contains("2 deliveries died"), "{}", f.detail);
    let [test, replay] = &f.actions[..] else {
        panic!("a test webhook and a replay: {:#?}", f.actions)
    };
    assert_eq!(test.path, "/v1/targets/tg/test");
    assert_eq!(replay.method, "PUT");
    assert!(
        replay
            .path
            .starts_with("/v1/replays/diag-failing-target-tg-")
    );

    // The receiver is fixed; the test webhook says so.
    healthy.store(true, Ordering::SeqCst);
    let fixed_at = receiver.count();
    let (status, result) = run_twice(&api, test, "fix-test-tg").await;
    assert_eq!(status, 200, "{result}");
    assert_eq!(result["ok"], true, "{result}");

    // The replay, twice: the session id is the key (201, then 200 with the same session).
    let (status, _, session) = run(&api, replay, "fix-replay-tg").await;
    assert_eq!(status, 201, "{session}");
    let (again, _, same) = run(&api, replay, "fix-replay-tg").await;
    assert_eq!(again, 200, "{same}");
    assert_eq!(same["id"], session["id"]);
    assert_eq!(session["counts"]["total"], 2);
    let path = format!("/v1/replays/{}", session["id"].as_str().unwrap());
    wait_for_status(&api, &path, "completed").await;
    assert_eq!(api.get(&path).await["counts"]["succeeded"], 2);
    assert!(
        finding(&api, id).await.is_none(),
        "the run ended with the successes"
    );

    let after: Vec<String> = receiver.received()[fixed_at..]
        .iter()
        .map(|r| r.header("webhook-id").to_owned())
        .collect();
    for e in &events {
        assert_eq!(
            after.iter().filter(|w| *w == e).count(),
            1,
            "event {e} re-delivered exactly once: {after:?}"
        );
    }
    server.stop().await.unwrap();
}

async fn wait_for_status(api: &Api, path: &str, want: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let session = api.get(path).await;
        if session["status"] == want {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "{session:#}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// The replay fix is a bulk re-send: marked destructive and rate-limited. Once started while
/// the receiver still fails, the finding says the replay holds the deliveries (their
/// originals left the DLQ, so the DLQ count is 0) instead of "Nothing has died yet".
#[tokio::test]
async fn a_replay_of_a_failing_target_is_rate_limited_and_the_finding_says_it_holds_them() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let api = Api::new(server.url());
    let slow = Arc::new(AtomicBool::new(false));
    // Still failing after the fix; from the replay on, each answer takes 1.5 s, so the
    // re-deliveries stay open while the findings are read.
    let receiver = {
        let slow = slow.clone();
        Receiver::start(move |_| Reply {
            status: 500,
            delay: if slow.load(Ordering::SeqCst) {
                Duration::from_millis(1500)
            } else {
                Duration::ZERO
            },
        })
    };
    api.route(&receiver.url, json!({})).await;
    let events = [api.event_id(1).await, api.event_id(2).await];
    for e in &events {
        api.wait_state(e, "dead", Duration::from_secs(10)).await;
    }
    let id = "failing_target:target:tg";
    let f = wait_finding(&api, id, Duration::from_secs(5), |f| f.actions.len() == 2).await;
    let replay = &f.actions[1];
    assert!(replay.destructive, "a bulk re-send asks first: {replay:?}");
    assert_eq!(
        replay.body.as_ref().unwrap()["rate_per_s"],
        json!(10.0),
        "{replay:?}"
    );
    assert_eq!(f.evidence.replaying, None);

    slow.store(true, Ordering::SeqCst);
    let (status, _, session) = run(&api, replay, "fix-replay-tg").await;
    assert_eq!(status, 201, "{session}");
    assert_eq!(session["rate_per_s"], json!(10.0), "{session}");
    let session_id = session["id"].as_str().unwrap().to_owned();

    let f = finding(&api, id).await.expect("the target still fails");
    assert_eq!(f.evidence.replaying, Some(2), "{f:#?}");
    assert_eq!(
        f.evidence.replay_sessions,
        std::slice::from_ref(&session_id)
    );
    assert!(
        f.detail
            .contains(&format!("2 are being replayed (session {session_id})")),
        "{}",
        f.detail
    );
    assert!(!f.detail.contains("Nothing has died yet"), "{}", f.detail);
    assert_eq!(
        f.severity,
        Severity::Critical,
        "the replay goes to a failing target"
    );
    assert_eq!(
        f.actions.len(),
        1,
        "nothing left in the DLQ to replay: {f:#?}"
    );
    drop(receiver);
    server.stop().await.unwrap();
}
