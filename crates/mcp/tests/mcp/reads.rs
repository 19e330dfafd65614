//! Bad read arguments against a running control plane: each is a tool error naming the
//! argument with the right code (never `offline` or `server_error` for the agent's own
//! mistake), and no message echoes megabytes back.

use serde_json::json;
use switchyard_mcp::Mode;

use crate::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_read_arguments_are_named_with_short_messages() {
    let dir = tempfile::tempdir().unwrap();
    let plane = Plane::start(dir.path()).await;
    let c = console_with_profile(&dir.path().join("console"), &plane.url()).await;
    let agent = connect(&c, Mode::ReadOnly).await;
    let huge = "x".repeat(2 * 1024 * 1024);
    let cases = [
        (
            "dlq_list",
            json!({"target": huge}),
            "invalid_argument",
            Some("target"),
        ),
        (
            "dlq_list",
            json!({"cursor": "garbage!!"}),
            "invalid_argument",
            Some("cursor"),
        ),
        (
            "get_resource",
            json!({"kind": "target", "name": huge}),
            "invalid_argument",
            Some("name"),
        ),
        (
            "find_event",
            json!({"id": huge}),
            "invalid_argument",
            Some("id"),
        ),
        (
            "replay_status",
            json!({"id": huge}),
            "invalid_argument",
            Some("id"),
        ),
        (
            "dlq_list",
            json!({"limit": 1, "wait_seconds": 1}),
            "invalid_argument",
            Some("wait_seconds"),
        ),
    ];
    for (tool, args, code, field) in cases {
        let e = tool_error(&agent, tool, args).await;
        assert_eq!(
            e["code"],
            code,
            "{tool}: {}",
            &e.to_string()[..200.min(e.to_string().len())]
        );
        if let Some(field) = field {
            assert_eq!(e["field"], field, "{tool}");
        }
        let message = e["message"].as_str().unwrap();
        assert!(message.len() < 600, "{tool}: {} bytes", message.len());
    }
}
