//! /healthz, /v1/info, /openapi.json and the problem+json fallbacks.

use reqwest::Method;

use crate::support::{Observed, TestServer};

#[tokio::test]
async fn health_info_and_openapi() {
    let s = TestServer::start().await;
    let health = s
        .client
        .get(format!("{}/healthz", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200, "no auth needed");
    let info = Observed::of(s.get("/v1/info").await).await.json();
    assert_eq!(info["idempotency_retention_seconds"], 86400);
    // What an operator reports: the version, the commit and the build date of this binary.
    assert_eq!(info["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(
        info["commit"].as_str(),
        switchyard_build_info::commit(),
        "the commit the server was built from (absent without git metadata)"
    );
    let built = info["build_date"].as_str().expect("build_date is reported");
    assert!(
        chrono::DateTime::parse_from_rfc3339(built).is_ok(),
        "build_date is RFC 3339: {built}"
    );
    assert_eq!(
        info["retry_schedule"],
        serde_json::json!(["0s", "10s", "1m", "10m", "1h"])
    );
    assert!(
        info["features"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f == "idempotency-key")
    );

    let doc = Observed::of(
        s.client
            .get(format!("{}/openapi.json", s.base))
            .send()
            .await
            .unwrap(),
    )
    .await
    .json();
    assert_eq!(
        doc["openapi"].as_str().map(|v| v.starts_with("3.1")),
        Some(true)
    );
    for path in [
        "/v1/endpoints",
        "/v1/targets/{name}",
        "/v1/flows/{name}",
        "/v1/endpoints/{name}/disable",
        "/v1/info",
    ] {
        assert!(doc["paths"].get(path).is_some(), "{path} documented");
    }
    let create = &doc["paths"]["/v1/flows"]["post"];
    assert!(
        create["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "Idempotency-Key" && p["required"] == true)
    );
    assert!(doc["components"]["schemas"].get("FlowSpec").is_some());
}

#[tokio::test]
async fn unknown_routes_and_methods_answer_problem_json() {
    let s = TestServer::start().await;
    let missing = Observed::of(s.get("/v1/nope").await).await;
    assert_eq!(
        (
            missing.status,
            missing.content_type.as_deref(),
            missing.code().as_str()
        ),
        (404, Some("application/problem+json"), "not_found")
    );
    let wrong = Observed::of(s.req(Method::DELETE, "/v1/endpoints").send().await.unwrap()).await;
    assert_eq!(
        (wrong.status, wrong.code().as_str()),
        (405, "method_not_allowed")
    );
}
