//! Streamable HTTP: the bearer token, the Origin allowlist and the body cap, seen by a client.

use switchyard_mcp::http::HttpOptions;

use crate::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_needs_the_token_an_allowed_origin_and_a_small_body() {
    let dir = tempfile::tempdir().unwrap();
    let running = read_only_http(dir.path(), vec!["http://localhost:5173".into()]).await;
    let url = running.url();
    let http = reqwest::Client::new();
    let post = |body: String| {
        http.post(&url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body)
    };
    let body = initialize_request(1, "curl").to_string();

    let missing = post(body.clone()).send().await.unwrap();
    assert_eq!(missing.status(), 401);
    assert_eq!(missing.headers()["www-authenticate"], "Bearer");
    let wrong = post(body.clone())
        .bearer_auth("not-the-token-at-all")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    assert!(!wrong.text().await.unwrap().contains(HTTP_TOKEN));

    let foreign = post(body.clone())
        .bearer_auth(HTTP_TOKEN)
        .header("origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), 403);
    let why: serde_json::Value = foreign.json().await.expect("a JSON body, like the 401's");
    assert_eq!(why["error"]["code"], "forbidden", "{why}");
    assert!(why["error"]["message"].as_str().unwrap().len() > 5, "{why}");
    let rebound = post(body.clone())
        .bearer_auth(HTTP_TOKEN)
        .header("host", "attacker.example:80")
        .send()
        .await
        .unwrap();
    assert_eq!(rebound.status(), 403);
    let why: serde_json::Value = rebound.json().await.unwrap();
    assert_eq!(why["error"]["code"], "forbidden", "{why}");

    let huge = post(format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"pad\":\"{}\"}}",
        "x".repeat(100 * 1024)
    ))
    .bearer_auth(HTTP_TOKEN)
    .send()
    .await
    .unwrap();
    assert_eq!(huge.status(), 413);

    for origin in [None, Some("http://localhost:5173")] {
        let mut req = post(body.clone()).bearer_auth(HTTP_TOKEN);
        if let Some(o) = origin {
            req = req.header("origin", o);
        }
        let ok = req.send().await.unwrap();
        assert_eq!(ok.status(), 200, "origin {origin:?}");
        let text = ok.text().await.unwrap();
        assert!(text.contains("\"name\":\"switchyard\""), "{text}");
    }
    running.stop().await.unwrap();
}

#[test]
fn http_refuses_a_non_loopback_address_and_a_weak_token() {
    let mut opts = HttpOptions {
        listen: "0.0.0.0:8765".parse().unwrap(),
        token: HTTP_TOKEN.into(),
        allowed_origins: vec![],
        max_body_bytes: 1024,
    };
    assert!(
        switchyard_mcp::http::check(&opts)
            .unwrap_err()
            .contains("loopback")
    );
    // Every loopback address is loopback: all of 127.0.0.0/8, and [::1].
    for ok in ["127.0.0.1:8765", "127.0.0.2:8765", "[::1]:8765"] {
        opts.listen = ok.parse().unwrap();
        assert!(switchyard_mcp::http::check(&opts).is_ok(), "{ok}");
    }
    opts.token = "short".into();
    assert!(
        switchyard_mcp::http::check(&opts)
            .unwrap_err()
            .contains("16")
    );
}
