//! The address policy's further ranges and the operator's own: IPv6 forms that lead to an
//! IPv4 network (IPv4-translated, local-use NAT64) or that cannot be judged (Teredo) are
//! refused like the addresses they carry, and `--forbid-cidr` ranges are refused even on a
//! server that allows private targets — at save for an IP literal, at connect time for the
//! address a name resolves to.

use std::time::Duration;

use serde_json::json;
use switchyard_control_plane::Server;
use switchyard_control_plane::delivery::addresses::Cidr;

use crate::ssrf::{LOOPBACK_NAME, assert_refused, assert_refused_once, settled, via, with_policy};
use crate::support::{Api, Receiver, status};

#[tokio::test]
async fn ipv6_forms_reaching_ipv4_networks_and_teredo_are_refused_at_save() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(with_policy(&dir.path().join("cp.db"), false))
        .await
        .unwrap();
    let api = Api::new(server.url());
    for (i, url) in [
        "http://[::ffff:0:7f00:1]:9/hook",
        "http://[64:ff9b:1::a00:1]/hook",
        "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook",
    ]
    .iter()
    .enumerate()
    {
        let (code, body) = api
            .call(
                "POST",
                "/v1/targets",
                Some(json!({"name": format!("t{i}"), "spec": {"url": url}})),
                Some(&format!("create-{i}")),
            )
            .await;
        assert_refused(code, &body, url);
    }
    server.stop().await.unwrap();
}

#[tokio::test]
async fn operator_forbidden_ranges_hold_where_private_targets_are_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = with_policy(&dir.path().join("cp.db"), true);
    config.delivery.forbid_cidrs = vec![Cidr::parse("127.0.0.0/8").unwrap()];
    let server = Server::start(config).await.unwrap();
    let api = Api::new(server.url());
    let (code, body) = api
        .call(
            "POST",
            "/v1/targets",
            Some(json!({"name": "lit", "spec": {"url": "http://127.0.0.1:9/hook"}})),
            Some("create-lit"),
        )
        .await;
    assert_eq!(code, 400, "{body}");
    assert_eq!(body["code"], "target_address_forbidden", "{body}");
    assert_eq!(body["field"], "spec.url", "{body}");
    let detail = body["detail"].as_str().unwrap();
    assert!(
        detail.contains("127.0.0.0/8") && detail.contains("--forbid-cidr"),
        "{detail}"
    );
    let receiver = Receiver::start(|_| status(200));
    api.route(
        &via(&receiver, LOOPBACK_NAME),
        json!({"mode": "async_inline"}),
    )
    .await;
    let event = api.event_id(1).await;
    let deliveries = assert_refused_once(&api, &event, 1).await;
    let error = deliveries[0]["attempts"][0]["error"].as_str().unwrap();
    assert!(!error.contains("127.0.0.1"), "{error}");
    assert_eq!(receiver.count(), 0, "nothing reached the forbidden range");
    server.stop().await.unwrap();

    // The control: another range forbidden, the same name is delivered.
    let dir = tempfile::tempdir().unwrap();
    let mut config = with_policy(&dir.path().join("cp.db"), true);
    config.delivery.forbid_cidrs = vec![Cidr::parse("10.0.0.0/8").unwrap()];
    let server = Server::start(config).await.unwrap();
    let api = Api::new(server.url());
    api.route(
        &via(&receiver, LOOPBACK_NAME),
        json!({"mode": "async_inline"}),
    )
    .await;
    let event = api.event_id(1).await;
    settled(&api, &event, 1, "succeeded").await;
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(receiver.count(), 1);
    server.stop().await.unwrap();
}

/// `GET /v1/info` says which target addresses this server accepts, so a client (`gitops
/// plan`) can refuse what a write would be refused for (issue 45 D3).
#[tokio::test]
async fn info_advertises_the_target_address_policy() {
    for (allow_private, forbid, addresses) in [
        (false, vec![], "public_only"),
        (true, vec!["10.20.0.0/16", "fd00:ec2::/32"], "any"),
        (false, vec!["203.0.113.7"], "public_only"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut config = with_policy(&dir.path().join("cp.db"), allow_private);
        config.delivery.forbid_cidrs = forbid.iter().map(|c| Cidr::parse(c).unwrap()).collect();
        let server = Server::start(config).await.unwrap();
        let (code, info) = Api::new(server.url())
            .call("GET", "/v1/info", None, None)
            .await;
        assert_eq!(code, 200, "{info}");
        assert_eq!(info["target_addresses"], addresses, "{info}");
        let shown: Vec<String> = forbid
            .iter()
            .map(|c| Cidr::parse(c).unwrap().to_string())
            .collect();
        assert_eq!(info["forbidden_target_cidrs"], json!(shown), "{info}");
        server.stop().await.unwrap();
    }
}
