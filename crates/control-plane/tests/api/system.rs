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
    // On the API's listener by default, so documented there (Prometheus text, not JSON).
    let metrics = &doc["paths"]["/metrics"]["get"]["responses"];
    assert!(
        metrics["200"]["content"]["text/plain; version=0.0.4"].is_object(),
        "{metrics}"
    );
}

/// The router and the document come from one declaration per route (src/openapi.rs:
/// `route`): every documented method on every documented path reaches a handler, which
/// answers anything but the router's own "no such route" 404 or 405.
#[tokio::test]
async fn every_documented_operation_is_served() {
    let s = TestServer::start().await;
    let doc = Observed::of(s.get("/openapi.json").await).await.json();
    let paths = doc["paths"].as_object().expect("paths");
    let mut operations = 0;
    for (template, item) in paths {
        // Any value fills a path parameter: an unknown name or id is the handler's 404.
        let path = template
            .split('/')
            .map(|part| {
                if part.starts_with('{') {
                    "zz-unknown"
                } else {
                    part
                }
            })
            .collect::<Vec<_>>()
            .join("/");
        for (method, _) in item.as_object().expect("a path item") {
            let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            let key = format!("served-{operations}");
            let answer = Observed::of(
                s.keyed(method.clone(), &path, &key)
                    .json(&serde_json::json!({}))
                    .send()
                    .await
                    .unwrap(),
            )
            .await;
            let problem = if answer.content_type.as_deref() == Some("application/problem+json") {
                answer.json()
            } else {
                serde_json::Value::Null
            };
            assert!(
                answer.status != 405 && problem["detail"] != "no such route",
                "{method} {template}: {} {problem}",
                answer.status
            );
            operations += 1;
        }
    }
    assert!(operations >= 40, "{operations} operations documented");
    // A method the document does not list on a path it does is the router's 405.
    let wrong = Observed::of(s.req(Method::DELETE, "/v1/dlq").send().await.unwrap()).await;
    assert_eq!(
        (wrong.status, wrong.code().as_str()),
        (405, "method_not_allowed")
    );
    assert!(paths["/v1/dlq"].get("delete").is_none());
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

/// Sends `head` as raw bytes (reqwest refuses to send control bytes in a header) and reads
/// the answer until the server closes the connection.
async fn raw_exchange(base: &str, head: &[u8]) -> (u16, String, serde_json::Value) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(head).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(
        std::time::Duration::from_secs(10),
        stream.read_to_end(&mut answer),
    )
    .await
    .expect("the server answers and closes")
    .unwrap();
    let text = String::from_utf8(answer).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").expect("a complete answer");
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let content_type = head
        .lines()
        .find_map(|l| l.strip_prefix("content-type: "))
        .unwrap_or_default()
        .to_owned();
    let problem = serde_json::from_str(body).unwrap_or(serde_json::Value::Null);
    (status, content_type, problem)
}

#[tokio::test]
async fn a_header_hyper_cannot_parse_answers_problem_json_naming_it() {
    let s = TestServer::start().await;
    // A control byte in If-Match: refused by the HTTP parser before any handler runs.
    let head = format!(
        "DELETE /v1/endpoints/orders HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {}\r\n\
         idempotency-key: k1\r\nIf-Match: \"1\x19\"\r\n\r\n",
        crate::support::TOKEN
    );
    let (status, content_type, problem) = raw_exchange(&s.base, head.as_bytes()).await;
    assert_eq!(
        (status, content_type.as_str()),
        (400, "application/problem+json")
    );
    assert_eq!(problem["code"], "validation_failed", "{problem}");
    assert_eq!(problem["field"], "If-Match", "{problem}");
    assert_eq!(problem["status"], 400);

    // Any other header the same way, also on a connection that served a request before.
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(s.base.trim_start_matches("http://"))
        .await
        .unwrap();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .unwrap();
    let mut first = [0u8; 1024];
    let n = stream.read(&mut first).await.unwrap();
    assert!(String::from_utf8_lossy(&first[..n]).starts_with("HTTP/1.1 200"));
    stream
        .write_all(b"GET /v1/info HTTP/1.1\r\nhost: x\r\nX-Trace: a\x01b\r\n\r\n")
        .await
        .unwrap();
    let mut rest = Vec::new();
    stream.read_to_end(&mut rest).await.unwrap();
    let rest = String::from_utf8(rest).unwrap();
    let (head, body) = rest.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 400"), "{rest}");
    assert!(
        head.contains("content-type: application/problem+json"),
        "{rest}"
    );
    let problem: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(
        (problem["code"].as_str(), problem["field"].as_str()),
        (Some("validation_failed"), Some("X-Trace"))
    );
}

#[tokio::test]
async fn non_ascii_if_match_answers_problem_json_naming_it() {
    let s = TestServer::start().await;
    let value = reqwest::header::HeaderValue::from_bytes("\"é\"".as_bytes()).unwrap();
    let answer = Observed::of(
        s.keyed(Method::DELETE, "/v1/endpoints/orders", "k1")
            .header("if-match", value)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        (answer.status, answer.content_type.as_deref()),
        (400, Some("application/problem+json"))
    );
    assert_eq!(answer.code(), "validation_failed");
    assert_eq!(answer.json()["field"], "If-Match");
}
