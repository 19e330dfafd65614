//! start_replay: one session per request key (its id derived from the key), progress
//! notifications while it runs, the replay limit of the writes mode, and the DLQ reads.

use std::time::Duration;

use serde_json::{Value, json};
use switchyard_control_plane::Server;
use switchyard_control_plane::delivery::DeliveryConfig;
use switchyard_control_plane::delivery::schedule::parse_schedule;
use switchyard_mcp::{McpConfig, Mode};

use crate::*;

const FAST: &str = "0s,20ms,20ms,20ms,20ms";

async fn post(base: &str, path: &str, body: Value, key: &str) {
    let resp = reqwest::Client::new()
        .post(format!("{base}{path}"))
        .bearer_auth(TOKEN)
        .header("idempotency-key", key)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success(), "{path}");
}

/// A control plane whose deliveries die in milliseconds (the target's port is closed), with
/// `events` events dead on target `crm`.
async fn dying_plane(dir: &std::path::Path, events: usize) -> Server {
    let mut config = Plane::config(&dir.join("cp.db"));
    config.delivery = DeliveryConfig {
        schedule: parse_schedule(FAST).unwrap(),
        lease_margin: Duration::from_millis(300),
        poll_max: Duration::from_millis(50),
        ..config.delivery
    };
    let server = Server::start(config).await.unwrap();
    let base = server.url();
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    post(
        &base,
        "/v1/endpoints",
        json!({"name": "ep", "spec": {}}),
        "k-ep",
    )
    .await;
    post(
        &base,
        "/v1/targets",
        json!({"name": "crm", "spec": {"url": format!("http://127.0.0.1:{closed}/hook"), "timeout_ms": 500}}),
        "k-crm",
    )
    .await;
    post(
        &base,
        "/v1/flows",
        json!({"name": "to-crm", "spec": {"endpoint": "ep", "target": "crm"}}),
        "k-flow",
    )
    .await;
    for i in 0..events {
        post(
            &base,
            "/v1/events",
            json!({"endpoint": "ep", "event_type": "order.paid", "payload": {"n": i},
                   "event_key": format!("order-{i}")}),
            &format!("k-evt-{i}"),
        )
        .await;
    }
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_is_one_session_per_request_key_with_progress_and_a_limit() {
    let dir = tempfile::tempdir().unwrap();
    let server = dying_plane(dir.path(), 3).await;
    let c = console_with_profile(&dir.path().join("console"), &server.url()).await;
    let mut config = McpConfig::new("p", Mode::Writes);
    config.replay_limit = 2;
    let agent = connect_with(&c, config).await;

    // Reads: the DLQ fills with the three dead deliveries.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let page = loop {
        let page = ok(&agent, "dlq_list", json!({"target": "crm"})).await;
        if page["items"].as_array().unwrap().len() == 3 {
            break page;
        }
        assert!(std::time::Instant::now() < deadline, "DLQ never filled");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let stats = ok(
        &agent,
        "dlq_stats",
        json!({"group_by": "error_class,target"}),
    )
    .await;
    assert_eq!(stats["total"], 3);
    assert_eq!(stats["rows"][0]["target"], "crm");
    let found = ok(&agent, "find_event", json!({"key": "order-1"})).await;
    assert_eq!(found["events"].as_array().unwrap().len(), 1);
    let e = tool_error(&agent, "dlq_list", json!({"since": "yesterday"})).await;
    assert_eq!(e["field"], "since");

    // More than the limit (by filter: counted by a dry run) needs --allow-destructive.
    let by_filter = json!({"request_key": "r-all", "selection": {"filter": {"target": "crm"}}});
    let e = tool_error(&agent, "start_replay", by_filter.clone()).await;
    assert_eq!(e["code"], "not_allowed", "{e}");
    let dry = ok(
        &agent,
        "start_replay",
        json!({"request_key": "r-dry", "selection": {"filter": {"target": "crm"}}, "dry_run": true}),
    )
    .await;
    assert_eq!(dry["state"], "dry_run");
    assert_eq!(dry["count"], 3);

    let ids: Vec<Value> = page["items"].as_array().unwrap()[..2]
        .iter()
        .map(|i| i["delivery_id"].clone())
        .collect();
    let args =
        json!({"request_key": "r-1", "selection": {"delivery_ids": ids}, "wait_seconds": 20});
    let first = call_with_progress(&agent, "start_replay", args.clone()).await;
    let first = first.structured_content.unwrap();
    assert_eq!(first["state"], "confirmed", "{first}");
    assert_eq!(first["session"]["counts"]["total"], 2);
    assert_eq!(first["session"]["status"], "completed", "{first}");
    let progress = agent.service().progress.lock().unwrap().clone();
    assert!(!progress.is_empty(), "progress notifications");
    let last = progress.last().unwrap();
    assert_eq!(last.total, Some(2.0));
    assert_eq!(last.progress, 2.0);

    let again = ok(&agent, "start_replay", args).await;
    assert_eq!(again["replayed"], true);
    assert_eq!(again["session_id"], first["session_id"]);
    let sessions = c.replay_sessions("p").await.unwrap();
    assert_eq!(sessions.len(), 1, "one session on the server");

    let status = ok(&agent, "replay_status", json!({"request_key": "r-1"})).await;
    assert_eq!(status["session"]["id"], first["session_id"]);
    assert_eq!(status["write"]["via"], "mcp (test-agent 1.0)");

    // Another selection under the same key: refused, nothing queued.
    let e = tool_error(
        &agent,
        "start_replay",
        json!({"request_key": "r-1", "selection": {"delivery_ids": [ids[0]]}}),
    )
    .await;
    assert_eq!(e["code"], "request_key_reused");
    assert_eq!(c.replay_ops("p").await.unwrap().len(), 1);
}
