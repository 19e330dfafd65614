//! What each mode lists (checked against a committed snapshot of names and annotations),
//! and a call outside the mode refused before anything is queued or sent.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use switchyard_mcp::{McpConfig, Mode};

use crate::*;

const SNAPSHOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp/tools.snapshot.json");

/// What an agent host shows about a tool: name, title, hints, required arguments, and
/// whether it declares an output schema.
fn describe(tool: &rmcp::model::Tool) -> Value {
    let a = tool
        .annotations
        .as_ref()
        .expect("annotations on every tool");
    let required = tool
        .input_schema
        .get("required")
        .cloned()
        .unwrap_or(json!([]));
    json!({
        "name": tool.name,
        "title": tool.title,
        "readOnlyHint": a.read_only_hint,
        "destructiveHint": a.destructive_hint,
        "idempotentHint": a.idempotent_hint,
        "openWorldHint": a.open_world_hint,
        "required": required,
        "outputSchema": tool.output_schema.as_ref().map(|s| s.get("type").cloned()),
    })
}

/// A loopback port that counts connections: a control plane that must never be reached.
async fn tripwire() -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            drop(socket);
        }
    });
    (url, hits)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_mode_lists_its_tools_with_every_annotation_as_the_snapshot_says() {
    let dir = tempfile::tempdir().unwrap();
    let (url, hits) = tripwire().await;
    let c = console_with_profile(dir.path(), &url).await;
    let mut listed = serde_json::Map::new();
    for mode in [Mode::ReadOnly, Mode::Writes, Mode::Destructive] {
        let client = connect(&c, mode).await;
        let info = client.peer_info().unwrap();
        let server = info.server_info.clone().expect("serverInfo");
        assert_eq!(server.name, "switchyard");
        assert_eq!(server.version, env!("CARGO_PKG_VERSION"));
        let instructions = info.instructions.clone().unwrap();
        for needle in ["request_key", "replayed: true", "read-only", "24 h"] {
            assert!(instructions.contains(needle), "instructions: {needle}");
        }
        let tools = client.list_all_tools().await.unwrap();
        for t in &tools {
            let a = t.annotations.as_ref().unwrap();
            assert!(
                a.read_only_hint.is_some()
                    && a.destructive_hint.is_some()
                    && a.idempotent_hint.is_some()
                    && a.open_world_hint.is_some(),
                "{}: all four hints",
                t.name
            );
            assert!(t.output_schema.is_some(), "{}: outputSchema", t.name);
            // The request-key rules are said once, in the instructions, not per tool.
            assert!(
                !t.description.as_deref().unwrap().contains("replayed: true"),
                "{}: no repeated key rules",
                t.name
            );
            // Standard JSON Schema only: no schemars formats (uint32, double, …).
            let schemas = serde_json::to_string(&(&t.input_schema, &t.output_schema)).unwrap();
            assert!(!schemas.contains("\"format\""), "{}: {schemas}", t.name);
        }
        // What a host puts in the model's context: the tools/list result, as sent.
        let size = serde_json::to_vec(&json!({"tools": tools})).unwrap().len();
        println!("tools/list in mode {}: {size} bytes", mode.as_str());
        let (budget, count) = match mode {
            Mode::ReadOnly => (9_000, 7),
            Mode::Writes => (20_000, 13),
            Mode::Destructive => (20_000, 14),
        };
        assert_eq!(tools.len(), count);
        assert!(
            size <= budget,
            "tools/list in mode {}: {size} bytes",
            mode.as_str()
        );
        listed.insert(
            mode.as_str().into(),
            Value::Array(tools.iter().map(describe).collect()),
        );
    }
    let actual = Value::Object(listed);
    if std::env::var("UPDATE_SNAPSHOTS").is_ok() {
        let text = serde_json::to_string_pretty(&actual).unwrap() + "\n";
        std::fs::write(SNAPSHOT, text).unwrap();
    }
    // Compared as JSON values, not text: the workspace build turns on serde_json's
    // `preserve_order`, a lone build of this crate does not, and key order is no change.
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(SNAPSHOT).unwrap_or_default())
            .unwrap_or(Value::Null);
    assert_eq!(
        actual,
        expected,
        "tool list changed: review, then run with UPDATE_SNAPSHOTS=1\n{}",
        serde_json::to_string_pretty(&actual).unwrap()
    );
    assert_eq!(hits.load(Ordering::SeqCst), 0, "listing reaches no server");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_outside_the_mode_is_refused_before_anything_is_queued_or_sent() {
    let dir = tempfile::tempdir().unwrap();
    let (url, hits) = tripwire().await;
    let c = console_with_profile(dir.path(), &url).await;

    let read_only = connect(&c, Mode::ReadOnly).await;
    for (tool, args) in [
        ("create_resource", endpoint("k-1", "orders", "o")),
        (
            "start_replay",
            json!({"request_key": "k-2", "selection": {"delivery_ids": ["dlv_1"]}}),
        ),
        (
            "delete_resource",
            json!({"request_key": "k-3", "kind": "endpoint", "name": "orders"}),
        ),
    ] {
        let e = tool_error(&read_only, tool, args).await;
        assert_eq!(e["code"], "not_allowed", "{tool}: {e}");
        assert!(e["message"].as_str().unwrap().contains("--allow-"), "{e}");
    }
    let writes = connect(&c, Mode::Writes).await;
    let e = tool_error(
        &writes,
        "delete_resource",
        json!({"request_key": "k-3", "kind": "endpoint", "name": "orders"}),
    )
    .await;
    assert_eq!(e["code"], "not_allowed");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("--allow-destructive")
    );

    // A profile an operator marked read-only for agents: reads only, whatever the flags.
    c.set_agents_read_only("p", true).await.unwrap();
    let destructive = connect(&c, Mode::Destructive).await;
    let names: Vec<String> = destructive
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(!names.iter().any(|n| n == "create_resource"), "{names:?}");
    assert!(names.iter().any(|n| n == "list_resources"));
    let e = tool_error(
        &destructive,
        "create_resource",
        endpoint("k-4", "orders", "o"),
    )
    .await;
    assert_eq!(e["code"], "profile_read_only");

    assert!(all_ops(&c).await.is_empty(), "nothing queued");
    assert!(c.replay_ops("p").await.unwrap().is_empty());
    assert_eq!(hits.load(Ordering::SeqCst), 0, "nothing sent");

    // Every call is in the audit log, refused ones with why.
    let calls = c
        .audit(switchyard_core::AuditQuery {
            action_prefix: Some("mcp.call".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(calls.len(), 5);
    assert!(calls.iter().all(|e| e.actor == "mcp (test-agent 1.0)"));
    assert_eq!(calls[0].outcome, "profile_read_only");
}

/// The tools a session lists now.
async fn names(client: &Client) -> Vec<String> {
    let tools = client.list_all_tools().await.unwrap();
    tools.into_iter().map(|t| t.name.to_string()).collect()
}

/// Waits until the agent has been told `n` times that the tool list changed.
async fn told(agent: &Agent, n: usize) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while agent.tools_changed.load(Ordering::SeqCst) < n {
        assert!(
            std::time::Instant::now() < deadline,
            "no notifications/tools/list_changed"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn marking_the_profile_read_only_mid_session_is_announced_and_so_is_lifting_it() {
    let dir = tempfile::tempdir().unwrap();
    let (url, hits) = tripwire().await;
    let c = console_with_profile(dir.path(), &url).await;
    let agent = Agent::default();
    let config = McpConfig::new("p", Mode::Destructive);
    let client = connect_agent(&c, config.clone(), agent.clone()).await;
    let info = client.peer_info().unwrap();
    let tools = info.capabilities.tools.as_ref().unwrap();
    assert_eq!(tools.list_changed, Some(true), "listChanged is advertised");
    let instructions = info.instructions.clone().unwrap();
    assert!(
        instructions.contains("(mode: destructive)"),
        "{instructions}"
    );
    let all = names(&client).await;
    assert!(all.iter().any(|n| n == "delete_resource"), "{all:?}");

    // The operator marks the profile (as from another process: the console's data dir).
    c.set_agents_read_only("p", true).await.unwrap();
    told(&agent, 1).await;
    let reads = names(&client).await;
    assert!(reads.len() < all.len());
    assert!(!reads.iter().any(|n| n == "create_resource"), "{reads:?}");
    // A host that connects now reads the mode in force.
    let later = connect_with(&c, config).await;
    let instructions = later.peer_info().unwrap().instructions.clone().unwrap();
    assert!(
        instructions.contains("mode: read-only: an operator marked the profile"),
        "{instructions}"
    );
    assert!(instructions.contains("started in destructive mode"));

    // Lifted: the writes come back, and the host is told.
    c.set_agents_read_only("p", false).await.unwrap();
    told(&agent, 2).await;
    assert_eq!(names(&client).await, all);
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    assert_eq!(
        agent.tools_changed.load(Ordering::SeqCst),
        2,
        "once per change"
    );
    assert_eq!(hits.load(Ordering::SeqCst), 0);
}
