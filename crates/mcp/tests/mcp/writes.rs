//! Keyed writes against the real control plane: each tool lands once, a retry with the same
//! key is the original result, concurrent calls make one write, a reused key is refused,
//! and restarts change nothing.

use serde_json::json;
use switchyard_mcp::Mode;

use crate::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_write_tool_lands_once_and_a_retry_returns_the_original_result() {
    let dir = tempfile::tempdir().unwrap();
    let plane = Plane::start(dir.path()).await;
    let c = console_with_profile(&dir.path().join("console"), &plane.url()).await;
    let agent = connect(&c, Mode::Destructive).await;

    let first = ok(
        &agent,
        "create_resource",
        endpoint("k-ep", "orders", "Orders"),
    )
    .await;
    assert_eq!(first["state"], "confirmed", "{first}");
    assert_eq!(first["replayed"], false);
    assert_eq!(first["operation"]["via"], "mcp (test-agent 1.0)");
    assert_eq!(first["operation"]["result_version"], 1);
    // The retry (a new JSON-RPC id, same key and arguments; another wait) is the original.
    let mut retry_args = endpoint("k-ep", "orders", "Orders");
    retry_args["wait_seconds"] = json!(3);
    let retry = ok(&agent, "create_resource", retry_args).await;
    assert_eq!(retry["replayed"], true);
    assert_eq!(without_replayed(first.clone()), without_replayed(retry));

    let steps = [
        (
            "create_resource",
            json!({"request_key": "k-t", "kind": "target", "name": "crm",
                   "spec": {"url": "https://crm.example.com/hook"}}),
        ),
        (
            "create_resource",
            json!({"request_key": "k-f", "kind": "flow", "name": "to-crm",
                   "spec": {"endpoint": "orders", "target": "crm"}}),
        ),
        (
            "update_resource",
            json!({"request_key": "k-u", "kind": "endpoint", "name": "orders",
                   "patch": {"description": "Orders (EU)"}}),
        ),
        (
            "apply_resource",
            json!({"request_key": "k-a", "kind": "target", "name": "crm",
                   "spec": {"url": "https://crm.example.com/v2", "timeout_ms": 5000}}),
        ),
        (
            "disable_endpoint",
            json!({"request_key": "k-d", "name": "orders"}),
        ),
        (
            "enable_endpoint",
            json!({"request_key": "k-e", "name": "orders"}),
        ),
        (
            "delete_resource",
            json!({"request_key": "k-x", "kind": "flow", "name": "to-crm"}),
        ),
    ];
    for (tool, args) in &steps {
        let r = ok(&agent, tool, args.clone()).await;
        assert_eq!(r["state"], "confirmed", "{tool}: {r}");
        let again = ok(&agent, tool, args.clone()).await;
        assert_eq!(again["replayed"], true, "{tool}");
        assert_eq!(without_replayed(r), without_replayed(again), "{tool}");
    }

    // One operation per key, and one write each on the server (versions count them).
    let ops = all_ops(&c).await;
    assert_eq!(ops.len(), 1 + steps.len());
    assert!(
        ops.iter()
            .all(|o| o.state == switchyard_core::OpState::Done)
    );
    let endpoints = plane.list("endpoints").await;
    assert_eq!(endpoints.len(), 1);
    // create, update, disable, enable.
    assert_eq!(endpoints[0].version, 4);
    assert_eq!(endpoints[0].spec["description"], "Orders (EU)");
    assert_eq!(endpoints[0].status["enabled"], true);
    let targets = plane.list("targets").await;
    assert_eq!(targets[0].version, 2);
    assert_eq!(targets[0].spec["timeout_ms"], 5000);
    assert!(plane.list("flows").await.is_empty());

    // The operator sees whose they are.
    let audit = c
        .audit(switchyard_core::AuditQuery {
            action_prefix: Some("write.enqueue".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(audit.len(), ops.len());
    assert!(audit.iter().all(|e| e.actor == "mcp (test-agent 1.0)"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_concurrent_identical_calls_from_two_servers_make_one_write() {
    let dir = tempfile::tempdir().unwrap();
    let plane = Plane::start(dir.path()).await;
    let data = dir.path().join("console");
    let c = console_with_profile(&data, &plane.url()).await;
    // A second server process on the same data dir: its own console handle.
    let other = console(&data).await;
    let agents = [
        connect(&c, Mode::Writes).await,
        connect(&other, Mode::Writes).await,
    ];
    let agents = std::sync::Arc::new(agents);
    let calls = (0..50).map(|i| {
        let agents = agents.clone();
        tokio::spawn(async move {
            ok(
                &agents[i % 2],
                "create_resource",
                endpoint("k-50", "orders", "Orders"),
            )
            .await
        })
    });
    let results: Vec<_> = futures::future::join_all(calls)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(results.iter().filter(|r| r["replayed"] == false).count(), 1);
    let first = without_replayed(results[0].clone());
    for r in &results {
        assert_eq!(without_replayed(r.clone()), first);
    }
    assert_eq!(first["state"], "confirmed");
    assert_eq!(all_ops(&c).await.len(), 1);
    let endpoints = plane.list("endpoints").await;
    assert_eq!(endpoints.len(), 1);
    assert_eq!(endpoints[0].version, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reused_key_or_bad_arguments_are_refused_naming_the_field_and_queue_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let plane = Plane::start(dir.path()).await;
    let c = console_with_profile(&dir.path().join("console"), &plane.url()).await;
    let agent = connect(&c, Mode::Destructive).await;
    ok(
        &agent,
        "create_resource",
        endpoint("k-1", "orders", "Orders"),
    )
    .await;
    // Defaults written out are the same write: a retry that spells them is a replay.
    let spelled = json!({"request_key": "k-1", "kind": "endpoint", "name": "orders",
                         "spec": {"description": "Orders", "event_types": []}});
    let again = ok(&agent, "create_resource", spelled).await;
    assert_eq!(again["replayed"], true, "{again}");

    for (tool, args) in [
        (
            "create_resource",
            json!({"request_key": "k-1", "kind": "endpoint", "name": "orders",
                   "spec": {"description": "Orders", "event_types": ["order.paid"]}}),
        ),
        ("create_resource", endpoint("k-1", "orders", "Other")),
        ("create_resource", endpoint("k-1", "billing", "Orders")),
        (
            "apply_resource",
            json!({"request_key": "k-1", "kind": "endpoint", "name": "orders",
                   "spec": {"description": "Orders"}}),
        ),
        (
            "start_replay",
            json!({"request_key": "k-1", "selection": {"delivery_ids": ["dlv_1"]}}),
        ),
    ] {
        let e = tool_error(&agent, tool, args).await;
        assert_eq!(e["code"], "request_key_reused", "{tool}: {e}");
        assert_eq!(e["field"], "request_key");
    }

    for (args, field) in [
        (
            json!({"request_key": "k-2", "kind": "target", "name": "t",
                   "spec": {"url": "ftp://nowhere"}}),
            "spec.url",
        ),
        (
            json!({"request_key": "k-2", "name": "t", "spec": {}}),
            "kind",
        ),
        (
            json!({"request_key": "k-2", "kind": "endpoint", "name": "t", "spec": "all"}),
            "spec",
        ),
        (
            json!({"request_key": "k-2", "kind": "widget", "name": "t", "spec": {}}),
            "kind",
        ),
        (
            json!({"request_key": "", "kind": "endpoint", "name": "t", "spec": {}}),
            "request_key",
        ),
        (
            json!({"request_key": "k-2", "kind": "endpoint", "name": "t", "spec": {},
                   "wait_seconds": 9999}),
            "wait_seconds",
        ),
        (
            json!({"request_key": "k-2", "kind": "endpoint", "name": "t", "spec": {},
                   "if_match": 3}),
            "if_match",
        ),
    ] {
        let e = tool_error(&agent, "create_resource", args.clone()).await;
        assert_eq!(e["code"], "invalid_argument", "{args}: {e}");
        assert_eq!(e["field"], field, "{args}: {e}");
    }
    assert_eq!(all_ops(&c).await.len(), 1, "nothing more was queued");
    assert_eq!(plane.list("endpoints").await.len(), 1);
    assert!(plane.list("targets").await.is_empty());
    // A corrected retry under the key that failed validation works: nothing held it.
    let fixed = ok(
        &agent,
        "create_resource",
        json!({"request_key": "k-2", "kind": "target", "name": "t",
               "spec": {"url": "https://t.example.com/hook"}}),
    )
    .await;
    assert_eq!(fixed["state"], "confirmed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restarts_between_calls_still_replay_and_offline_writes_wait_for_the_operator() {
    let dir = tempfile::tempdir().unwrap();
    let mut plane = Plane::start(dir.path()).await;
    let data = dir.path().join("console");
    let c = console_with_profile(&data, &plane.url()).await;
    let agent = connect(&c, Mode::Writes).await;
    let first = ok(
        &agent,
        "create_resource",
        endpoint("k-1", "orders", "Orders"),
    )
    .await;
    drop(agent);
    drop(c);

    // A new console and MCP server on the same data dir, and a restarted control plane.
    plane.restart().await;
    let c = console(&data).await;
    c.edit_profile(
        "p",
        switchyard_core::ProfileEdit {
            url: Some(plane.url()),
            token: None,
        },
    )
    .await
    .unwrap();
    let agent = connect(&c, Mode::Writes).await;
    let again = ok(
        &agent,
        "create_resource",
        endpoint("k-1", "orders", "Orders"),
    )
    .await;
    assert_eq!(again["replayed"], true);
    assert_eq!(without_replayed(first), without_replayed(again));
    assert_eq!(plane.list("endpoints").await.len(), 1);

    // The control plane is down: the write is saved and reported pending, with its op id.
    plane.server.take().unwrap().stop().await.unwrap();
    let pending = ok(&agent, "create_resource", {
        let mut a = endpoint("k-2", "billing", "Billing");
        a["wait_seconds"] = json!(1);
        a
    })
    .await;
    assert_eq!(pending["state"], "pending", "{pending}");
    let op_id = pending["operation"]["id"].as_i64().unwrap();
    let status = ok(&agent, "outbox_status", json!({"request_key": "k-2"})).await;
    assert_eq!(status["operations"][0]["id"], op_id);
    assert_eq!(status["operations"][0]["via"], "mcp (test-agent 1.0)");
    // The operator sees it as the agent's and discards it before it is sent.
    let queued = c.op(op_id).await.unwrap();
    assert_eq!(
        queued.origin,
        switchyard_core::Origin::Mcp {
            client: "test-agent 1.0".into()
        }
    );
    c.discard(op_id).await.unwrap();
    let after = ok(
        &agent,
        "create_resource",
        endpoint("k-2", "billing", "Billing"),
    )
    .await;
    assert_eq!(after["state"], "discarded");
    assert_eq!(after["replayed"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_write_needs_attention_and_a_retry_as_new_is_followed() {
    let dir = tempfile::tempdir().unwrap();
    let plane = Plane::start(dir.path()).await;
    let c = console_with_profile(&dir.path().join("console"), &plane.url()).await;
    let agent = connect(&c, Mode::Writes).await;
    ok(&agent, "create_resource", endpoint("k-1", "orders", "v1")).await;
    // Someone else changes it on the server: the agent's update (against version 1) conflicts.
    reqwest::Client::new()
        .patch(format!("{}/v1/endpoints/orders", plane.url()))
        .bearer_auth(TOKEN)
        .header("if-match", "\"1\"")
        .header("idempotency-key", "11111111-1111-4111-8111-111111111111")
        .json(&json!({"spec": {"description": "by hand"}}))
        .send()
        .await
        .unwrap()
        .error_for_status()
        .unwrap();
    let args = json!({"request_key": "k-2", "kind": "endpoint", "name": "orders",
                      "patch": {"description": "by agent"}});
    let r = ok(&agent, "update_resource", args.clone()).await;
    assert_eq!(r["state"], "needs_attention", "{r}");
    assert_eq!(r["problem"]["status"], 412);
    assert_eq!(r["problem"]["code"], "version_mismatch");

    // The operator retries it as a new operation: the key now reports the latest attempt.
    let old = r["operation"]["id"].as_i64().unwrap();
    let newer = c.retry_as_new(old).await.unwrap();
    assert_eq!(newer.origin, c.op(old).await.unwrap().origin);
    let again = ok(&agent, "update_resource", args).await;
    assert_eq!(again["replayed"], true);
    assert_eq!(again["operation"]["id"], old);
    assert_eq!(again["latest_attempt"]["id"], newer.id);
    assert_eq!(again["state"], "confirmed", "{again}");
    assert_eq!(
        plane.list("endpoints").await[0].spec["description"],
        "by agent"
    );
}
