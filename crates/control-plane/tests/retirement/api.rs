//! The API of retirement sessions: the id's idempotency (201, 200, 422), dry runs, bad
//! input, blocked retirements naming their flows, cascades, cancel.

use std::time::Duration;

use serde_json::json;

use crate::helpers::*;
use crate::support::Api;

const WAIT: Duration = Duration::from_secs(10);

async fn target_with_flows(api: &Api, flows: &[&str]) {
    api.create("endpoints", "ep", json!({})).await;
    api.create(
        "targets",
        "tg",
        json!({"url": "http://127.0.0.1:9/hook", "timeout_ms": 1000}),
    )
    .await;
    for flow in flows {
        api.create("flows", flow, json!({"endpoint": "ep", "target": "tg"}))
            .await;
    }
}

#[tokio::test]
async fn the_id_names_one_retirement_and_a_dry_run_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, api) = server(dir.path()).await;
    target_with_flows(&api, &[]).await;
    let body = json!({"kind": "target", "name": "tg", "grace_seconds": 3600});

    let (status, dry) = retire(
        &api,
        "r-dry",
        json!({"kind": "target", "name": "tg", "dry_run": true}),
    )
    .await;
    assert_eq!(status, 200, "{dry}");
    assert_eq!(dry["dry_run"], true);
    assert_eq!(dry["would_start"], "draining");
    assert_eq!(status_of(&api, "/v1/retirements/r-dry").await, 404);

    let (status, first) = retire(&api, "r-1", body.clone()).await;
    assert_eq!(status, 201, "{first}");
    assert_eq!(first["id"], "r-1");
    assert_eq!(first["state"], "draining");
    assert_eq!(first["dlq"], "keep");
    let (status, again) = retire(&api, "r-1", body.clone()).await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["id"], "r-1");
    // The defaults written out are the same request.
    let spelled = json!({"kind": "target", "name": "tg", "grace_seconds": 3600, "dlq": "keep", "cascade_flows": false});
    assert_eq!(retire(&api, "r-1", spelled).await.0, 200);
    let (status, reused) = retire(
        &api,
        "r-1",
        json!({"kind": "target", "name": "tg", "grace_seconds": 5}),
    )
    .await;
    assert_eq!(status, 422, "{reused}");
    assert_eq!(reused["code"], "retirement_reused");
    // Another id for a resource already retiring.
    let (status, busy) = retire(&api, "r-2", body.clone()).await;
    assert_eq!(status, 409, "{busy}");
    assert_eq!(busy["code"], "resource_retiring");
    let list = api.get("/v1/retirements").await;
    assert_eq!(list["items"].as_array().unwrap().len(), 1);
    let scheduled = wait_retirement(&api, "r-1", "scheduled", WAIT).await;
    assert!(scheduled["delete_at"].is_string());
    let listed = api.get("/v1/retirements?state=scheduled").await;
    assert_eq!(listed["items"][0]["id"], "r-1");
    assert!(
        api.get("/v1/retirements?state=deleted").await["items"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn bad_input_is_refused_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, api) = server(dir.path()).await;
    target_with_flows(&api, &[]).await;
    for (id, body, field) in [
        ("bad id!", json!({"kind": "target", "name": "tg"}), "id"),
        (
            "r-1",
            json!({"kind": "target", "name": "Not A Name"}),
            "name",
        ),
        (
            "r-1",
            json!({"kind": "target", "name": "tg", "grace_seconds": 604801}),
            "grace_seconds",
        ),
        ("r-1", json!({"kind": "planet", "name": "tg"}), "body"),
        (
            "r-1",
            json!({"kind": "target", "name": "tg", "bogus": 1}),
            "body",
        ),
        (
            "r-1",
            json!({"kind": "target", "name": "tg", "dlq": "burn"}),
            "body",
        ),
    ] {
        let path = format!(
            "/v1/retirements/{}",
            id.replace(' ', "%20").replace('!', "%21")
        );
        let (status, problem) = api.call("PUT", &path, Some(body.clone()), None).await;
        assert_eq!(status, 400, "{body}: {problem}");
        assert_eq!(problem["code"], "validation_failed");
        assert_eq!(problem["field"], field, "{body}: {problem}");
    }
    let (status, problem) = retire(&api, "r-1", json!({"kind": "target", "name": "nope"})).await;
    assert_eq!(status, 404, "{problem}");
    assert_eq!(problem["code"], "not_found");
    let (status, problem) = api
        .call("GET", "/v1/retirements?state=gone", None, None)
        .await;
    assert_eq!((status, problem["field"].as_str()), (400, Some("state")));
    assert_eq!(status_of(&api, "/v1/retirements/nope").await, 404);
    let (status, _) = api
        .call("POST", "/v1/retirements/nope/cancel", None, Some("k-nope"))
        .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn a_target_used_by_flows_is_blocked_naming_each_until_they_are_gone() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, api) = server(dir.path()).await;
    target_with_flows(&api, &["fl-a", "fl-b"]).await;
    let (status, r) = retire(&api, "r-1", json!({"kind": "target", "name": "tg"})).await;
    assert_eq!(status, 201, "{r}");
    assert_eq!(r["state"], "blocked");
    let blockers: Vec<_> = r["blockers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["kind"].as_str().unwrap(), b["name"].as_str().unwrap()))
        .collect();
    assert_eq!(blockers, [("flow", "fl-a"), ("flow", "fl-b")]);
    assert_eq!(names(&r["impact"]["flows"]), ["fl-a", "fl-b"]);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(api.get("/v1/retirements/r-1").await["state"], "blocked");
    assert_eq!(
        status_of(&api, "/v1/targets/tg").await,
        200,
        "nothing deleted while blocked"
    );

    let (status, _) = api
        .call("DELETE", "/v1/flows/fl-a", None, Some("del-a"))
        .await;
    assert_eq!(status, 204);
    let still = wait_until_blockers(&api, 1).await;
    assert_eq!(still["blockers"][0]["name"], "fl-b");
    let (status, _) = api
        .call("DELETE", "/v1/flows/fl-b", None, Some("del-b"))
        .await;
    assert_eq!(status, 204);
    let done = wait_retirement(&api, "r-1", "deleted", WAIT).await;
    assert_eq!(
        states(&done),
        ["blocked", "draining", "disabled", "scheduled", "deleted"]
    );
    assert_eq!(status_of(&api, "/v1/targets/tg").await, 404);
}

async fn wait_until_blockers(api: &Api, n: usize) -> serde_json::Value {
    for _ in 0..200 {
        let r = api.get("/v1/retirements/r-1").await;
        if r["blockers"].as_array().unwrap().len() == n {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the blockers never came down to {n}");
}

#[tokio::test]
async fn cascade_retires_the_flows_first() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, api) = server(dir.path()).await;
    target_with_flows(&api, &["fl-a", "fl-b"]).await;
    let (status, r) = retire(
        &api,
        "r-1",
        json!({"kind": "target", "name": "tg", "cascade_flows": true, "grace_seconds": 1}),
    )
    .await;
    assert_eq!(status, 201, "{r}");
    assert_eq!(r["state"], "draining");
    assert_eq!(names(&r["cascaded_flows"]), ["fl-a", "fl-b"]);
    // The flows no longer route while the retirement runs.
    let flow = api.get("/v1/flows/fl-a").await;
    assert_eq!(flow["status"]["enabled"], false);
    assert_eq!(flow["status"]["retirement"], "r-1");
    // A new flow to a retiring target is refused.
    let (status, refused) = api
        .call(
            "POST",
            "/v1/flows",
            Some(json!({"name": "fl-c", "spec": {"endpoint": "ep", "target": "tg"}})),
            Some("new-flow"),
        )
        .await;
    assert_eq!(status, 409, "{refused}");
    assert_eq!(refused["code"], "resource_retiring");
    wait_retirement(&api, "r-1", "deleted", WAIT).await;
    for gone in ["/v1/flows/fl-a", "/v1/flows/fl-b", "/v1/targets/tg"] {
        assert_eq!(status_of(&api, gone).await, 404, "{gone}");
    }
    assert_eq!(
        status_of(&api, "/v1/endpoints/ep").await,
        200,
        "the endpoint stays"
    );
}

#[tokio::test]
async fn cancel_mid_grace_restores_everything_and_deletes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, api) = server(dir.path()).await;
    target_with_flows(&api, &["fl"]).await;
    let before = api.get("/v1/endpoints/ep").await;
    let (status, r) = retire(
        &api,
        "r-1",
        json!({"kind": "endpoint", "name": "ep", "cascade_flows": true, "grace_seconds": 3600}),
    )
    .await;
    assert_eq!(status, 201, "{r}");
    let (status, refused) = api.submit(event(1)).await;
    assert_eq!(status, 409, "{refused}");
    assert_eq!(refused["code"], "endpoint_disabled");
    let (status, refused) = api
        .call("POST", "/v1/endpoints/ep/enable", None, Some("enable-1"))
        .await;
    assert_eq!(
        (status, refused["code"].as_str()),
        (409, Some("resource_retiring"))
    );
    let scheduled = wait_retirement(&api, "r-1", "scheduled", WAIT).await;
    assert!(scheduled["delete_at"].is_string());

    let (status, cancelled) = api
        .call("POST", "/v1/retirements/r-1/cancel", None, Some("cancel-1"))
        .await;
    assert_eq!(status, 200, "{cancelled}");
    assert_eq!(cancelled["state"], "cancelled");
    assert_eq!(
        states(&cancelled),
        ["draining", "disabled", "scheduled", "cancelled"]
    );
    // The same key answers the stored response; another key finds it cancelled.
    let (status, replayed) = api
        .call("POST", "/v1/retirements/r-1/cancel", None, Some("cancel-1"))
        .await;
    assert_eq!((status, &replayed), (200, &cancelled));
    let (status, again) = api
        .call("POST", "/v1/retirements/r-1/cancel", None, Some("cancel-2"))
        .await;
    assert_eq!((status, again["state"].as_str()), (200, Some("cancelled")));

    let endpoint = api.get("/v1/endpoints/ep").await;
    assert_eq!(endpoint["status"]["enabled"], true);
    assert!(endpoint["status"].get("retirement").is_none());
    assert_eq!(endpoint["spec"], before["spec"]);
    let flow = api.get("/v1/flows/fl").await;
    assert!(flow["status"].get("enabled").is_none(), "{flow}");
    assert_eq!(status_of(&api, "/v1/targets/tg").await, 200);
    let (status, accepted) = api.submit(event(2)).await;
    assert_eq!(status, 202, "{accepted}");
    assert_eq!(
        accepted["deliveries"].as_array().unwrap().len(),
        1,
        "the flow routes again"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        api.get("/v1/retirements/r-1").await["state"],
        "cancelled",
        "final"
    );
}

#[tokio::test]
async fn cancel_keeps_a_disabled_endpoint_disabled_and_a_deleted_one_cannot_be_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, api) = server(dir.path()).await;
    api.create("endpoints", "ep", json!({})).await;
    api.create("endpoints", "quiet", json!({})).await;
    let (status, _) = api
        .call("POST", "/v1/endpoints/quiet/disable", None, Some("off"))
        .await;
    assert_eq!(status, 200);
    retire(
        &api,
        "r-quiet",
        json!({"kind": "endpoint", "name": "quiet", "grace_seconds": 3600}),
    )
    .await;
    wait_retirement(&api, "r-quiet", "scheduled", WAIT).await;
    let (status, _) = api
        .call(
            "POST",
            "/v1/retirements/r-quiet/cancel",
            None,
            Some("c-quiet"),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        api.get("/v1/endpoints/quiet").await["status"]["enabled"],
        false
    );

    retire(&api, "r-ep", json!({"kind": "endpoint", "name": "ep"})).await;
    wait_retirement(&api, "r-ep", "deleted", WAIT).await;
    let (status, problem) = api
        .call("POST", "/v1/retirements/r-ep/cancel", None, Some("c-ep"))
        .await;
    assert_eq!(status, 409, "{problem}");
    assert_eq!(problem["code"], "retirement_not_cancellable");
    assert_eq!(status_of(&api, "/v1/endpoints/ep").await, 404);
    // The retirement stays as the record, and the name can be used again.
    assert_eq!(api.get("/v1/retirements/r-ep").await["state"], "deleted");
    let (status, _) = api
        .call(
            "POST",
            "/v1/endpoints",
            Some(json!({"name": "ep", "spec": {}})),
            Some("recreate-ep"),
        )
        .await;
    assert_eq!(status, 201);
}
