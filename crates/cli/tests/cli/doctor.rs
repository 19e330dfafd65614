//! `switchyard doctor` against a real control plane: exit 0 when clean, 3 when something
//! needs a person, 4 when the control plane cannot be reached, 1 for bad input; the `--json`
//! shape; a server fix run online and one run offline (saved locally with its key, sent by
//! the next sync); a destructive console fix that needs `--yes`.

use std::net::SocketAddr;
use std::path::Path;

use serde_json::Value;
use switchyard_control_plane::extract::Tenants;
use switchyard_control_plane::{Server, ServerConfig};
use switchyard_test_support::plane;

use crate::{TOKEN, json, run};

pub async fn server(db: &Path) -> Server {
    let mut config = plane::config(db, &[("acme", TOKEN)]);
    config.delivery.retirement_every = std::time::Duration::from_millis(50);
    Server::start(config).await.unwrap()
}

pub fn add_profile(data: &Path, url: &str) {
    let out = run(
        data,
        &["profile", "add", "prod", "--url", url, "--token-stdin"],
        Some(TOKEN),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

async fn tamper_dlq_counter(db: &Path) {
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    sqlx::query(
        "INSERT INTO dlq_counts (tenant, target, error_class, hour, count) VALUES ('acme', 'ghost', 'http_5xx', 1, 5)",
    )
    .execute(&pool)
    .await
    .unwrap();
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_exit_codes_json_shape_and_a_server_fix_online_and_offline() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cp.db");
    let server = server(&db).await;
    let data = dir.path().join("console");
    add_profile(&data, &server.url());

    let out = run(&data, &["--json", "doctor"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let clean = json(&out);
    assert_eq!(clean["findings"], Value::Array(vec![]));
    assert_eq!(clean["server"]["status"], "reported");
    assert!(
        String::from_utf8_lossy(&run(&data, &["doctor"], None).stdout)
            .contains("nothing needs a person")
    );

    tamper_dlq_counter(&db).await;
    let out = run(&data, &["--json", "doctor"], None);
    assert_eq!(
        out.status.code(),
        Some(3),
        "needs a person exits 3: {}",
        text(&out)
    );
    let report = json(&out);
    let finding = &report["findings"][0];
    assert_eq!(finding["id"], "dlq_counter_drift:tenant:acme");
    assert_eq!(finding["class"], "dlq_counter_drift");
    assert_eq!(finding["severity"], "warning");
    assert_eq!(finding["source"], "server");
    assert_eq!(finding["actions"][0]["method"], "POST");
    assert_eq!(finding["actions"][0]["path"], "/v1/dlq/recount");
    let human = String::from_utf8_lossy(&run(&data, &["doctor"], None).stdout).to_string();
    assert!(human.contains("WARNING (1)"), "{human}");
    assert!(human.contains("1. Recount"), "{human}");
    assert!(human.contains("POST /v1/dlq/recount"), "{human}");

    // Bad input: exit 1, nothing queued.
    let out = run(
        &data,
        &["doctor", "fix", "stuck_delivery:delivery:dlv_none"],
        None,
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let out = run(
        &data,
        &[
            "doctor",
            "fix",
            "dlq_counter_drift:tenant:acme",
            "--action",
            "7",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("--action 7"), "{}", text(&out));
    let out = run(
        &data,
        &[
            "doctor",
            "fix",
            "dlq_counter_drift:tenant:acme",
            "--timeout",
            "soon",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(!text(&run(&data, &["outbox", "list", "--all"], None)).contains("recovery writes"));

    // Offline: the fix is taken from the last check, saved locally with its key, exit 4.
    let url = server.url();
    server.stop().await.unwrap();
    let out = run(&data, &["--json", "doctor"], None);
    assert_eq!(
        out.status.code(),
        Some(3),
        "the last check's finding still needs a person"
    );
    assert_eq!(json(&out)["server"]["status"], "unreachable");
    let out = run(
        &data,
        &[
            "--json",
            "doctor",
            "fix",
            "dlq_counter_drift:tenant:acme",
            "--key",
            "recount-1",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    let queued = json(&out);
    assert_eq!(queued["outcome"]["queued"]["state"], "pending");
    assert_eq!(queued["outcome"]["queued"]["idempotency_key"], "recount-1");
    let listed = text(&run(&data, &["outbox", "list"], None));
    assert!(
        listed.contains("POST /v1/dlq/recount") && listed.contains("recount-1"),
        "{listed}"
    );

    // Back (same database, same address): the sync sends it once with that key.
    let server = server_at(&db, &url).await;
    let out = run(
        &data,
        &["sync", "--until-drained", "--timeout", "20s"],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("done"), "{}", text(&out));
    let out = run(&data, &["--json", "doctor"], None);
    assert_eq!(out.status.code(), Some(0), "fixed: {}", text(&out));
    // Resuming with the same key sends nothing new: the row is already done.
    let out = run(
        &data,
        &[
            "--json",
            "doctor",
            "fix",
            "dlq_counter_drift:tenant:acme",
            "--key",
            "recount-1",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(json(&out)["outcome"]["queued"]["state"], "done");
    assert_eq!(json(&out)["outcome"]["queued"]["attempts"], 1);
    server.stop().await.unwrap();
}

/// A server on a given address (to come back where the profile points).
async fn server_at(db: &Path, url: &str) -> Server {
    let addr: SocketAddr = url.trim_start_matches("http://").parse().unwrap();
    let mut tenants = Tenants::default();
    tenants.add("acme", TOKEN);
    let config =
        ServerConfig::new(addr, format!("sqlite://{}", db.display()), tenants).local_only();
    Server::start(config).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_orphan_flow_write_is_critical_and_its_destructive_fix_needs_yes() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(&dir.path().join("cp.db")).await;
    let data = dir.path().join("console");
    add_profile(&data, &server.url());
    let out = run(
        &data,
        &["endpoints", "create", "orders", "--spec", "{}", "--wait"],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // A target this console knows but the control plane no longer has (deleted elsewhere
    // since): a write naming a target nobody ever had is refused before it is queued.
    let spec = r#"{"url":"https://example.com/hook"}"#;
    let out = run(
        &data,
        &["targets", "create", "crm", "--spec", spec, "--wait"],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let deleted = reqwest::Client::new()
        .delete(format!("{}/v1/targets/crm", server.url()))
        .bearer_auth(TOKEN)
        .header("idempotency-key", "deleted-elsewhere")
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 204);
    let out = run(
        &data,
        &[
            "--json",
            "flows",
            "create",
            "orders-to-crm",
            "--spec",
            r#"{"endpoint":"orders","target":"crm","mode":"async_inline"}"#,
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out));
    let op = json(&out)["id"].as_i64().unwrap();
    let id = format!("orphan_reference:operation:{op}");
    let out = run(&data, &["--json", "doctor"], None);
    assert_eq!(out.status.code(), Some(3));
    let report = json(&out);
    assert_eq!(report["findings"][0]["id"], id.as_str());
    assert_eq!(report["findings"][0]["severity"], "critical");
    assert_eq!(report["findings"][0]["source"], "console");
    assert_eq!(report["findings"][0]["subject"]["kind"], "operation");
    assert_eq!(report["findings"][0]["actions"][0]["destructive"], true);

    let out = run(&data, &["doctor", "fix", &id], None);
    assert_eq!(
        out.status.code(),
        Some(1),
        "destructive without --yes: {}",
        text(&out)
    );
    assert!(text(&out).contains("--yes"));
    let out = run(&data, &["--json", "outbox", "list"], None);
    assert_eq!(json(&out).as_array().unwrap().len(), 1, "nothing changed");

    let out = run(&data, &["--json", "doctor", "fix", &id, "--yes"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(json(&out)["outcome"]["op"]["state"], "discarded");
    let out = run(&data, &["doctor"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    server.stop().await.unwrap();
}

#[test]
fn doctor_without_a_reachable_control_plane_exits_4_and_says_it_was_not_checked() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("console");
    add_profile(&data, "http://127.0.0.1:9");
    let out = run(&data, &["doctor"], None);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    assert!(text(&out).contains("NOT checked"), "{}", text(&out));
    let out = run(&data, &["--json", "doctor"], None);
    assert_eq!(out.status.code(), Some(4));
    let report = json(&out);
    assert_eq!(report["server"]["status"], "unreachable");
    assert!(!report["unchecked"].as_array().unwrap().is_empty());
}

/// An open signing-secret overlap is shown (info, with its end) but needs nobody: exit 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_overlap_is_shown_with_its_end_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cp.db");
    let server = server(&db).await;
    let data = dir.path().join("console");
    add_profile(&data, &server.url());
    let out = run(
        &data,
        &[
            "targets",
            "create",
            "billing",
            "--spec",
            r#"{"url":"http://127.0.0.1:9/hook"}"#,
            "--wait",
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out));
    let out = run(
        &data,
        &["targets", "rotate-secret", "billing", "--overlap", "2h"],
        None,
    );
    assert!(out.status.success(), "{}", text(&out));

    let out = run(&data, &["--json", "doctor"], None);
    assert_eq!(out.status.code(), Some(0), "info only: {}", text(&out));
    let report = json(&out);
    let finding = &report["findings"][0];
    assert_eq!(finding["id"], "signing_overlap_open:target:billing");
    assert_eq!(finding["severity"], "info");
    assert!(finding["evidence"]["until"].is_string(), "{finding}");
    let human = String::from_utf8_lossy(&run(&data, &["doctor"], None).stdout).to_string();
    assert!(
        human.contains("signing_overlap_open:target:billing"),
        "{human}"
    );
    assert!(human.contains("until: "), "{human}");
}
