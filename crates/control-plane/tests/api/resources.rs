//! Resource CRUD, validation, references and preconditions as a client sees them.

use reqwest::Method;
use serde_json::json;

use crate::support::{Observed, TestServer, endpoint};

#[tokio::test]
async fn create_read_update_apply_delete_lifecycle() {
    let s = TestServer::start().await;
    let created = Observed::of(s.create("endpoints", "k1", endpoint("orders")).await).await;
    assert_eq!(created.status, 201);
    assert_eq!(created.location.as_deref(), Some("/v1/endpoints/orders"));
    assert_eq!(created.etag.as_deref(), Some("\"1\""));
    let body = created.json();
    assert_eq!(body["kind"], "endpoint");
    assert_eq!(body["version"], 1);
    assert_eq!(
        body["spec"],
        json!({"description": "orders events", "event_types": []})
    );
    assert_eq!(body["status"]["enabled"], true);

    let read = Observed::of(s.get("/v1/endpoints/orders").await).await;
    assert_eq!((read.status, read.etag.as_deref()), (200, Some("\"1\"")));

    // Merge patch: only the named field changes; the version grows by one.
    let patched = s
        .keyed(Method::PATCH, "/v1/endpoints/orders", "k2")
        .json(&json!({"spec": {"event_types": ["order.paid"]}}))
        .send()
        .await
        .unwrap();
    let patched = Observed::of(patched).await;
    assert_eq!(patched.status, 200);
    assert_eq!(patched.json()["version"], 2);
    assert_eq!(
        patched.json()["spec"],
        json!({"description": "orders events", "event_types": ["order.paid"]})
    );

    // Apply with the same spec is "unchanged": 200, same version.
    let same = json!({"spec": {"description": "orders events", "event_types": ["order.paid"]}});
    let applied = Observed::of(
        s.keyed(Method::PUT, "/v1/endpoints/orders", "k3")
            .json(&same)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        (applied.status, applied.json()["version"].as_i64()),
        (200, Some(2))
    );
    // Apply of a new name creates.
    let fresh = Observed::of(
        s.keyed(Method::PUT, "/v1/endpoints/payments", "k4")
            .json(&same)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        (fresh.status, fresh.location.as_deref()),
        (201, Some("/v1/endpoints/payments"))
    );

    let disabled = Observed::of(
        s.keyed(Method::POST, "/v1/endpoints/orders/disable", "k5")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        (
            disabled.status,
            disabled.json()["status"]["enabled"].as_bool()
        ),
        (200, Some(false))
    );
    assert_eq!(disabled.json()["version"], 3);
    let again = Observed::of(
        s.keyed(Method::POST, "/v1/endpoints/orders/disable", "k6")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        again.json()["version"],
        3,
        "disabling a disabled endpoint changes nothing"
    );
    let enabled = Observed::of(
        s.keyed(Method::POST, "/v1/endpoints/orders/enable", "k7")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        (
            enabled.json()["status"]["enabled"].as_bool(),
            enabled.json()["version"].as_i64()
        ),
        (Some(true), Some(4))
    );

    let deleted = Observed::of(
        s.keyed(Method::DELETE, "/v1/endpoints/orders", "k8")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((deleted.status, deleted.body.len()), (204, 0));
    let gone = Observed::of(s.get("/v1/endpoints/orders").await).await;
    assert_eq!((gone.status, gone.code().as_str()), (404, "not_found"));
}

#[tokio::test]
async fn list_pages_with_a_cursor_in_name_order() {
    let s = TestServer::start().await;
    for i in (0..7).rev() {
        assert_eq!(
            s.create("endpoints", &format!("k{i}"), endpoint(&format!("ep-{i}")))
                .await
                .status(),
            201
        );
    }
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let path = match &cursor {
            Some(c) => format!("/v1/endpoints?limit=3&cursor={c}"),
            None => "/v1/endpoints?limit=3".to_owned(),
        };
        let page = Observed::of(s.get(&path).await).await.json();
        pages += 1;
        names.extend(
            page["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["name"].as_str().unwrap().to_owned()),
        );
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(names, (0..7).map(|i| format!("ep-{i}")).collect::<Vec<_>>());
    let bad = Observed::of(s.get("/v1/endpoints?limit=0").await).await;
    assert_eq!(
        (bad.status, bad.json()["field"].as_str()),
        (400, Some("limit"))
    );
    let bad = Observed::of(s.get("/v1/endpoints?cursor=%%%").await).await;
    assert_eq!(bad.status, 400);
}

#[tokio::test]
async fn malformed_input_is_a_400_naming_the_field() {
    let s = TestServer::start().await;
    let cases = [
        (json!({"name": "Bad_Name", "spec": {}}), "name"),
        (json!({"name": "ok", "spec": {}, "extra": 1}), "body"),
        (json!({"name": "ok"}), "body"),
        (
            json!({"name": "ok", "spec": {"descriptin": "typo"}}),
            "spec",
        ),
        (
            json!({"name": "ok", "spec": {"event_types": "order.paid"}}),
            "spec",
        ),
    ];
    for (i, (body, field)) in cases.into_iter().enumerate() {
        let r = Observed::of(s.create("endpoints", &format!("v{i}"), body.clone()).await).await;
        assert_eq!(r.status, 400, "{body}");
        assert_eq!(r.content_type.as_deref(), Some("application/problem+json"));
        assert_eq!(
            (r.code().as_str(), r.json()["field"].as_str()),
            ("validation_failed", Some(field)),
            "{body}"
        );
    }
    let r = Observed::of(
        s.create(
            "targets",
            "t1",
            json!({"name": "t", "spec": {"url": "ftp://x.test"}}),
        )
        .await,
    )
    .await;
    assert_eq!(
        (r.status, r.json()["field"].as_str()),
        (400, Some("spec.url"))
    );

    let not_json = s
        .keyed(Method::POST, "/v1/endpoints", "nj")
        .header("content-type", "application/json")
        .body("{oops")
        .send()
        .await
        .unwrap();
    let not_json = Observed::of(not_json).await;
    assert_eq!(
        (not_json.status, not_json.code().as_str()),
        (400, "validation_failed")
    );
    let wrong_type = s
        .keyed(Method::POST, "/v1/endpoints", "wt")
        .header("content-type", "text/plain")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(
        Observed::of(wrong_type).await.code(),
        "unsupported_media_type"
    );
    let huge = json!({"name": "big", "spec": {"description": "x".repeat(2 * 1024 * 1024)}});
    let huge = Observed::of(s.create("endpoints", "huge", huge).await).await;
    assert_eq!(
        (huge.status, huge.code().as_str()),
        (413, "payload_too_large")
    );
    // Nothing above left anything behind.
    let list = Observed::of(s.get("/v1/endpoints").await).await.json();
    assert_eq!(list["items"], json!([]));
}

#[tokio::test]
async fn flows_need_their_references_and_protect_them_from_deletion() {
    let s = TestServer::start().await;
    let flow =
        json!({"name": "orders-to-billing", "spec": {"endpoint": "orders", "target": "billing"}});
    let missing = Observed::of(s.create("flows", "f1", flow.clone()).await).await;
    assert_eq!(
        (missing.status, missing.code().as_str()),
        (409, "reference_missing")
    );
    assert_eq!(missing.json()["field"], "spec.endpoint");

    assert_eq!(
        s.create("endpoints", "e1", endpoint("orders"))
            .await
            .status(),
        201
    );
    let target = Observed::of(
        s.create(
            "targets",
            "t1",
            json!({"name": "billing", "spec": {"url": "http://127.0.0.1:9/hook"}}),
        )
        .await,
    )
    .await;
    assert_eq!(target.status, 201);
    let secret = target.json()["status"]["signing_secret"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(secret.starts_with("whsec_"), "{secret}");
    let shown = Observed::of(s.get("/v1/targets/billing").await)
        .await
        .json();
    assert!(
        shown["status"].get("signing_secret").is_none(),
        "the secret value is shown once"
    );
    assert_eq!(
        shown["status"]["signing_secrets"].as_array().unwrap().len(),
        1
    );

    assert_eq!(s.create("flows", "f2", flow).await.status(), 201);
    for (path, key) in [
        ("/v1/endpoints/orders", "d1"),
        ("/v1/targets/billing", "d2"),
    ] {
        let in_use = Observed::of(s.keyed(Method::DELETE, path, key).send().await.unwrap()).await;
        assert_eq!((in_use.status, in_use.code().as_str()), (409, "in_use"));
        assert_eq!(in_use.json()["used_by"], json!(["flow/orders-to-billing"]));
    }
    // A flow cannot be repointed at something absent either.
    let repoint = s
        .keyed(Method::PATCH, "/v1/flows/orders-to-billing", "p1")
        .json(&json!({"spec": {"target": "nope"}}))
        .send()
        .await
        .unwrap();
    let repoint = Observed::of(repoint).await;
    assert_eq!(
        (repoint.status, repoint.json()["field"].as_str()),
        (409, Some("spec.target"))
    );
    assert_eq!(
        s.keyed(Method::DELETE, "/v1/flows/orders-to-billing", "d3")
            .send()
            .await
            .unwrap()
            .status(),
        204
    );
    assert_eq!(
        s.keyed(Method::DELETE, "/v1/endpoints/orders", "d4")
            .send()
            .await
            .unwrap()
            .status(),
        204
    );
}

#[tokio::test]
async fn if_match_guards_against_lost_updates() {
    let s = TestServer::start().await;
    s.create("endpoints", "c", endpoint("orders")).await;
    let patch = json!({"spec": {"description": "mine"}});
    let ok = s
        .keyed(Method::PATCH, "/v1/endpoints/orders", "p1")
        .header("if-match", "\"1\"")
        .json(&patch)
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);
    let stale = s
        .keyed(Method::PATCH, "/v1/endpoints/orders", "p2")
        .header("if-match", "\"1\"")
        .json(&json!({"spec": {"description": "theirs"}}))
        .send()
        .await
        .unwrap();
    let stale = Observed::of(stale).await;
    assert_eq!(
        (stale.status, stale.code().as_str()),
        (412, "version_mismatch")
    );
    assert_eq!(stale.json()["current_version"], 2);
    let del = s
        .keyed(Method::DELETE, "/v1/endpoints/orders", "d1")
        .header("if-match", "\"7\"")
        .send()
        .await
        .unwrap();
    assert_eq!(del.status(), 412);
    let bad = Observed::of(
        s.keyed(Method::DELETE, "/v1/endpoints/orders", "d2")
            .header("if-match", "7")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        (bad.status, bad.json()["field"].as_str()),
        (400, Some("If-Match"))
    );
    assert_eq!(
        Observed::of(s.get("/v1/endpoints/orders").await)
            .await
            .json()["spec"]["description"],
        "mine"
    );
}

#[tokio::test]
async fn a_patch_that_would_make_the_spec_invalid_changes_nothing() {
    let s = TestServer::start().await;
    s.create(
        "targets",
        "c",
        json!({"name": "t", "spec": {"url": "http://127.0.0.1:9/x"}}),
    )
    .await;
    let bad = s
        .keyed(Method::PATCH, "/v1/targets/t", "p")
        .json(&json!({"spec": {"url": "not a url"}}))
        .send()
        .await
        .unwrap();
    let bad = Observed::of(bad).await;
    assert_eq!(
        (bad.status, bad.json()["field"].as_str()),
        (400, Some("spec.url"))
    );
    let now = Observed::of(s.get("/v1/targets/t").await).await.json();
    assert_eq!(
        (now["version"].as_i64(), now["spec"]["url"].as_str()),
        (Some(1), Some("http://127.0.0.1:9/x"))
    );
}
