//! The diagnostics API's surface: auth, a clean tenant, the OpenAPI document.

use serde_json::{Value, json};

use crate::fix::diagnostics;
use crate::support::*;

#[tokio::test]
async fn a_clean_tenant_has_no_findings_and_a_token_is_required() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let api = Api::new(server.url());
    assert!(diagnostics(&api).await.findings.is_empty());
    let anonymous = api
        .http
        .get(format!("{}/v1/diagnostics", server.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status().as_u16(), 401);
    let (status, problem) = api.call("POST", "/v1/dlq/recount", None, None).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (400, Some("idempotency_key_missing"))
    );
    let (status, body) = api.call("POST", "/v1/dlq/recount", None, Some("k-1")).await;
    assert_eq!((status, body), (200, json!({"dead": 0, "corrected": 0})));
    server.stop().await.unwrap();
}

#[tokio::test]
async fn the_openapi_document_describes_the_diagnostics_and_their_fixes() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let doc: Value = reqwest::get(format!("{}/openapi.json", server.url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let paths = &doc["paths"];
    assert!(paths["/v1/diagnostics"]["get"]["responses"]["200"].is_object());
    let requeue = &paths["/v1/deliveries/{id}/requeue"]["post"];
    for status in ["200", "400", "404", "409", "415", "422"] {
        assert!(
            requeue["responses"][status].is_object(),
            "requeue answers {status}"
        );
    }
    let recount = &paths["/v1/dlq/recount"]["post"];
    assert!(recount["responses"]["200"].is_object());
    assert!(
        recount["responses"]["415"].is_null(),
        "the recount reads no body"
    );
    let schemas = &doc["components"]["schemas"];
    for schema in [
        "Diagnostics",
        "Finding",
        "FixAction",
        "RequeueRequest",
        "Requeued",
        "DlqRecount",
    ] {
        assert!(schemas[schema].is_object(), "{schema}");
    }
    assert_eq!(schemas["RequeueRequest"]["additionalProperties"], false);
    let codes = schemas["ErrorCode"].to_string();
    assert!(codes.contains("delivery_not_stuck"), "{codes}");
    server.stop().await.unwrap();
}
