//! The rotation API as a client sees it: keyed replays, the 409s, validation, tenancy, the
//! verify step and the OpenAPI document.

use serde_json::{Value, json};

use crate::support::{Api, OTHER_TOKEN, Receiver, server, status};
use crate::{expire, first_secret_id, overlap, rotate, secrets, signature_count, verifies};

async fn raw_rotate(
    api: &Api,
    key: &str,
    body: &Value,
) -> (u16, reqwest::header::HeaderMap, String) {
    let response = api
        .http
        .post(format!("{}/v1/targets/tg/secrets/rotate", api.base))
        .bearer_auth(crate::support::TOKEN)
        .header("idempotency-key", key)
        .json(body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    (status, headers, response.text().await.unwrap())
}

#[tokio::test]
async fn a_keyed_replay_of_a_rotation_returns_the_same_secret_and_mints_no_other() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let api = Api::new(server.url());
    let receiver = Receiver::start(|_| status(200));
    api.route(&receiver.url, json!({})).await;

    let body = json!({"overlap_seconds": 3600});
    let (first_status, first_headers, first) = raw_rotate(&api, "rotate-1", &body).await;
    assert_eq!(first_status, 201, "{first}");
    assert!(first_headers.get("idempotent-replayed").is_none());
    let (again_status, again_headers, again) = raw_rotate(&api, "rotate-1", &body).await;
    assert_eq!(again_status, 201);
    assert_eq!(again, first, "the stored response, byte for byte");
    assert_eq!(again_headers["idempotent-replayed"], "true");
    let listed = secrets(&api).await;
    assert_eq!(listed["items"].as_array().unwrap().len(), 2, "{listed}");
    let rotated: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(listed["items"][1]["id"], rotated["secret"]["id"]);
    assert!(listed["items"][1]["expires_at"].is_null());
    assert!(
        !listed.to_string().contains("whsec_"),
        "a listing never holds a value: {listed}"
    );
    // The same key with another body is refused and runs nothing.
    let (code, problem) = rotate(&api, "rotate-1", overlap(60)).await;
    assert_eq!(
        (code, &problem["code"]),
        (422, &json!("idempotency_key_reused"))
    );
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_second_rotation_during_the_overlap_is_refused_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let api = Api::new(server.url());
    let receiver = Receiver::start(|_| status(200));
    api.route(&receiver.url, json!({})).await;
    let old_id = first_secret_id(&api).await;
    let (_, first) = rotate(&api, "rotate-1", json!({})).await;

    let (code, problem) = rotate(&api, "rotate-2", json!({})).await;
    assert_eq!(code, 409, "{problem}");
    assert_eq!(problem["code"], "rotation_in_progress");
    assert!(
        problem["detail"].as_str().unwrap().contains("force"),
        "{problem}"
    );
    assert_eq!(secrets(&api).await["items"].as_array().unwrap().len(), 2);
    // A stored 409: the same key answers the same.
    assert_eq!(rotate(&api, "rotate-2", json!({})).await, (code, problem));

    let (code, forced) = rotate(&api, "rotate-3", json!({"force": true})).await;
    assert_eq!(code, 201, "{forced}");
    let previous: Vec<&str> = forced["previous"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        previous,
        [old_id.as_str(), first["secret"]["id"].as_str().unwrap()]
    );
    let target = api.get("/v1/targets/tg").await;
    assert!(
        target["status"].get("rotation").is_none(),
        "forced: no overlap left: {target}"
    );

    // Validation names the field and claims no key.
    for (body, field) in [
        (json!({"overlap_seconds": 604_801}), "overlap_seconds"),
        (json!({"overlap_seconds": -1}), "overlap_seconds"),
        (
            json!({"overlap_seconds": 60, "force": true}),
            "overlap_seconds",
        ),
    ] {
        let (code, problem) = rotate(&api, "rotate-bad", body.clone()).await;
        assert_eq!(code, 400, "{body}: {problem}");
        assert_eq!(problem["code"], "validation_failed");
        assert_eq!(problem["field"], field, "{problem}");
    }
    let (code, problem) = rotate(&api, "rotate-bad", json!({"overlap": 5})).await;
    assert_eq!((code, &problem["code"]), (400, &json!("validation_failed")));
    server.stop().await.unwrap();
}

#[tokio::test]
async fn the_last_secret_cannot_be_expired_and_unknown_ones_are_absent() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let api = Api::new(server.url());
    let receiver = Receiver::start(|_| status(200));
    api.route(&receiver.url, json!({})).await;
    let old_id = first_secret_id(&api).await;

    let (code, problem) = expire(&api, "expire-1", &old_id).await;
    assert_eq!(
        (code, &problem["code"]),
        (409, &json!("last_secret")),
        "{problem}"
    );
    let (code, problem) = expire(&api, "expire-2", "sec_unknown").await;
    assert_eq!(
        (code, &problem["code"]),
        (404, &json!("not_found")),
        "{problem}"
    );

    // Roll back: expiring the new secret keeps the old one, now with no expiry.
    let (_, rotated) = rotate(&api, "rotate-1", json!({})).await;
    let new_id = rotated["secret"]["id"].as_str().unwrap();
    let (code, rolled_back) = expire(&api, "rollback-1", new_id).await;
    assert_eq!(code, 200, "{rolled_back}");
    assert_eq!(rolled_back["items"][0]["id"], old_id.as_str());
    assert!(
        rolled_back["items"][0]["expires_at"].is_null(),
        "{rolled_back}"
    );
    let (code, problem) = expire(&api, "rollback-2", new_id).await;
    assert_eq!((code, &problem["code"]), (409, &json!("secret_expired")));
    let (code, problem) = expire(&api, "expire-3", &old_id).await;
    assert_eq!((code, &problem["code"]), (409, &json!("last_secret")));

    // Another tenant's target, and an unknown one, are absent.
    let (code, _) = api
        .call("GET", "/v1/targets/nope/secrets", None, None)
        .await;
    assert_eq!(code, 404);
    let (code, problem) = api
        .call(
            "POST",
            "/v1/targets/nope/secrets/rotate",
            Some(json!({})),
            Some("r-nope"),
        )
        .await;
    assert_eq!((code, &problem["code"]), (404, &json!("not_found")));
    let other = api
        .http
        .get(format!("{}/v1/targets/tg/secrets", api.base))
        .bearer_auth(OTHER_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(other.status().as_u16(), 404);
    let other = api
        .http
        .post(format!("{}/v1/targets/tg/secrets/rotate", api.base))
        .bearer_auth(OTHER_TOKEN)
        .header("idempotency-key", "other-1")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(other.status().as_u16(), 404);
    assert_eq!(secrets(&api).await["items"].as_array().unwrap().len(), 2);
    server.stop().await.unwrap();
}

#[tokio::test]
async fn the_verify_step_signs_with_the_named_secret_only() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let api = Api::new(server.url());
    let receiver = Receiver::start(|_| status(200));
    let old = api.route(&receiver.url, json!({})).await;
    let old_id = first_secret_id(&api).await;
    let (_, rotated) = rotate(&api, "rotate-1", json!({})).await;
    let new = rotated["secret"]["value"].as_str().unwrap();
    let new_id = rotated["secret"]["id"].as_str().unwrap();

    let (code, result) = api
        .call(
            "POST",
            "/v1/targets/tg/test",
            Some(json!({"secret_id": new_id})),
            Some("verify-1"),
        )
        .await;
    assert_eq!(code, 200, "{result}");
    assert_eq!(result["ok"], true);
    let r = receiver.received().pop().unwrap();
    assert_eq!(r.header("switchyard-test"), "true");
    assert_eq!(signature_count(&r), 1, "{}", r.header("webhook-signature"));
    assert!(
        verifies(new, &r),
        "the receiver verifies it with the new value"
    );
    assert!(!verifies(&old, &r));

    // Without secret_id the test signs like a delivery: every valid secret.
    let (code, _) = api
        .call(
            "POST",
            "/v1/targets/tg/test",
            Some(json!({})),
            Some("verify-2"),
        )
        .await;
    assert_eq!(code, 200);
    assert_eq!(signature_count(&receiver.received().pop().unwrap()), 2);

    let sent = receiver.count();
    let (code, problem) = api
        .call(
            "POST",
            "/v1/targets/tg/test",
            Some(json!({"secret_id": "sec_nope"})),
            Some("verify-3"),
        )
        .await;
    assert_eq!(
        (code, &problem["code"]),
        (404, &json!("not_found")),
        "{problem}"
    );
    let (code, _) = expire(&api, "promote-1", &old_id).await;
    assert_eq!(code, 200);
    let (code, problem) = api
        .call(
            "POST",
            "/v1/targets/tg/test",
            Some(json!({"secret_id": old_id})),
            Some("verify-4"),
        )
        .await;
    assert_eq!(
        (code, &problem["code"]),
        (409, &json!("secret_expired")),
        "{problem}"
    );
    assert_eq!(receiver.count(), sent, "a refused test sends nothing");
    server.stop().await.unwrap();
}

#[tokio::test]
async fn openapi_documents_the_rotation_operations_and_their_problems() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let doc: Value = reqwest::get(format!("{}/openapi.json", server.url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let paths = &doc["paths"];
    let list = &paths["/v1/targets/{name}/secrets"]["get"];
    assert_eq!(
        list["responses"]["200"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/SigningSecretList"
    );
    let rotate = &paths["/v1/targets/{name}/secrets/rotate"]["post"];
    assert_eq!(
        rotate["requestBody"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/RotateSecretRequest"
    );
    let expire = &paths["/v1/targets/{name}/secrets/{id}/expire"]["post"];
    for (op, ok, conflicts) in [
        (
            rotate,
            "201",
            ["rotation_in_progress", "secret_limit_reached"],
        ),
        (expire, "200", ["last_secret", "secret_expired"]),
    ] {
        for status in [ok, "400", "404", "409", "422"] {
            assert!(op["responses"][status].is_object(), "{status}: {op}");
        }
        let conflict = op["responses"]["409"]["description"].as_str().unwrap();
        for code in conflicts {
            assert!(conflict.contains(code), "{conflict}");
        }
    }
    let test = &paths["/v1/targets/{name}/test"]["post"]["responses"];
    assert!(
        test["409"]["description"]
            .as_str()
            .unwrap()
            .contains("secret_expired")
    );
    let schemas = &doc["components"]["schemas"];
    assert!(schemas["TargetTestRequest"]["properties"]["secret_id"].is_object());
    assert!(schemas["TargetStatus"]["properties"]["rotation"].is_object());
    assert!(schemas["RotateSecretResponse"]["properties"]["previous"].is_object());
    let codes = schemas["ErrorCode"].to_string();
    for code in [
        "rotation_in_progress",
        "secret_limit_reached",
        "last_secret",
        "secret_expired",
    ] {
        assert!(codes.contains(code), "{codes}");
    }
    server.stop().await.unwrap();
}
