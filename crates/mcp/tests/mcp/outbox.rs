//! What an agent's queued writes wait for, end to end against a control plane: a flow naming
//! a resource that exists nowhere is refused before it is queued, a delete waits only for the
//! earlier flow writes that name what it deletes (and says which), and a `pending` write goes
//! out while the server idles, also after an offline spell.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use switchyard_control_plane::Server;
use switchyard_mcp::Mode;

use crate::*;

fn flow(key: &str, name: &str, spec: Value) -> Value {
    json!({"request_key": key, "kind": "flow", "name": name, "spec": spec})
}

fn target(key: &str, name: &str) -> Value {
    json!({"request_key": key, "kind": "target", "name": name,
           "spec": {"url": "https://crm.example.com/hook"}})
}

/// Polls `outbox_status` for `key` (and nothing else) until its operation is `done`.
async fn done_within(agent: &Client, key: &str, within: Duration) -> Value {
    let started = Instant::now();
    loop {
        let status = ok(agent, "outbox_status", json!({"request_key": key})).await;
        let op = status["operations"][0].clone();
        if op["state"] == "done" || started.elapsed() > within {
            return op;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flow_naming_a_missing_resource_is_refused_and_a_delete_waits_only_for_flows_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let plane = Plane::start(dir.path()).await;
    let c = console_with_profile(&dir.path().join("console"), &plane.url()).await;
    let agent = connect(&c, Mode::Destructive).await;
    for args in [
        endpoint("k-orders", "orders", "Orders"),
        target("k-crm", "crm"),
        target("k-spare", "spare"),
        flow("k-f1", "f1", json!({"endpoint": "orders", "target": "crm"})),
    ] {
        let r = ok(&agent, "create_resource", args).await;
        assert_eq!(r["state"], "confirmed", "{r}");
    }
    let queued = all_ops(&c).await.len();

    // Neither the cache nor the queue has "ghost": refused, naming the field; nothing queued.
    let ghost = json!({"endpoint": "orders", "target": "ghost"});
    let e = tool_error(&agent, "create_resource", flow("k-g", "g", ghost)).await;
    assert_eq!(
        (e["code"].as_str(), e["field"].as_str()),
        (Some("invalid_argument"), Some("spec.target")),
        "{e}"
    );
    assert!(e["message"].as_str().unwrap().contains("\"ghost\""), "{e}");
    let e = tool_error(
        &agent,
        "create_resource",
        flow(
            "k-g2",
            "g2",
            json!({"endpoint": "nowhere", "target": "crm"}),
        ),
    )
    .await;
    assert_eq!(e["field"], "spec.endpoint", "{e}");
    let e = tool_error(
        &agent,
        "update_resource",
        json!({"request_key": "k-u", "kind": "flow", "name": "f1", "patch": {"target": "ghost"}}),
    )
    .await;
    assert_eq!(e["field"], "patch.target", "{e}");
    assert_eq!(all_ops(&c).await.len(), queued);

    // A flow write the control plane refuses (someone changed the flow meanwhile) waits for
    // an operator...
    let changed = reqwest::Client::new()
        .patch(format!("{}/v1/flows/f1", plane.url()))
        .bearer_auth(TOKEN)
        .header("idempotency-key", "someone-else")
        .json(&json!({"spec": {"event_types": ["order.paid"]}}))
        .send()
        .await
        .unwrap();
    assert_eq!(changed.status(), 200);
    let patch = json!({"request_key": "k-f1-types", "kind": "flow", "name": "f1",
                       "patch": {"event_types": ["order.created"]}});
    let stuck = ok(&agent, "update_resource", patch).await;
    assert_eq!(stuck["state"], "needs_attention", "{stuck}");
    let stuck_id = stuck["operation"]["id"].clone();
    // ...and holds back no delete of a resource it does not name,
    let spare = json!({"request_key": "k-del-spare", "kind": "target", "name": "spare"});
    let r = ok(&agent, "delete_resource", spare).await;
    assert_eq!(r["state"], "confirmed", "{r}");
    // while one of a resource it names waits for it, and says so.
    let orders = json!({"request_key": "k-del-orders", "kind": "endpoint", "name": "orders",
                        "wait_seconds": 1});
    let r = ok(&agent, "delete_resource", orders).await;
    assert_eq!(r["state"], "pending", "{r}");
    assert_eq!(r["operation"]["waiting_for"], json!([stuck_id]), "{r}");
    let status = ok(
        &agent,
        "outbox_status",
        json!({"request_key": "k-del-orders"}),
    )
    .await;
    assert_eq!(status["operations"][0]["waiting_for"], json!([stuck_id]));
    assert_eq!(status["operations"][0]["attempts"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_write_goes_out_while_the_server_idles_also_after_an_offline_spell() {
    let dir = tempfile::tempdir().unwrap();
    let mut plane = Plane::start(dir.path()).await;
    let addr = plane.server.as_ref().unwrap().addr;
    let c = console_with_profile(&dir.path().join("console"), &plane.url()).await;
    let agent = connect(&c, Mode::Writes).await;

    // Queued and returned at once; then only polled.
    let mut args = endpoint("k-a", "a", "A");
    args["wait_seconds"] = json!(0);
    let r = ok(&agent, "create_resource", args).await;
    assert_eq!(r["state"], "pending", "{r}");
    let op = done_within(&agent, "k-a", Duration::from_secs(15)).await;
    assert_eq!(op["state"], "done", "{op}");

    // The control plane goes away; a write waits; it comes back on the same address.
    plane.server.take().unwrap().stop().await.unwrap();
    let mut args = endpoint("k-b", "b", "B");
    args["wait_seconds"] = json!(1);
    let r = ok(&agent, "create_resource", args).await;
    assert_eq!(r["state"], "pending", "{r}");
    let mut config = Plane::config(&plane.db);
    config.listen = addr;
    plane.server = Some(Server::start(config).await.unwrap());
    let op = done_within(&agent, "k-b", Duration::from_secs(30)).await;
    assert_eq!(op["state"], "done", "{op}");
    let names: Vec<String> = plane
        .list("endpoints")
        .await
        .into_iter()
        .map(|r| r.name)
        .collect();
    assert_eq!(names, ["a", "b"]);
}
