//! Roles and tokens (docs/security.md, "Roles and tokens"), on in-process servers: every
//! operation of `/openapi.json` called with a token of each role, against a table kept
//! here (so a route added without its role fails this test); a refused call changes
//! nothing; a token's value is shown once and never stored in clear; a revocation holds on
//! another replica at once; unknown tokens are rate-limited per client.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use switchyard_control_plane::Server;
use switchyard_control_plane::limits::Rate;
use switchyard_test_support::{plane, postgres};

const ADMIN: &str = "acme-admin-token-1";

/// What each operation needs, as the docs promise it: `public` (no token), a role, or `any`
/// (any valid token, the edge role included).
const EXPECTED: &[(&str, &str)] = &[
    ("GET /healthz", "public"),
    ("GET /readyz", "public"),
    ("GET /metrics", "public"),
    ("GET /v1/info", "viewer"),
    ("GET /v1/whoami", "any"),
    ("GET /v1/tokens", "admin"),
    ("POST /v1/tokens", "admin"),
    ("DELETE /v1/tokens/{id}", "admin"),
    ("GET /v1/endpoints", "viewer"),
    ("POST /v1/endpoints", "admin"),
    ("GET /v1/endpoints/{name}", "viewer"),
    ("PATCH /v1/endpoints/{name}", "admin"),
    ("PUT /v1/endpoints/{name}", "admin"),
    ("DELETE /v1/endpoints/{name}", "admin"),
    ("POST /v1/endpoints/{name}/enable", "operator"),
    ("POST /v1/endpoints/{name}/disable", "operator"),
    ("GET /v1/targets", "viewer"),
    ("POST /v1/targets", "admin"),
    ("GET /v1/targets/{name}", "viewer"),
    ("PATCH /v1/targets/{name}", "admin"),
    ("PUT /v1/targets/{name}", "admin"),
    ("DELETE /v1/targets/{name}", "admin"),
    ("POST /v1/targets/{name}/test", "operator"),
    ("GET /v1/targets/{name}/secrets", "viewer"),
    ("POST /v1/targets/{name}/secrets/rotate", "operator"),
    ("POST /v1/targets/{name}/secrets/{id}/expire", "operator"),
    ("GET /v1/targets/{name}/client-certificates", "viewer"),
    (
        "PUT /v1/targets/{name}/client-certificates/{id}",
        "operator",
    ),
    (
        "POST /v1/targets/{name}/client-certificates/{id}/activate",
        "operator",
    ),
    ("GET /v1/flows", "viewer"),
    ("POST /v1/flows", "admin"),
    ("GET /v1/flows/{name}", "viewer"),
    ("PATCH /v1/flows/{name}", "admin"),
    ("PUT /v1/flows/{name}", "admin"),
    ("DELETE /v1/flows/{name}", "admin"),
    ("GET /v1/events", "viewer"),
    ("POST /v1/events", "operator"),
    ("GET /v1/events/{id}", "viewer"),
    ("GET /v1/deliveries/{id}", "viewer"),
    ("POST /v1/deliveries/{id}/requeue", "operator"),
    ("GET /v1/dlq", "viewer"),
    ("GET /v1/dlq/stats", "viewer"),
    ("POST /v1/dlq/recount", "operator"),
    ("GET /v1/replays", "viewer"),
    ("GET /v1/replays/{id}", "viewer"),
    ("PUT /v1/replays/{id}", "operator"),
    ("POST /v1/replays/{id}/cancel", "operator"),
    ("GET /v1/retirements", "viewer"),
    ("GET /v1/retirements/{id}", "viewer"),
    ("PUT /v1/retirements/{id}", "admin"),
    ("POST /v1/retirements/{id}/cancel", "admin"),
    ("GET /v1/metrics/deliveries", "viewer"),
    ("GET /v1/diagnostics", "viewer"),
    ("POST /v1/edges/{name}/lease", "edge"),
    ("POST /v1/edges/{name}/attempts/{attempt_id}", "edge"),
];

const ROLES: [&str; 4] = ["viewer", "operator", "admin", "edge"];

fn allows(role: &str, needed: &str) -> bool {
    match needed {
        "public" | "any" => true,
        _ if role == "admin" => true,
        "edge" => role == "edge",
        "viewer" => role == "viewer" || role == "operator",
        "operator" => role == "operator",
        _ => false,
    }
}

async fn call(
    base: &str,
    token: Option<&str>,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .request(method.parse().unwrap(), format!("{base}{path}"))
        .header("Idempotency-Key", uuid::Uuid::new_v4().to_string());
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// Makes a token of `role` named `name` with the admin token; its value.
async fn token(base: &str, name: &str, role: &str) -> String {
    let (status, body) = call(
        base,
        Some(ADMIN),
        "POST",
        "/v1/tokens",
        Some(json!({"name": name, "role": role})),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    body["value"].as_str().unwrap().to_owned()
}

async fn start(dir: &std::path::Path) -> Server {
    Server::start(plane::config(&dir.join("cp.db"), &[("acme", ADMIN)]))
        .await
        .unwrap()
}

#[tokio::test]
async fn every_operation_needs_the_role_the_table_says() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    let base = format!("http://{}", server.addr);
    let mut tokens = BTreeMap::new();
    for role in ROLES {
        tokens.insert(role, token(&base, &format!("t-{role}"), role).await);
    }

    let (_, document) = call(&base, None, "GET", "/openapi.json", None).await;
    let mut operations = BTreeMap::new();
    for (template, item) in document["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            operations.insert(format!("{} {template}", method.to_uppercase()), op.clone());
        }
    }
    let expected: BTreeMap<String, &str> = EXPECTED
        .iter()
        .map(|(op, role)| ((*op).to_owned(), *role))
        .collect();
    assert_eq!(
        operations.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>(),
        "every operation the server serves is in this test's table, and no other"
    );

    for (operation, needed) in &expected {
        let declared = operations[operation]["x-switchyard-role"].as_str();
        match *needed {
            "public" => assert_eq!(declared, None, "{operation}"),
            "any" => assert_eq!(declared, Some("viewer"), "{operation}"),
            role => assert_eq!(declared, Some(role), "{operation} in /openapi.json"),
        }
        let (method, template) = operation.split_once(' ').unwrap();
        let path = template
            .replace("{name}", "nope")
            .replace("{id}", "nope")
            .replace("{attempt_id}", "nope");
        let body = (method != "GET" && method != "DELETE").then(|| json!({}));
        for role in ROLES {
            let (status, problem) =
                call(&base, Some(&tokens[role]), method, &path, body.clone()).await;
            if allows(role, needed) {
                assert!(
                    status != 401 && status != 403,
                    "{role} may call {operation}, got {status} {problem}"
                );
            } else {
                assert_eq!(status, 403, "{role} may not call {operation}: {problem}");
                assert_eq!(problem["code"], "forbidden_role", "{operation}");
                let detail = problem["detail"].as_str().unwrap();
                assert!(
                    detail.contains(&format!("role is {role}"))
                        && detail.contains(&format!("role {needed}")),
                    "{operation}: {detail}"
                );
            }
        }
        if *needed != "public" {
            let (status, _) = call(&base, None, method, &path, body.clone()).await;
            assert_eq!(status, 401, "{operation} without a token");
        }
    }
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_refused_write_changes_nothing_and_whoami_says_who_is_asking() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    let base = format!("http://{}", server.addr);
    let viewer = token(&base, "alice", "viewer").await;
    let operator = token(&base, "bob", "operator").await;

    let create = json!({"name": "orders", "spec": {}});
    for refused in [&viewer, &operator] {
        let body = Some(create.clone());
        let (status, _) = call(&base, Some(refused), "POST", "/v1/endpoints", body).await;
        assert_eq!(status, 403);
    }
    let (_, list) = call(&base, Some(&viewer), "GET", "/v1/endpoints", None).await;
    assert_eq!(list["items"], json!([]), "nothing was created");
    let (status, _) = call(&base, Some(ADMIN), "POST", "/v1/endpoints", Some(create)).await;
    assert_eq!(status, 201);
    let (status, body) = call(
        &base,
        Some(&operator),
        "POST",
        "/v1/endpoints/orders/disable",
        Some(json!({})),
    )
    .await;
    assert_eq!(status, 200, "an operator disables an endpoint: {body}");

    let (_, me) = call(&base, Some(&viewer), "GET", "/v1/whoami", None).await;
    assert_eq!(me["tenant"], "acme");
    assert_eq!(me["role"], "viewer");
    assert_eq!(me["token_name"], "alice");
    assert!(me["token_id"].as_str().unwrap().starts_with("tok_"));
    let (_, me) = call(&base, Some(ADMIN), "GET", "/v1/whoami", None).await;
    assert_eq!(me, json!({"tenant": "acme", "role": "admin"}));
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_token_is_shown_once_and_stored_only_as_a_digest() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    let base = format!("http://{}", server.addr);
    let client = reqwest::Client::new();
    let send = || {
        client
            .post(format!("{base}/v1/tokens"))
            .bearer_auth(ADMIN)
            .header("Idempotency-Key", "make-ci-token")
            .json(&json!({"name": "ci", "role": "operator"}))
            .send()
    };
    let first = send().await.unwrap();
    assert_eq!(first.status(), 201);
    let first: Value = first.json().await.unwrap();
    let retried = send().await.unwrap();
    assert_eq!(retried.headers()["idempotent-replayed"], "true");
    let retried: Value = retried.json().await.unwrap();
    assert_eq!(first, retried, "a retried creation answers the same token");
    let value = first["value"].as_str().unwrap();
    assert!(value.starts_with("sy_") && value.len() == 67, "{value}");

    let (status, body) = call(
        &base,
        Some(ADMIN),
        "POST",
        "/v1/tokens",
        Some(json!({"name": "ci", "role": "viewer"})),
    )
    .await;
    assert_eq!((status, body["code"].as_str()), (409, Some("name_taken")));
    let (_, list) = call(&base, Some(ADMIN), "GET", "/v1/tokens", None).await;
    assert_eq!(list["items"].as_array().unwrap().len(), 1);
    assert!(
        list["items"][0].get("value").is_none(),
        "a list never shows a value"
    );

    // Used once: the list says when (to the minute), and nothing on disk holds the value.
    let (status, _) = call(&base, Some(value), "GET", "/v1/endpoints", None).await;
    assert_eq!(status, 200);
    let used = tokio::time::timeout(std::time::Duration::from_secs(5), async {
        loop {
            let (_, list) = call(&base, Some(ADMIN), "GET", "/v1/tokens", None).await;
            if list["items"][0]["last_used_at"].is_string() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    })
    .await;
    assert!(used.is_ok(), "last_used_at is recorded");
    server.stop().await.unwrap();
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        assert!(
            !bytes.windows(value.len()).any(|w| w == value.as_bytes()),
            "the token's value is in clear on disk"
        );
    }
}

#[tokio::test]
async fn a_revocation_holds_on_every_replica_at_once() {
    let db = postgres::TestDatabase::create().await;
    let dir = tempfile::tempdir().unwrap();
    let key_file = dir.path().join("main-key");
    switchyard_control_plane::sealing::Sealer::ephemeral()
        .write_file(&key_file)
        .unwrap();
    let replica = || {
        let mut config = plane::config(&dir.path().join("unused.db"), &[("acme", ADMIN)]);
        config.db_url = db.url.clone();
        config.main_key_file = Some(key_file.clone());
        Server::start(config)
    };
    let (a, b) = (replica().await.unwrap(), replica().await.unwrap());
    let (a_url, b_url) = (format!("http://{}", a.addr), format!("http://{}", b.addr));
    let value = token(&a_url, "pager", "operator").await;
    let (status, _) = call(&b_url, Some(&value), "GET", "/v1/endpoints", None).await;
    assert_eq!(
        status, 200,
        "a token made on one replica works on the other"
    );
    let (_, me) = call(&b_url, Some(&value), "GET", "/v1/whoami", None).await;
    let id = me["token_id"].as_str().unwrap().to_owned();

    let (status, revoked) = call(
        &a_url,
        Some(ADMIN),
        "DELETE",
        &format!("/v1/tokens/{id}"),
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert!(revoked["revoked_at"].is_string());
    let (status, problem) = call(&b_url, Some(&value), "GET", "/v1/endpoints", None).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (401, Some("unauthorized"))
    );
    let (status, _) = call(
        &a_url,
        Some(ADMIN),
        "DELETE",
        &format!("/v1/tokens/{id}"),
        None,
    )
    .await;
    assert_eq!(status, 404, "a revoked token is gone");
    a.stop().await.unwrap();
    b.stop().await.unwrap();
}

#[tokio::test]
async fn unknown_tokens_are_limited_per_client() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = plane::config(&dir.path().join("cp.db"), &[("acme", ADMIN)]);
    config.limits.failed_auth = Rate {
        per_s: 0.1,
        burst: 3,
    };
    let server = Server::start(config).await.unwrap();
    let base = format!("http://{}", server.addr);
    for guess in 0..3 {
        let (status, _) = call(
            &base,
            Some(&format!("guess-{guess}")),
            "GET",
            "/v1/endpoints",
            None,
        )
        .await;
        assert_eq!(status, 401);
    }
    let (status, problem) = call(&base, Some("guess-4"), "GET", "/v1/endpoints", None).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (429, Some("rate_limited"))
    );
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("failed_authentications")
    );
    let (status, _) = call(&base, Some(ADMIN), "GET", "/v1/endpoints", None).await;
    assert_eq!(status, 429, "the client waits even with a good token");
    server.stop().await.unwrap();
}
