//! The OpenAPI document covers the delivery API and every `$ref` resolves.

use serde_json::Value;

use crate::support::*;

fn refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                if k == "$ref"
                    && let Some(r) = v.as_str()
                {
                    out.push(r.to_owned());
                }
                refs(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

#[tokio::test]
async fn openapi_documents_the_delivery_api_and_every_ref_resolves() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let doc: Value = reqwest::get(format!("{}/openapi.json", server.url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    for path in [
        "/v1/events",
        "/v1/events/{id}",
        "/v1/deliveries/{id}",
        "/v1/dlq",
        "/v1/dlq/stats",
        "/v1/replays",
        "/v1/replays/{id}",
        "/v1/replays/{id}/cancel",
        "/v1/edges/{name}/lease",
    ] {
        assert!(doc["paths"][path].is_object(), "{path} is documented");
    }
    assert!(doc["paths"]["/v1/replays/{id}"]["put"].is_object());
    // The lookup by event key sits beside the submission.
    assert!(doc["paths"]["/v1/events"]["post"].is_object());
    let lookup = &doc["paths"]["/v1/events"]["get"];
    assert!(
        lookup["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "event_key"),
        "{lookup}"
    );
    let stats = doc["paths"]["/v1/dlq/stats"]["get"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_owned())
        .collect::<Vec<_>>();
    for name in [
        "group_by",
        "endpoint",
        "target",
        "flow",
        "error_class",
        "since",
        "until",
    ] {
        assert!(stats.iter().any(|s| s == name), "stats documents {name}");
    }
    assert!(doc["components"]["schemas"]["EventList"].is_object());
    assert!(doc["components"]["schemas"]["DlqCell"].is_object());
    assert!(doc["paths"]["/v1/replays/{id}"]["get"].is_object());
    let mut all = Vec::new();
    refs(&doc, &mut all);
    for r in all {
        let name = r.trim_start_matches("#/components/schemas/");
        assert!(
            doc["components"]["schemas"][name].is_object(),
            "dangling $ref {r}"
        );
    }
    let info: Value = Api::new(server.url()).get("/v1/info").await;
    assert_eq!(info["retry_schedule"].as_array().unwrap().len(), 5);
    assert!(
        info["features"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f == "replay-sessions")
    );
    server.stop().await.unwrap();
}

/// The document states what the server validates and every status it answers, so a client
/// generated from it (or schemathesis, `make test-api-fuzz`) sees what the server enforces.
#[tokio::test]
async fn openapi_states_the_validation_and_the_statuses_the_server_answers() {
    use switchyard_protocol::headers::IDEMPOTENCY_KEY_PATTERN;
    use switchyard_protocol::name::{NAME_MAX_LEN, NAME_PATTERN};
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let doc: Value = reqwest::get(format!("{}/openapi.json", server.url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let param = |path: &str, method: &str, name: &str| {
        doc["paths"][path][method]["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("{method} {path} has no {name}"))["schema"]
            .clone()
    };
    let name = param("/v1/flows/{name}", "patch", "name");
    assert_eq!(name["pattern"], NAME_PATTERN);
    assert_eq!(name["maxLength"], NAME_MAX_LEN);
    assert_eq!(
        param("/v1/flows", "post", "Idempotency-Key")["pattern"],
        IDEMPOTENCY_KEY_PATTERN
    );
    assert_eq!(param("/v1/dlq", "get", "limit")["maximum"], 500);
    assert_eq!(
        param("/v1/dlq", "get", "error_class")["$ref"],
        "#/components/schemas/ErrorClass"
    );
    let create = &doc["components"]["schemas"]["TargetCreateRequest"];
    assert_eq!(create["additionalProperties"], false);
    assert_eq!(
        create["properties"]["spec"]["$ref"],
        "#/components/schemas/TargetSpec"
    );
    // 415 wherever a JSON body is read, and the other successes an operation answers.
    for (path, method) in [
        ("/v1/events", "post"),
        ("/v1/edges/{name}/lease", "post"),
        ("/v1/replays/{id}", "put"),
        ("/v1/targets/{name}", "patch"),
    ] {
        assert!(
            doc["paths"][path][method]["responses"]["415"].is_object(),
            "{method} {path} documents 415"
        );
    }
    assert!(doc["paths"]["/v1/targets/{name}"]["put"]["responses"]["201"].is_object());
    assert!(doc["paths"]["/v1/events"]["post"]["responses"]["200"].is_object());
    assert!(doc["paths"]["/v1/replays/{id}"]["put"]["responses"]["200"].is_object());
    server.stop().await.unwrap();
}
