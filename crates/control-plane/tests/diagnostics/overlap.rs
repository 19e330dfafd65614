//! `signing_overlap_open`: a target whose signing-secret rotation is in its overlap is
//! reported (info, with when the overlap ends, as the target's `status.rotation` shows it)
//! until the rotation is promoted; a rotation rolled back leaves nothing to report either.

use serde_json::json;
use switchyard_protocol::{FindingClass, Severity};

use crate::fix::finding;
use crate::support::*;

const ID: &str = "signing_overlap_open:target:tg";

async fn rotate(api: &Api, key: &str) -> serde_json::Value {
    let (status, body) = api
        .call(
            "POST",
            "/v1/targets/tg/secrets/rotate",
            Some(json!({"overlap_seconds": 3600})),
            Some(key),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    body
}

async fn expire(api: &Api, id: &str, key: &str) {
    let path = format!("/v1/targets/tg/secrets/{id}/expire");
    let (status, body) = api.call("POST", &path, None, Some(key)).await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn an_open_overlap_is_reported_until_the_rotation_is_promoted_or_rolled_back() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let api = Api::new(server.url());
    api.route("http://127.0.0.1:9/hook", json!({})).await;
    assert!(finding(&api, ID).await.is_none(), "one secret: no overlap");

    let rotated = rotate(&api, "rotate-1").await;
    let f = finding(&api, ID).await.expect("the overlap is reported");
    assert_eq!(f.class, FindingClass::SigningOverlapOpen);
    assert_eq!(f.severity, Severity::Info);
    assert_eq!(f.evidence.count, Some(1), "one older secret still signs");
    let ends = api.get("/v1/targets/tg").await["status"]["rotation"]["ends_at"].clone();
    assert_eq!(
        f.evidence.until.map(|t| t.timestamp_millis()),
        ends.as_str()
            .map(|s| chrono::DateTime::parse_from_rfc3339(s)
                .unwrap()
                .timestamp_millis()),
        "the end the finding shows is the target's: {ends}"
    );
    assert!(f.actions.is_empty(), "{:?}", f.actions);

    // Promote: the older secret expires now; nothing is open any more.
    let old = rotated["previous"][0]["id"].as_str().unwrap();
    expire(&api, old, "promote-1").await;
    assert!(finding(&api, ID).await.is_none(), "promoted");

    // Another rotation, rolled back this time (the new secret expired): closed too.
    let again = rotate(&api, "rotate-2").await;
    assert!(finding(&api, ID).await.is_some());
    let new = again["secret"]["id"].as_str().unwrap();
    expire(&api, new, "rollback-2").await;
    assert!(finding(&api, ID).await.is_none(), "rolled back");
}
