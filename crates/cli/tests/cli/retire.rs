//! `switchyard retire` against the real retirement API: a target its flow blocks, cancelled;
//! the same with `--cascade-flows --wait` reaching `deleted`; a grace period cancelled while
//! scheduled (nothing deleted); the dry run; bad input and a missing confirmation (exit 1,
//! nothing queued); an unreachable control plane (saved locally, exit 4).

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::doctor::{add_profile, server};
use crate::{json, run};

fn text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn ok(data: &std::path::Path, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = run(data, &all, None);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out));
    json(&out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retire_blocked_cancel_cascade_wait_deleted_and_grace_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(&dir.path().join("cp.db")).await;
    let data = dir.path().join("console");
    add_profile(&data, &server.url());
    for (kind, name, spec) in [
        ("endpoints", "orders", "{}"),
        (
            "targets",
            "billing",
            r#"{"url":"https://billing.example.com/hook"}"#,
        ),
        (
            "flows",
            "orders-to-billing",
            r#"{"endpoint":"orders","target":"billing","mode":"async_inline"}"#,
        ),
    ] {
        ok(&data, &[kind, "create", name, "--spec", spec]);
    }
    let out = run(
        &data,
        &["sync", "--until-drained", "--timeout", "20s"],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    // The dry run names the flow and creates nothing.
    let dry = ok(&data, &["retire", "target", "billing", "--dry-run"]);
    assert_eq!(dry["would_start"], "blocked");
    assert_eq!(dry["impact"]["flows"][0], "orders-to-billing");
    assert_eq!(ok(&data, &["retire", "list"]), Value::Array(vec![]));

    // Without --cascade-flows the flow blocks it: exit 3, the blocker named.
    let out = run(
        &data,
        &[
            "--json",
            "retire",
            "target",
            "billing",
            "--yes",
            "--wait",
            "--id",
            "ret-blocked",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let blocked = json(&out);
    assert_eq!(blocked["server"]["state"], "blocked");
    assert_eq!(
        blocked["server"]["blockers"][0]["name"],
        "orders-to-billing"
    );
    let human = text(&run(&data, &["retire", "status", "ret-blocked"], None));
    assert!(
        human.contains("blocked by flow orders-to-billing"),
        "{human}"
    );
    let cancelled = ok(&data, &["retire", "cancel", "ret-blocked"]);
    assert_eq!(cancelled["server"]["state"], "cancelled");
    assert_eq!(cancelled["cancel"]["state"], "done");

    // With --cascade-flows and --wait: the flow goes first, then the target is deleted.
    let out = run(
        &data,
        &[
            "retire",
            "target",
            "billing",
            "--cascade-flows",
            "--yes",
            "--wait",
            "--timeout",
            "60s",
            "--id",
            "ret-cascade",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let human = text(&out);
    assert!(human.contains("deleted"), "{human}");
    assert!(
        human.contains("flows retired first: orders-to-billing"),
        "{human}"
    );
    let status = ok(&data, &["retire", "status", "ret-cascade"]);
    assert_eq!(status["server"]["state"], "deleted");
    let states: Vec<&str> = status["server"]["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["state"].as_str().unwrap())
        .collect();
    assert_eq!(states.last(), Some(&"deleted"), "{states:?}");
    ok(&data, &["refresh"]);
    assert_eq!(ok(&data, &["targets", "list"]), Value::Array(vec![]));
    assert_eq!(ok(&data, &["flows", "list"]), Value::Array(vec![]));
    // The same id and request again: the same retirement, nothing new.
    let again = ok(
        &data,
        &[
            "retire",
            "target",
            "billing",
            "--cascade-flows",
            "--yes",
            "--id",
            "ret-cascade",
        ],
    );
    assert_eq!(again["server"]["state"], "deleted");
    assert_eq!(again["start"]["attempts"], 1);

    // A grace period: cancelled while scheduled; the endpoint stays.
    let started = ok(
        &data,
        &[
            "retire",
            "endpoint",
            "orders",
            "--grace",
            "1h",
            "--yes",
            "--id",
            "ret-grace",
        ],
    );
    assert_eq!(started["start"]["state"], "done");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let status = ok(&data, &["retire", "status", "ret-grace"]);
        if status["server"]["state"] == "scheduled" {
            assert!(status["server"]["delete_at"].is_string());
            break;
        }
        assert!(Instant::now() < deadline, "never scheduled: {status}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let human = text(&run(&data, &["retire", "status", "ret-grace"], None));
    assert!(
        human.contains("deleted at") && human.contains("retire cancel ret-grace"),
        "{human}"
    );
    let cancelled = ok(&data, &["retire", "cancel", "ret-grace"]);
    assert_eq!(cancelled["server"]["state"], "cancelled");
    ok(&data, &["refresh"]);
    let endpoint = ok(&data, &["endpoints", "get", "orders"]);
    assert_eq!(endpoint["server"]["status"]["enabled"], true, "{endpoint}");
    let listed = ok(&data, &["retire", "list"]);
    assert_eq!(listed.as_array().unwrap().len(), 3);
    server.stop().await.unwrap();
}

#[test]
fn retire_refuses_bad_input_and_a_missing_confirmation_and_queues_offline() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("console");
    add_profile(&data, "http://127.0.0.1:9");
    for args in [
        vec!["retire", "widget", "x", "--yes"],
        vec!["retire", "target", "Not A Name", "--yes"],
        vec!["retire", "target", "crm", "--grace", "soon", "--yes"],
        vec!["retire", "target", "crm", "--grace", "8d", "--yes"],
        vec!["retire", "target", "crm", "--id", "has space", "--yes"],
        // No terminal to type the name into, and no --yes.
        vec!["retire", "target", "crm"],
    ] {
        let out = run(&data, &args, None);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", text(&out));
    }
    let out = run(&data, &["--json", "retire", "list"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(json(&out), Value::Array(vec![]), "nothing was queued");

    // Unreachable: saved locally with its id, exit 4.
    let out = run(
        &data,
        &[
            "--json",
            "retire",
            "target",
            "crm",
            "--yes",
            "--id",
            "ret-offline",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    let view = json(&out);
    assert_eq!(view["start"]["state"], "pending");
    assert_eq!(view["start"]["path"], "/v1/retirements/ret-offline");
    assert!(view["offline"].is_string());
    let human = text(&run(
        &data,
        &["retire", "target", "crm", "--yes", "--id", "ret-offline"],
        None,
    ));
    assert!(
        human.contains("saved locally") && human.contains("ret-offline"),
        "{human}"
    );
    let listed = json(&run(&data, &["--json", "retire", "list"], None));
    assert_eq!(listed[0]["id"], "ret-offline");
    let out = run(&data, &["retire", "status", "ret-offline"], None);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
}
