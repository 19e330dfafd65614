//! `switchyard dlq …` / `switchyard replay …` against a control plane whose deliveries die
//! fast (millisecond schedule, a receiver port that refuses connections).

use std::time::Duration;

use serde_json::{Value, json};
use switchyard_control_plane::Server;
use switchyard_test_support::plane;

use crate::{TOKEN, json as parse, run};

const FAST: &str = "0s,20ms,20ms,20ms,20ms";

async fn post(base: &str, path: &str, body: Value) {
    let resp = reqwest::Client::new()
        .post(format!("{base}{path}"))
        .bearer_auth(TOKEN)
        .header(
            "idempotency-key",
            format!("00000000-0000-4000-8000-{:012x}", rand_n()),
        )
        .json(&body)
        .send()
        .await
        .unwrap();
    assert!(
        resp.status().is_success(),
        "{path}: {}",
        resp.text().await.unwrap()
    );
}

fn rand_n() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(1);
    N.fetch_add(1, Ordering::Relaxed)
}

/// A control plane whose deliveries die fast: endpoint `ep` → targets `crm`, `erp` on a
/// closed loopback port (flows `to-crm`, `to-erp`).
async fn dying_plane(dir: &std::path::Path) -> switchyard_control_plane::Server {
    let config = plane::config(&dir.join("cp.db"), &[("acme", TOKEN)]);
    let server = Server::start(plane::fast(config, FAST)).await.unwrap();
    let base = server.url();
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let hook = format!("http://127.0.0.1:{closed}/hook");
    post(&base, "/v1/endpoints", json!({"name": "ep", "spec": {}})).await;
    for t in ["crm", "erp"] {
        post(
            &base,
            "/v1/targets",
            json!({"name": t, "spec": {"url": hook, "timeout_ms": 500}}),
        )
        .await;
        post(
            &base,
            "/v1/flows",
            json!({"name": format!("to-{t}"), "spec": {"endpoint": "ep", "target": t}}),
        )
        .await;
    }
    server
}

/// [`dying_plane`] with `events` events submitted on `ep`, and a console data dir (returned)
/// whose only profile, `prod`, points at it.
pub(crate) async fn dying_plane_with_events(
    dir: &std::path::Path,
    events: u32,
) -> (switchyard_control_plane::Server, std::path::PathBuf) {
    let server = dying_plane(dir).await;
    let base = server.url();
    for i in 0..events {
        post(
            &base,
            "/v1/events",
            json!({"endpoint": "ep", "event_type": "order.paid", "payload": {"n": i}}),
        )
        .await;
    }
    let data = dir.join("console");
    let out = run(
        &data,
        &["profile", "add", "prod", "--url", &base, "--token-stdin"],
        Some(TOKEN),
    );
    assert!(out.status.success());
    (server, data)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dlq_list_filters_stats_and_a_replay_started_twice_is_one_session() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, data) = dying_plane_with_events(dir.path(), 3).await;

    // The DLQ fills: 3 events × 2 targets.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let out = run(
            &data,
            &["--json", "dlq", "stats", "--group-by", "target"],
            None,
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        if parse(&out)["total"] == 6 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "DLQ never filled");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // A filter narrows the list.
    let out = run(
        &data,
        &["--json", "dlq", "list", "--target", "crm", "--since", "1h"],
        None,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let items = parse(&out)["items"].as_array().unwrap().clone();
    assert_eq!(items.len(), 3);
    assert!(items.iter().all(|e| e["target"] == "crm"));
    // The human table shows them too.
    let out = run(
        &data,
        &["dlq", "list", "--error-class", "connect", "--limit", "2"],
        None,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("DELIVERY") && text.contains("connect") && text.contains("more: --cursor"),
        "{text}"
    );

    // Bad input names the flag; nothing selected is refused (no accidental whole-DLQ replay).
    let out = run(&data, &["dlq", "list", "--error-class", "boom"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--error-class"));
    let out = run(&data, &["replay", "start"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing selected"));

    // Dry run counts and starts nothing.
    let out = run(
        &data,
        &["--json", "replay", "start", "--target", "crm", "--dry-run"],
        None,
    );
    assert_eq!(
        parse(&out)["count"],
        3,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Started twice with one session id (a retried script): one session.
    for _ in 0..2 {
        let out = run(
            &data,
            &[
                "--json",
                "replay",
                "start",
                "--target",
                "crm",
                "--session-id",
                "night-1",
                "--rate",
                "50",
            ],
            None,
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(parse(&out)["state"], "done");
    }
    let out = run(&data, &["--json", "replay", "list"], None);
    let sessions = parse(&out)["sessions"].as_array().unwrap().clone();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let out = run(&data, &["--json", "replay", "status", "night-1"], None);
    assert_eq!(parse(&out)["counts"]["total"], 3);

    // Human status follows until the session is done (the re-deliveries die again).
    let out = run(&data, &["replay", "status", "night-1"], None);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("3/3"), "{err}");

    let out = run(&data, &["--json", "replay", "cancel", "night-1"], None);
    assert_eq!(
        parse(&out)["state"],
        "done",
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// Waits until `switchyard dlq stats` counts `total` dead deliveries.
async fn wait_dead(data: &std::path::Path, total: u64) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let out = run(data, &["--json", "dlq", "stats"], None);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        if parse(&out)["total"] == total {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "DLQ never filled");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_get_and_find_by_key_show_every_delivery_and_stats_group_by_cause() {
    let dir = tempfile::tempdir().unwrap();
    let server = dying_plane(dir.path()).await;
    let base = server.url();
    post(
        &base,
        "/v1/events",
        json!({"endpoint": "ep", "event_type": "order.paid", "payload": {}, "event_key": "order-77"}),
    )
    .await;
    post(
        &base,
        "/v1/events",
        json!({"endpoint": "ep", "event_type": "order.paid", "payload": {}}),
    )
    .await;
    let data = dir.path().join("console");
    let out = run(
        &data,
        &["profile", "add", "prod", "--url", &base, "--token-stdin"],
        Some(TOKEN),
    );
    assert!(out.status.success());
    wait_dead(&data, 4).await;

    // Find by key: the event, with its two (dead) deliveries.
    let out = run(
        &data,
        &["--json", "events", "find", "--key", "order-77"],
        None,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let found = parse(&out);
    let items = found["items"].as_array().unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["event_key"], "order-77");
    let event_id = items[0]["id"].as_str().unwrap().to_owned();
    let deliveries = items[0]["deliveries"].as_array().unwrap();
    assert_eq!(deliveries.len(), 2);
    assert!(deliveries.iter().all(|d| d["state"] == "dead"));
    // The same by id, and as a table for a person.
    let out = run(&data, &["--json", "events", "get", &event_id], None);
    assert_eq!(parse(&out)["deliveries"].as_array().unwrap().len(), 2);
    let out = run(
        &data,
        &["events", "find", "--key", "order-77", "--endpoint", "ep"],
        None,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&event_id)
            && text.contains("DELIVERY")
            && text.contains("crm")
            && text.contains("erp")
            && text.contains("dead")
            && text.contains("connect"),
        "{text}"
    );
    let out = run(
        &data,
        &["events", "find", "--key", "order-77", "--endpoint", "other"],
        None,
    );
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("no event with key"));
    // Unknown id: exit 1 naming it; bad input names the flag.
    let out = run(&data, &["events", "get", "evt_nope"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("evt_nope"));
    let out = run(
        &data,
        &["events", "find", "--key", "k", "--limit", "0"],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("limit"));

    // Stats by cause in one call, with the filter flags.
    let out = run(
        &data,
        &["--json", "dlq", "stats", "--group-by", "error_class,target"],
        None,
    );
    assert_eq!(
        parse(&out)["rows"],
        json!([
            {"error_class": "connect", "target": "crm", "count": 2},
            {"error_class": "connect", "target": "erp", "count": 2}
        ])
    );
    let out = run(
        &data,
        &[
            "--json",
            "dlq",
            "stats",
            "--group-by",
            "cause",
            "--flow",
            "to-erp",
        ],
        None,
    );
    let stats = parse(&out);
    assert_eq!(stats["total"], 2);
    assert_eq!(stats["rows"][0]["target"], "erp");
    let out = run(&data, &["dlq", "stats", "--group-by", "cause"], None);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("ERROR CLASS") && text.contains("total: 4"),
        "{text}"
    );
}
