//! Strict input (issue 45 D8, D9): a body repeating an object key, a description holding
//! control characters and a target URL with an empty authority are refused with a 400
//! problem naming the field, and nothing is stored.

use reqwest::Method;
use serde_json::json;

use crate::support::{Observed, TestServer};

async fn post(s: &TestServer, path: &str, key: &str, body: &str) -> Observed {
    let r = s
        .keyed(Method::POST, path, key)
        .header("content-type", "application/json")
        .body(body.to_owned())
        .send()
        .await
        .unwrap();
    Observed::of(r).await
}

fn refused(r: &Observed, field: &str, says: &str) {
    assert_eq!(r.status, 400, "{}", r.json());
    assert_eq!(r.content_type.as_deref(), Some("application/problem+json"));
    assert_eq!(r.code(), "validation_failed", "{}", r.json());
    assert_eq!(r.json()["field"], field, "{}", r.json());
    let detail = r.json()["detail"].as_str().unwrap_or_default().to_owned();
    assert!(detail.contains(says), "{detail}");
}

#[tokio::test]
async fn a_body_repeating_a_key_is_refused_naming_it() {
    let s = TestServer::start().await;
    for (i, (body, field)) in [
        (
            r#"{"name":"e","spec":{"description":"a","description":"b"}}"#,
            "spec.description",
        ),
        (r#"{"name":"e","name":"f","spec":{}}"#, "name"),
        (
            r#"{"name":"t","spec":{"url":"https://a.example/h","url":"http://169.254.169.254/"}}"#,
            "spec.url",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let path = if body.contains("url") {
            "/v1/targets"
        } else {
            "/v1/endpoints"
        };
        let r = post(&s, path, &format!("dup-{i}"), body).await;
        refused(&r, field, "duplicate keys are refused");
    }
    // A PATCH body too (merge patches go through the same reader).
    let r = post(&s, "/v1/endpoints", "ok", r#"{"name":"e","spec":{}}"#).await;
    assert_eq!(r.status, 201, "{}", r.json());
    let patch = s
        .keyed(Method::PATCH, "/v1/endpoints/e", "patch-dup")
        .header("content-type", "application/merge-patch+json")
        .body(r#"{"spec":{"description":"x","description":"y"}}"#)
        .send()
        .await
        .unwrap();
    refused(
        &Observed::of(patch).await,
        "spec.description",
        "appears more than once",
    );
    // The same keys once each are fine: the control.
    let r = post(
        &s,
        "/v1/endpoints",
        "ok-2",
        r#"{"name":"e2","spec":{"description":"a"}}"#,
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.json());
    let e = Observed::of(s.get("/v1/endpoints/e").await).await.json();
    assert_eq!(
        (e["version"].as_i64(), &e["spec"]["description"]),
        (Some(1), &json!(""))
    );
}

#[tokio::test]
async fn control_characters_in_a_description_are_refused() {
    let s = TestServer::start().await;
    for (i, text) in [
        "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{1b}[31mRED",
        "nul\u{0}byte",
        "line\r\nFAKE-LINE",
        "tab\there",
        "c1\u{9b}31m",
        "del\u{7f}",
    ]
    .into_iter()
    .enumerate()
    {
        let body = json!({"name": format!("e{i}"), "spec": {"description": text}});
        let r = Observed::of(s.create("endpoints", &format!("cc-{i}"), body).await).await;
        refused(
            &r,
            "spec.description",
            "must not contain control characters",
        );
    }
    let list = Observed::of(s.get("/v1/endpoints").await).await.json();
    assert_eq!(list["items"], json!([]), "nothing stored");
    // Printable text of any script is fine.
    let body = json!({"name": "ok", "spec": {"description": "Café — 注文 ✓"}});
    let r = Observed::of(s.create("endpoints", "ok", body).await).await;
    assert_eq!(r.status, 201, "{}", r.json());
}

#[tokio::test]
async fn a_url_with_an_empty_authority_is_refused() {
    let s = TestServer::start().await;
    for (i, url) in [
        "http:///nohost",
        "https:///nohost/hook",
        "http:/nohost",
        "http:nohost",
        "http:\\\\nohost",
        "http://@/x",
    ]
    .into_iter()
    .enumerate()
    {
        let body = json!({"name": format!("t{i}"), "spec": {"url": url}});
        let r = Observed::of(s.create("targets", &format!("url-{i}"), body).await).await;
        assert_eq!(r.status, 400, "{url}: {}", r.json());
        assert_eq!(r.json()["field"], "spec.url", "{url}: {}", r.json());
    }
    let list = Observed::of(s.get("/v1/targets").await).await.json();
    assert_eq!(list["items"], json!([]), "nothing stored");
    let body = json!({"name": "ok", "spec": {"url": "http://user@hooks.example:8080/x"}});
    let r = Observed::of(s.create("targets", "ok", body).await).await;
    assert_eq!(r.status, 201, "{}", r.json());
}
