//! What reaches the operator's terminal: a description carrying escape sequences, a bell, a
//! carriage return and a line feed (anyone who can write to the tenant can set one) is printed
//! escaped, so it can neither retitle nor clear the terminal nor forge a row; and every
//! command whose reader goes away (`| head -1`) ends quietly, exit 0, without a panic.

use std::process::{Command, Stdio};

use serde_json::json;

use crate::dlq::dying_plane_with_events;
use crate::{TOKEN, run};

const HOSTILE: &str = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{1b}[31mRED\r\nFAKE-LINE";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_strings_are_escaped_in_human_output() {
    let dir = tempfile::tempdir().unwrap();
    let (server, data) = dying_plane_with_events(dir.path(), 0).await;
    let create = |key: &'static str, description: &'static str| {
        reqwest::Client::new()
            .post(format!("{}/v1/endpoints", server.url()))
            .bearer_auth(TOKEN)
            .header("idempotency-key", key)
            .json(&json!({"name": "hostile", "spec": {"description": description}}))
            .send()
    };
    // The control plane refuses control characters in a description (issue 45 D8)…
    let refused = create("hostile-1", HOSTILE).await.unwrap();
    assert_eq!(refused.status(), 400);
    let problem: serde_json::Value = refused.json().await.unwrap();
    assert_eq!(problem["field"], "spec.description", "{problem}");
    // …but the console must not trust its server: one stored before that rule (written here
    // straight into the control plane's database) is still printed escaped.
    assert_eq!(create("hostile-2", "benign").await.unwrap().status(), 201);
    let db = sqlx::SqlitePool::connect(&format!("sqlite://{}", dir.path().join("cp.db").display()))
        .await
        .unwrap();
    let spec = json!({"description": HOSTILE, "event_types": []}).to_string();
    let updated =
        sqlx::query("UPDATE resources SET spec = $1 WHERE kind = 'endpoint' AND name = 'hostile'")
            .bind(spec)
            .execute(&db)
            .await
            .unwrap();
    assert_eq!(updated.rows_affected(), 1);
    assert!(run(&data, &["refresh"], None).status.success());

    let out = run(&data, &["endpoints", "list"], None);
    assert!(out.status.success());
    let bytes = out.stdout;
    for control in [0x1b_u8, 0x07, b'\r'] {
        assert!(
            !bytes.contains(&control),
            "{control:#x} reached the terminal: {bytes:?}"
        );
    }
    let text = String::from_utf8(bytes).unwrap();
    assert!(
        !text.lines().any(|l| l.starts_with("FAKE-LINE")),
        "a forged line: {text}"
    );
    assert!(
        text.contains(r"\u{1b}]0;pwned\u{7}\u{1b}[2J\u{1b}[31mRED\r\nFAKE-LINE"),
        "{text}"
    );
    // --json keeps the value, escaped by JSON.
    let out = run(&data, &["--json", "endpoints", "get", "hostile"], None);
    let got = crate::json(&out);
    assert_eq!(got["server"]["spec"]["description"], HOSTILE);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_stdout_ends_every_command_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, data) = dying_plane_with_events(dir.path(), 2).await;
    assert!(run(&data, &["refresh"], None).status.success());
    for args in [
        &["audit"][..],
        &["status"],
        &["outbox", "list", "--all"],
        &["endpoints", "list"],
        &["--json", "targets", "list"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_switchyard"))
            .arg("--data-dir")
            .arg(&data)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes away before the command writes (`| head -0`).
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
    }
}
