//! An external effect (`POST /v1/targets/{name}/test`, seed rule 6): the claim commits first
//! and holds a lease; copies meanwhile get 409 in progress; an expired lease is taken over;
//! the call out carries the same `webhook-id` on every attempt; a paused holder whose lease
//! was taken over cannot overwrite the recovered result (fencing).

use std::sync::Arc;
use std::time::Duration;

use switchyard_control_plane::hooks::HookPoint;

use crate::support::{Gate, Observed, Recorder, TestServer, manual_clock, target, use_clock};

/// Creates the target "hook" pointing at `recorder`; returns its signing secret.
async fn with_target(s: &TestServer, recorder: &Recorder) -> String {
    let created = Observed::of(
        s.create("targets", "make-hook", target("hook", &recorder.url))
            .await,
    )
    .await;
    assert_eq!(created.status, 201);
    created.json()["status"]["signing_secret"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn a_target_test_sends_one_signed_webhook_and_replays_its_result() {
    let recorder = Recorder::start(&[]).await;
    let s = TestServer::start().await;
    let secret = with_target(&s, &recorder).await;
    let first = s.test_target("hook", "t1").await;
    assert_eq!(
        first.status,
        200,
        "{}",
        String::from_utf8_lossy(&first.body)
    );
    let result = first.json();
    assert_eq!(
        (result["ok"].as_bool(), result["status_code"].as_u64()),
        (Some(true), Some(200))
    );
    assert_eq!(
        recorder.ids(),
        vec![result["webhook_id"].as_str().unwrap().to_owned()]
    );
    assert!(
        recorder.signed_with(0, &secret),
        "signed with the target's secret"
    );
    assert!(
        !recorder.signed_with(0, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"),
        "and not with another"
    );

    let again = s.test_target("hook", "t1").await;
    assert_eq!((again.replayed, again.without_replay_flag()), (true, first));
    assert_eq!(
        recorder.ids().len(),
        1,
        "a replay does not call the receiver again"
    );

    let missing = s.test_target("nope", "t2").await;
    assert_eq!(
        (missing.status, missing.code().as_str()),
        (404, "not_found")
    );
    let missing_again = s.test_target("nope", "t2").await;
    assert_eq!(
        missing_again.without_replay_flag(),
        missing,
        "a 404 after the claim is stored"
    );
}

#[tokio::test]
async fn a_key_in_progress_answers_409_with_retry_after() {
    let recorder = Recorder::start(&[]).await;
    let gate = Gate::new(HookPoint::AfterClaim, "slow");
    let hooks = gate.clone();
    let s = Arc::new(TestServer::start_with(|c| c.hooks = hooks).await);
    with_target(&s, &recorder).await;
    let first = tokio::spawn({
        let s = s.clone();
        async move { s.test_target("hook", "slow").await }
    });
    gate.arrived.notified().await;
    let response = s
        .keyed(reqwest::Method::POST, "/v1/targets/hook/test", "slow")
        .json(&serde_json::json!({}))
        .send()
        .await
        .unwrap();
    let retry_after: u64 = response.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    let second = Observed::of(response).await;
    assert_eq!(
        (second.status, second.code().as_str()),
        (409, "idempotency_key_in_progress")
    );
    assert!((1..=10).contains(&retry_after), "Retry-After {retry_after}");
    gate.release.notify_one();
    let first = first.await.unwrap();
    assert_eq!(first.status, 200);
    let third = s.test_target("hook", "slow").await;
    assert_eq!(third.without_replay_flag(), first);
    assert_eq!(recorder.ids().len(), 1, "one call for one key");
}

#[tokio::test]
async fn an_expired_lease_is_taken_over_and_the_paused_holder_is_fenced_out() {
    // The recovering call is held at the receiver (answered 200 later); the paused holder's
    // late call is answered 503 at once and it tries to store "ok: false" while the key is
    // still in progress under the takeover's attempt. Only the attempt check stops it.
    let recorder = Recorder::start_holding(&[200, 503], true).await;
    let clock = manual_clock();
    let gate = Gate::new(HookPoint::AfterClaim, "k");
    let (hooks, c) = (gate.clone(), clock.clone());
    let s = Arc::new(
        TestServer::start_with(|config| {
            config.hooks = hooks;
            use_clock(config, &c);
            config.idempotency.lease = Duration::from_secs(10);
        })
        .await,
    );
    with_target(&s, &recorder).await;
    // The first holder claims the key and pauses before its call (a GC pause, a stuck thread).
    let paused = tokio::spawn({
        let s = s.clone();
        async move { s.test_target("hook", "k").await }
    });
    gate.arrived.notified().await;
    assert_eq!(
        s.test_target("hook", "k").await.status,
        409,
        "lease still held"
    );

    // The lease runs out; a retry takes the key over; its call is in flight.
    clock.advance_ms(10_001);
    let recovering = tokio::spawn({
        let s = s.clone();
        async move { s.test_target("hook", "k").await }
    });
    recorder.first_arrived.notified().await;

    // The paused holder wakes up, makes its call (503) and tries to store its result: fenced.
    gate.release.notify_one();
    let late = paused.await.unwrap();
    assert_eq!(
        (late.status, late.code().as_str()),
        (409, "idempotency_key_in_progress"),
        "the fenced holder answers with the key's state, not its own result"
    );

    recorder.release_first.notify_one();
    let recovered = recovering.await.unwrap();
    assert_eq!((recovered.status, recovered.replayed), (200, false));
    assert_eq!(recovered.json()["ok"], true);
    let replay = s.test_target("hook", "k").await;
    assert_eq!(
        replay.without_replay_flag(),
        recovered,
        "the stored result is the recovered one"
    );

    // Both calls carried the same webhook-id, so the receiver can tell the second is a copy.
    let ids = recorder.ids();
    assert_eq!(ids.len(), 2);
    assert_eq!(ids[0], ids[1]);
    assert_eq!(ids[0], recovered.json()["webhook_id"].as_str().unwrap());
}
