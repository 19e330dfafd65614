//! A profile whose token has a role (docs/security.md, "Roles and tokens"): `profile test`
//! names it, and a write the role may not make is not lost: it needs attention, naming the
//! role it needs, while the control plane holds nothing of it.

use serde_json::{Value, json};
use switchyard_control_plane::Server;
use switchyard_test_support::plane;

use super::{TOKEN, json as parse, run};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_viewer_profile_names_its_role_and_a_refused_write_needs_attention() {
    let dir = tempfile::tempdir().unwrap();
    let config = plane::config(&dir.path().join("cp.db"), &[("acme", TOKEN)]);
    let server = Server::start(config).await.unwrap();
    let url = server.url();
    let made: Value = reqwest::Client::new()
        .post(format!("{url}/v1/tokens"))
        .bearer_auth(TOKEN)
        .header("Idempotency-Key", "viewer-token")
        .json(&json!({"name": "alice", "role": "viewer"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let viewer = made["value"].as_str().unwrap();

    let data = dir.path().join("console");
    let out = run(
        &data,
        &["profile", "add", "ro", "--url", &url, "--token-stdin"],
        Some(viewer),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(&data, &["profile", "test"], None);
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("role viewer (tenant acme)"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    let out = run(
        &data,
        &["endpoints", "create", "orders", "--spec", "{}"],
        None,
    );
    assert!(out.status.success(), "queued locally");
    let out = run(
        &data,
        &["sync", "--until-drained", "--timeout", "20s"],
        None,
    );
    assert_eq!(out.status.code(), Some(3), "a write needs attention");
    let out = run(&data, &["--json", "outbox", "list", "--all"], None);
    let listed = parse(&out).to_string();
    assert!(listed.contains("forbidden_role"), "{listed}");
    assert!(listed.contains("needs a token of role admin"), "{listed}");

    let (status, endpoints) = {
        let r = reqwest::Client::new()
            .get(format!("{url}/v1/endpoints"))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.json::<Value>().await.unwrap())
    };
    assert_eq!((status, endpoints["items"].clone()), (200, json!([])));
    server.stop().await.unwrap();
}
