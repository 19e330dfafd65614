//! `certificate_expiring`: a target's active client certificate near its `not_after` is
//! reported with the severity of the 30/7/1-day steps and its end, a staged one is not, and
//! activating a fresh certificate clears it.

use serde_json::json;
use switchyard_protocol::{FindingClass, Severity};

use crate::fix::finding;
use crate::support::*;
use crate::tls::{Ca, Issued};

const ID: &str = "certificate_expiring:target:tg";

async fn upload(api: &Api, id: &str, cert: &Issued) {
    let path = format!("/v1/targets/tg/client-certificates/{id}");
    let (status, body) = api.call("PUT", &path, Some(cert.upload()), None).await;
    assert_eq!(status, 201, "{body}");
}

async fn activate(api: &Api, id: &str) {
    let path = format!("/v1/targets/tg/client-certificates/{id}/activate");
    let key = format!("activate-{id}");
    let (status, body) = api.call("POST", &path, None, Some(&key)).await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn an_active_certificate_near_its_end_is_reported_until_a_fresh_one_is_active() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let api = Api::new(server.url());
    api.route("http://127.0.0.1:9/hook", json!({})).await;
    let ca = Ca::new("diagnostics CA");

    // Staged only: deliveries do not present it, nothing to warn about.
    let soon = ca.client("switchyard", 3);
    upload(&api, "soon", &soon).await;
    assert!(finding(&api, ID).await.is_none(), "a staged certificate");

    activate(&api, "soon").await;
    let f = finding(&api, ID).await.expect("the expiry is reported");
    assert_eq!(f.class, FindingClass::CertificateExpiring);
    assert_eq!(f.severity, Severity::Warning, "within 7 days");
    let status = api.get("/v1/targets/tg").await["status"]["client_certificate"].clone();
    assert_eq!(
        f.evidence.until.map(|t| t.timestamp_millis()),
        status["not_after"]
            .as_str()
            .map(|s| chrono::DateTime::parse_from_rfc3339(s)
                .unwrap()
                .timestamp_millis()),
        "the end the finding shows is the target's: {status}"
    );
    assert!(f.detail.contains("CN=switchyard"), "{}", f.detail);
    assert!(f.actions.is_empty());

    // A certificate for a year replaces it: nothing left to report.
    upload(&api, "fresh", &ca.client("switchyard", 365)).await;
    activate(&api, "fresh").await;
    assert!(
        finding(&api, ID).await.is_none(),
        "a fresh certificate is active"
    );
}
