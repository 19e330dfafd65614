//! The Idempotency-Key rules of the contract, one by one.

use std::sync::Arc;
use std::time::Duration;

use reqwest::Method;
use serde_json::json;
use switchyard_control_plane::hooks::HookPoint;

use crate::support::{Gate, Observed, TestServer, endpoint, eventually, manual_clock, use_clock};

#[tokio::test]
async fn missing_empty_or_invalid_keys_are_rejected_and_nothing_executes() {
    let s = TestServer::start().await;
    let body = endpoint("orders");
    let missing = Observed::of(
        s.req(Method::POST, "/v1/endpoints")
            .json(&body)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        (missing.status, missing.code().as_str()),
        (400, "idempotency_key_missing")
    );
    for (key, code) in [
        ("", "idempotency_key_missing"),
        ("\"\"", "idempotency_key_missing"),
        (&"k".repeat(256)[..], "idempotency_key_invalid"),
        ("\"a\\nb\"", "idempotency_key_invalid"),
    ] {
        let r = Observed::of(s.create("endpoints", key, body.clone()).await).await;
        assert_eq!((r.status, r.code().as_str()), (400, code), "key {key:?}");
    }
    for (method, path) in [
        (Method::PATCH, "/v1/endpoints/orders"),
        (Method::PUT, "/v1/endpoints/orders"),
        (Method::DELETE, "/v1/endpoints/orders"),
        (Method::POST, "/v1/endpoints/orders/disable"),
    ] {
        let r = Observed::of(
            s.req(method.clone(), path)
                .json(&json!({"spec": {}}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(r.code(), "idempotency_key_missing", "{method} {path}");
    }
    assert_eq!(s.get("/v1/endpoints/orders").await.status(), 404);
}

#[tokio::test]
async fn a_completed_key_replays_the_stored_response_byte_for_byte() {
    let s = TestServer::start().await;
    let first = Observed::of(s.create("endpoints", "\"key-1\"", endpoint("orders")).await).await;
    assert_eq!((first.status, first.replayed), (201, false));
    // The bare form is the same key; re-serialising the body differently is the same request.
    let reordered = r#"{ "spec" : { "description" : "orders events" },  "name":"orders" }"#;
    let again = s
        .keyed(Method::POST, "/v1/endpoints", "key-1")
        .header("content-type", "application/json")
        .body(reordered)
        .send()
        .await
        .unwrap();
    let again = Observed::of(again).await;
    assert!(again.replayed, "Idempotent-Replayed: true on a replay");
    assert_eq!(
        again.without_replay_flag(),
        first,
        "status, headers and body are replayed exactly"
    );
    // The resource was created once.
    let list = Observed::of(s.get("/v1/endpoints").await).await.json();
    assert_eq!(list["items"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn the_same_key_with_a_different_request_is_a_422_and_executes_nothing() {
    let s = TestServer::start().await;
    assert_eq!(
        s.create("endpoints", "k", endpoint("orders"))
            .await
            .status(),
        201
    );
    let other = Observed::of(s.create("endpoints", "k", endpoint("payments")).await).await;
    assert_eq!(
        (other.status, other.code().as_str()),
        (422, "idempotency_key_reused")
    );
    assert_eq!(s.get("/v1/endpoints/payments").await.status(), 404);
    // Another path or method is another request too.
    let other_path = s
        .keyed(Method::PUT, "/v1/endpoints/orders", "k")
        .json(&json!({"spec": {}}))
        .send()
        .await
        .unwrap();
    assert_eq!(other_path.status(), 422);
    // If-Match is part of the fingerprint.
    let patch = json!({"spec": {"description": "x"}});
    let p1 = s
        .keyed(Method::PATCH, "/v1/endpoints/orders", "p")
        .header("if-match", "\"1\"")
        .json(&patch)
        .send()
        .await
        .unwrap();
    assert_eq!(p1.status(), 200);
    let p2 = s
        .keyed(Method::PATCH, "/v1/endpoints/orders", "p")
        .header("if-match", "\"2\"")
        .json(&patch)
        .send()
        .await
        .unwrap();
    assert_eq!(p2.status(), 422);
}

#[tokio::test]
async fn domain_errors_are_stored_and_replayed_as_stored() {
    let s = TestServer::start().await;
    // 409 name_taken is stored: after the conflicting resource is gone, the key still answers 409.
    s.create("endpoints", "a", endpoint("orders")).await;
    let conflict = Observed::of(s.create("endpoints", "b", endpoint("orders")).await).await;
    assert_eq!(conflict.code(), "name_taken");
    assert_eq!(
        s.keyed(Method::DELETE, "/v1/endpoints/orders", "d")
            .send()
            .await
            .unwrap()
            .status(),
        204
    );
    let replay = Observed::of(s.create("endpoints", "b", endpoint("orders")).await).await;
    assert!(replay.replayed);
    assert_eq!(replay.without_replay_flag(), conflict);
    assert_eq!(
        s.get("/v1/endpoints/orders").await.status(),
        404,
        "the replay did not execute"
    );

    // 412 is stored too.
    s.create("endpoints", "c", endpoint("orders")).await;
    let patch = json!({"spec": {"description": "x"}});
    let stale = || {
        s.keyed(Method::PATCH, "/v1/endpoints/orders", "s")
            .header("if-match", "\"5\"")
            .json(&patch)
            .send()
    };
    let first = Observed::of(stale().await.unwrap()).await;
    assert_eq!(first.status, 412);
    let second = Observed::of(stale().await.unwrap()).await;
    assert_eq!(
        (second.replayed, second.without_replay_flag()),
        (true, first)
    );

    // And 404.
    let absent = || s.keyed(Method::DELETE, "/v1/endpoints/ghost", "g").send();
    let first = Observed::of(absent().await.unwrap()).await;
    s.create("endpoints", "ghost", endpoint("ghost")).await;
    let second = Observed::of(absent().await.unwrap()).await;
    assert_eq!(
        (first.status, second.status, second.replayed),
        (404, 404, true)
    );
    assert_eq!(s.get("/v1/endpoints/ghost").await.status(), 200);
}

#[tokio::test]
async fn a_validation_failure_is_not_stored_so_a_corrected_retry_executes() {
    let s = TestServer::start().await;
    let bad = Observed::of(
        s.create(
            "targets",
            "k",
            json!({"name": "t", "spec": {"url": "nope"}}),
        )
        .await,
    )
    .await;
    assert_eq!(bad.status, 400);
    let fixed = Observed::of(
        s.create(
            "targets",
            "k",
            json!({"name": "t", "spec": {"url": "http://127.0.0.1:9/x"}}),
        )
        .await,
    )
    .await;
    assert_eq!((fixed.status, fixed.replayed), (201, false));

    // A 400 found only during execution (the merged spec is invalid) releases the key too.
    let bad_patch = s
        .keyed(Method::PATCH, "/v1/targets/t", "p")
        .json(&json!({"spec": {"timeout_ms": 0}}))
        .send()
        .await
        .unwrap();
    assert_eq!(bad_patch.status(), 400);
    let good_patch = s
        .keyed(Method::PATCH, "/v1/targets/t", "p")
        .json(&json!({"spec": {"timeout_ms": 500}}))
        .send()
        .await
        .unwrap();
    let good_patch = Observed::of(good_patch).await;
    assert_eq!(
        (
            good_patch.status,
            good_patch.json()["spec"]["timeout_ms"].as_i64()
        ),
        (200, Some(500))
    );

    // 401 is not stored either: the key is still free for an authenticated request.
    let unauth = s
        .client
        .post(format!("{}/v1/endpoints", s.base))
        .bearer_auth("wrong-token-000")
        .header("idempotency-key", "u")
        .json(&endpoint("x"))
        .send()
        .await
        .unwrap();
    assert_eq!(unauth.status(), 401);
    assert_eq!(
        s.create("endpoints", "u", endpoint("x")).await.status(),
        201
    );
}

#[tokio::test]
async fn keys_are_scoped_to_the_tenant() {
    let s = TestServer::start().await;
    let mine = Observed::of(
        s.create("endpoints", "shared-key", endpoint("orders"))
            .await,
    )
    .await;
    let theirs = s
        .client
        .post(format!("{}/v1/endpoints", s.base))
        .bearer_auth(crate::support::OTHER_TOKEN)
        .header("idempotency-key", "shared-key")
        .json(&endpoint("payments"))
        .send()
        .await
        .unwrap();
    let theirs = Observed::of(theirs).await;
    assert_eq!(
        (mine.status, theirs.status, theirs.replayed),
        (201, 201, false)
    );
    assert_eq!(theirs.json()["name"], "payments");
}

#[tokio::test]
async fn keys_expire_after_the_retention_window() {
    let clock = manual_clock();
    let c = clock.clone();
    let s = TestServer::start_with(|config| {
        use_clock(config, &c);
        config.idempotency.retention = Duration::from_secs(3600);
        config.sweep_every = Duration::from_millis(20);
    })
    .await;
    assert_eq!(
        s.create("endpoints", "old", endpoint("orders"))
            .await
            .status(),
        201
    );
    // Within the window the key is remembered: another body is a 422.
    clock.advance_ms(3_599_000);
    tokio::time::sleep(Duration::from_millis(60)).await;
    assert_eq!(
        s.create("endpoints", "old", endpoint("payments"))
            .await
            .status(),
        422
    );
    // Past it, the sweeper forgets the key and it can be used afresh.
    clock.advance_ms(2_000);
    let fresh = eventually(Duration::from_secs(5), async || {
        s.create("endpoints", "old", endpoint("payments"))
            .await
            .status()
            == 201
    })
    .await;
    assert!(fresh, "the key was swept after the retention window");
}

#[tokio::test]
async fn stored_responses_survive_a_restart() {
    let s = TestServer::start().await;
    let first = Observed::of(
        s.create(
            "targets",
            "k",
            json!({"name": "t", "spec": {"url": "http://127.0.0.1:9/x"}}),
        )
        .await,
    )
    .await;
    let s = s.restart(|_| {}).await;
    let again = Observed::of(
        s.create(
            "targets",
            "k",
            json!({"name": "t", "spec": {"url": "http://127.0.0.1:9/x"}}),
        )
        .await,
    )
    .await;
    assert_eq!((again.replayed, again.without_replay_flag()), (true, first));
}

#[tokio::test]
async fn a_request_whose_client_hangs_up_still_completes_and_is_replayed() {
    let gate = Gate::new(HookPoint::AfterEffect, "k");
    let hooks = gate.clone();
    let s = Arc::new(TestServer::start_with(|c| c.hooks = hooks).await);
    // The client gives up while the server is inside the request's transaction.
    let impatient = s
        .keyed(Method::POST, "/v1/endpoints", "k")
        .json(&endpoint("orders"))
        .timeout(Duration::from_millis(200))
        .send();
    let (result, ()) = tokio::join!(impatient, async {
        gate.arrived.notified().await;
        tokio::time::sleep(Duration::from_millis(400)).await;
        gate.release.notify_one();
    });
    assert!(result.is_err(), "the client timed out");
    // The server finished the work anyway: the retry is a replay, not a 409 until the lease ends.
    let done = eventually(Duration::from_secs(5), async || {
        let r = Observed::of(s.create("endpoints", "k", endpoint("orders")).await).await;
        r.status == 201 && r.replayed
    })
    .await;
    assert!(
        done,
        "the abandoned request completed and stored its response"
    );
    assert_eq!(s.get("/v1/endpoints/orders").await.status(), 200);
}
