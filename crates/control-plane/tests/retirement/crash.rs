//! kill -9 of the control plane at each transition of a retirement, just before and just
//! after its commit (`SWITCHYARD_TEST_CRASH_AT=retirement_before:STATE` /
//! `retirement_after:STATE`, a `fault-injection` build), then a restart and retries of the
//! same `PUT`: one retirement, each state entered once, one delete (one tombstone per
//! resource), every delivery reached its outcome, none lost.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::{Value, json};
use switchyard_control_plane::store;
use switchyard_protocol::ResourceKind;

use crate::helpers::*;
use crate::support::{Api, FAST, Receiver, spawn_serve, status};

fn args() -> [&'static str; 6] {
    [
        "--retry-schedule",
        FAST,
        "--delivery-lease-margin",
        "300ms",
        "--retirement-every",
        "50ms",
    ]
}

/// `cascade`: the endpoint with its flow, starting `draining`; otherwise the target, which
/// its flow blocks until the test deletes the flow by hand.
async fn crash_then_retry(point: &str, cascade: bool) {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("cp.db").display());
    let mut cp = spawn_serve(&db, &args(), &[("SWITCHYARD_TEST_CRASH_AT", point)]).await;
    let api = Api::new(cp.url.clone().unwrap());
    let receiver = Receiver::start(|i| status(if i < 2 { 503 } else { 200 }));
    api.route(&receiver.url, json!({})).await;
    let mut events = Vec::new();
    for n in 0..3 {
        let (code, e) = api.submit(event(n)).await;
        assert_eq!(code, 202, "{e}");
        events.push(e["id"].as_str().unwrap().to_owned());
    }
    let (body, walk, retired): (Value, &[&str], &[(ResourceKind, &str)]) = if cascade {
        (
            json!({"kind": "endpoint", "name": "ep", "cascade_flows": true}),
            &["draining", "disabled", "scheduled", "deleted"],
            &[(ResourceKind::Endpoint, "ep"), (ResourceKind::Flow, "fl")],
        )
    } else {
        (
            json!({"kind": "target", "name": "tg"}),
            &["blocked", "draining", "disabled", "scheduled", "deleted"],
            &[(ResourceKind::Target, "tg")],
        )
    };
    // A crash at the state a retirement starts in is inside this very request: it gets no
    // answer.
    let first = try_retire(&api, "r-1", &body).await;
    if !cascade && first.is_some() {
        // Unblock it by hand: the advancer's next transition is the one that crashes.
        let (code, _) = api
            .call("DELETE", "/v1/flows/fl", None, Some("del-fl"))
            .await;
        assert_eq!(code, 204, "{point}");
    }
    let exit = cp.exit_status(Duration::from_secs(30)).await;
    assert!(
        !exit.success(),
        "{point}: the control plane was killed ({exit:?})"
    );
    if let Some((code, r)) = &first {
        assert_eq!(*code, 201, "{point}: {r}");
    }
    let created_by_retry = first.is_none() && point.starts_with("retirement_before:");

    let cp = spawn_serve(&db, &args(), &[]).await;
    let api = Api::new(cp.url.clone().unwrap());
    let (code, r) = try_retire(&api, "r-1", &body)
        .await
        .expect("an answer after restart");
    let expected = if created_by_retry { 201 } else { 200 };
    assert_eq!(
        code, expected,
        "{point}: the retry finds the retirement: {r}"
    );
    if !cascade && first.is_none() {
        // Killed while creating it blocked: unblock it now.
        let (code, _) = api
            .call("DELETE", "/v1/flows/fl", None, Some("del-fl"))
            .await;
        assert_eq!(code, 204, "{point}");
    }
    let done = wait_retirement(&api, "r-1", "deleted", Duration::from_secs(30)).await;
    assert_eq!(states(&done), walk, "{point}: each state once");
    let (code, again) = retire(&api, "r-1", body.clone()).await;
    assert_eq!(
        (code, &again["state"]),
        (200, &Value::from("deleted")),
        "{point}"
    );
    let list = api.get("/v1/retirements").await;
    assert_eq!(
        list["items"].as_array().unwrap().len(),
        1,
        "{point}: one retirement"
    );
    for id in &events {
        let e = api.get(&format!("/v1/events/{id}")).await;
        assert_eq!(e["deliveries"][0]["state"], "succeeded", "{point}: {e:#}");
    }
    let seen: HashSet<String> = receiver
        .received()
        .iter()
        .map(|r| r.header("webhook-id").to_owned())
        .collect();
    assert_eq!(seen, events.iter().cloned().collect(), "{point}: none lost");
    let (kind, name) = retired[0];
    assert_eq!(
        status_of(&api, &format!("/v1/{}/{name}", kind.plural())).await,
        404
    );
    tombstones_once(&db, point, retired).await;
    drop(cp);
}

/// One tombstone for each resource the retirement deleted: one delete each.
async fn tombstones_once(db: &str, point: &str, retired: &[(ResourceKind, &str)]) {
    let store = store::open(db).await.unwrap();
    for (kind, name) in retired {
        let kept = store.tombstones("acme", *kind, name).await.unwrap();
        assert_eq!(
            kept.len(),
            1,
            "{point}: {kind:?} {name} deleted once: {kept:?}"
        );
        assert_eq!(kept[0].retirement_id, "r-1");
    }
}

macro_rules! crash_points {
    ($($name:ident => $point:literal, $cascade:literal);* $(;)?) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            crash_then_retry($point, $cascade).await;
        }
    )*};
}

crash_points!(
    kill_9_before_blocked_commits => "retirement_before:blocked", false;
    kill_9_after_blocked_commits => "retirement_after:blocked", false;
    kill_9_before_unblocked_draining_commits => "retirement_before:draining", false;
    kill_9_after_unblocked_draining_commits => "retirement_after:draining", false;
    kill_9_before_draining_commits => "retirement_before:draining", true;
    kill_9_after_draining_commits => "retirement_after:draining", true;
    kill_9_before_disabled_commits => "retirement_before:disabled", true;
    kill_9_after_disabled_commits => "retirement_after:disabled", true;
    kill_9_before_scheduled_commits => "retirement_before:scheduled", true;
    kill_9_after_scheduled_commits => "retirement_after:scheduled", true;
    kill_9_before_deleted_commits => "retirement_before:deleted", true;
    kill_9_after_deleted_commits => "retirement_after:deleted", true;
);
