//! The OpenAPI document covers the retirement API with the statuses and bodies it answers.

use serde_json::Value;

use crate::helpers::server;

#[tokio::test]
async fn openapi_documents_retirements() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _api) = server(dir.path()).await;
    let doc: Value = reqwest::get(format!("{}/openapi.json", server.url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let put = &doc["paths"]["/v1/retirements/{id}"]["put"];
    for status in ["200", "201", "400", "404", "409", "415", "422"] {
        assert!(
            put["responses"][status].is_object(),
            "PUT documents {status}"
        );
    }
    let same = &put["responses"]["200"]["content"]["application/json"]["schema"]["oneOf"];
    assert_eq!(
        same.as_array().unwrap().len(),
        2,
        "a retirement or a dry run"
    );
    let cancel = &doc["paths"]["/v1/retirements/{id}/cancel"]["post"];
    for status in ["200", "404", "409", "422"] {
        assert!(
            cancel["responses"][status].is_object(),
            "cancel documents {status}"
        );
    }
    assert!(
        cancel["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "Idempotency-Key" && p["required"] == true)
    );
    assert!(doc["paths"]["/v1/retirements"]["get"].is_object());
    assert!(doc["paths"]["/v1/retirements/{id}"]["get"].is_object());
    let id = put["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "id")
        .unwrap();
    assert_eq!(
        id["schema"]["pattern"],
        switchyard_protocol::replay::SESSION_ID_PATTERN
    );
    let schemas = &doc["components"]["schemas"];
    let request = &schemas["RetirementRequest"];
    assert_eq!(request["additionalProperties"], false);
    assert_eq!(request["properties"]["grace_seconds"]["maximum"], 604_800);
    for name in [
        "Retirement",
        "RetirementDryRun",
        "RetirementList",
        "RetirementState",
        "Blocker",
    ] {
        assert!(schemas[name].is_object(), "{name} is a schema");
    }
    let codes = schemas["ErrorCode"].to_string();
    for code in [
        "retirement_reused",
        "retirement_not_cancellable",
        "resource_retiring",
    ] {
        assert!(codes.contains(code), "ErrorCode lists {code}");
    }
    server.stop().await.unwrap();
}
