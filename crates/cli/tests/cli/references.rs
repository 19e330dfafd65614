//! `flows create` naming a target (or endpoint) that neither the control plane (as last read)
//! nor a queued write has: refused naming the field, exit 1, nothing queued — such a flow
//! could never land, and it would hold back every later delete of the profile. A target
//! still queued counts.

use serde_json::Value;

use crate::doctor::{add_profile, server};
use crate::{json, run};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flow_naming_a_missing_target_is_refused_and_a_queued_one_counts() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(&dir.path().join("cp.db")).await;
    let data = dir.path().join("console");
    add_profile(&data, &server.url());
    let out = run(
        &data,
        &["endpoints", "create", "orders", "--spec", "{}"],
        None,
    );
    assert_eq!(out.status.code(), Some(0));

    let out = run(
        &data,
        &[
            "flows",
            "create",
            "orders-to-ghost",
            "--spec",
            r#"{"endpoint":"orders","target":"ghost"}"#,
        ],
        None,
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("spec.target") && said.contains("\"ghost\""),
        "{said}"
    );
    let queued = json(&run(&data, &["--json", "outbox", "list"], None));
    let kinds: Vec<&Value> = queued
        .as_array()
        .unwrap()
        .iter()
        .map(|o| &o["kind"])
        .collect();
    assert_eq!(kinds, ["endpoint"], "only the endpoint is queued: {queued}");

    // The target queued (not yet sent) is enough.
    let spec = r#"{"url":"https://billing.example.com/hook"}"#;
    let out = run(&data, &["targets", "create", "ghost", "--spec", spec], None);
    assert_eq!(out.status.code(), Some(0));
    let out = run(
        &data,
        &[
            "flows",
            "create",
            "orders-to-ghost",
            "--spec",
            r#"{"endpoint":"orders","target":"ghost"}"#,
        ],
        None,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
