//! The `switchyard` binary against a real control plane on loopback: the walkthrough of
//! docs/cli.md, with its exit codes and `--json` output.

use switchyard_test_support::tls;

mod certs;
mod dlq;
mod doctor;
mod first_secrets;
mod gitops;
mod mcp;
mod profile_remove;
mod references;
mod retire;
mod roles;
mod rotation;
mod secrets;
mod status;
mod targets;
mod terminal;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use switchyard_control_plane::Server;
use switchyard_test_support::plane;

const TOKEN: &str = "cli-test-token-0123456789";

fn run(data: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_switchyard"))
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    }
    drop(child.stdin.take());
    child.wait_with_output().unwrap()
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn walkthrough_profile_edit_sync_conflict_and_wait() {
    let dir = tempfile::tempdir().unwrap();
    let config = plane::config(&dir.path().join("cp.db"), &[("acme", TOKEN)]);
    let server = Server::start(config).await.unwrap();
    let data = dir.path().join("console");
    let url = server.url();

    let out = run(
        &data,
        &["profile", "add", "prod", "--url", &url, "--token-stdin"],
        Some(TOKEN),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("mode 0600"),
        "the token-file note is shown"
    );

    // Bad input: a clear error naming the field, exit 1, nothing queued.
    let out = run(
        &data,
        &["targets", "create", "t", "--spec", r#"{"url":"ftp://x"}"#],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("spec.url"));

    let out = run(
        &data,
        &[
            "--json",
            "endpoints",
            "create",
            "orders",
            "--spec",
            r#"{"description":"Orders"}"#,
        ],
        None,
    );
    assert!(out.status.success());
    assert_eq!(json(&out)["state"], "pending");
    let out = run(
        &data,
        &["sync", "--until-drained", "--timeout", "30s"],
        None,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    // A stale edit: queued on version 1 while someone else moves the server to version 2.
    let out = run(
        &data,
        &[
            "--json",
            "endpoints",
            "update",
            "orders",
            "--spec",
            r#"{"description":"EU"}"#,
        ],
        None,
    );
    let op_id = json(&out)["id"].as_i64().unwrap();
    let status = reqwest::Client::new()
        .patch(format!("{url}/v1/endpoints/orders"))
        .bearer_auth(TOKEN)
        .header("idempotency-key", "someone-else-1")
        .json(&serde_json::json!({"spec": {"description": "US"}}))
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, 200);
    let out = run(&data, &["sync"], None);
    assert_eq!(out.status.code(), Some(3), "needs attention exits 3");
    let out = run(
        &data,
        &["--json", "outbox", "show", &op_id.to_string()],
        None,
    );
    let shown = json(&out);
    assert_eq!(shown["conflict"]["theirs"]["spec"]["description"], "US");
    assert_eq!(shown["conflict"]["mine"]["description"], "EU");

    let out = run(&data, &["outbox", "retry", &op_id.to_string()], None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(&data, &["--json", "sync", "--until-drained"], None);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(json(&out)["outcome"], "drained");
    let out = run(&data, &["--json", "endpoints", "get", "orders"], None);
    let got = json(&out);
    assert_eq!(got["server"]["version"], 3);
    assert_eq!(got["server"]["spec"]["description"], "EU");

    // --wait: queue and sync in one go.
    let out = run(&data, &["endpoints", "disable", "orders", "--wait"], None);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    server.stop().await.unwrap();
}

#[test]
fn version_names_the_commit_and_the_build_date() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), &["--version"], None);
    assert!(out.status.success());
    let line = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        line.trim_end(),
        format!("switchyard {}", switchyard_build_info::LONG_VERSION)
    );
    assert!(line.starts_with(&format!(
        "switchyard {} (commit ",
        env!("CARGO_PKG_VERSION")
    )));
    assert!(line.contains(switchyard_build_info::BUILD_DATE));
}
