//! Who may read /metrics and where: the token, tenant labels, a listener of its own, the
//! binary's flags.

use std::net::{Ipv4Addr, SocketAddr};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use switchyard_control_plane::Server;
use switchyard_control_plane::telemetry::{MetricsConfig, MetricsToken};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::support::*;

#[tokio::test]
async fn tenant_labels_need_the_token_and_name_every_tenant() {
    let dir = tempfile::tempdir().unwrap();
    let unauthenticated = MetricsConfig {
        tenant_labels: true,
        ..MetricsConfig::default()
    };
    let refused = Server::start(config(dir.path(), unauthenticated)).await;
    assert!(
        refused.is_err(),
        "tenant labels without a token must not start"
    );

    let metrics = MetricsConfig {
        tenant_labels: true,
        token: Some(MetricsToken::from_file(&token_file(dir.path())).unwrap()),
        listen: None,
    };
    let server = Server::start(config(dir.path(), metrics)).await.unwrap();
    let receiver = receiver();
    let url = server.metrics_url();
    for token in [None, Some("wrong-token-000"), Some(ALPHA_TOKEN)] {
        let (status, content_type, body) = get_metrics(&url, token).await;
        assert_eq!(status, 401, "token {token:?}: {body}");
        assert_eq!(content_type, "application/problem+json");
        let problem: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(problem["code"], "unauthorized");
        assert!(!body.contains(ALPHA), "{body}");
    }

    routes(&server, &receiver).await;
    assert_eq!(submit(&server, "ep-bad", None).await.0, 202);
    assert_eq!(submit(&server, "ep-good", None).await.0, 202);
    let (text, s) = scrape_until(&url, Some(SCRAPE_TOKEN), "two attempts", |s| {
        attempts(s, "succeeded") + attempts(s, "failed") >= 2.0
    })
    .await;
    let alpha = ("tenant", ALPHA);
    let beta = ("tenant", BETA);
    assert_eq!(value(&s, "switchyard_events_accepted_total", &[alpha]), 2.0);
    assert_eq!(value(&s, "switchyard_events_accepted_total", &[beta]), 0.0);
    assert_eq!(
        value(
            &s,
            "switchyard_deliveries_finished_total",
            &[("outcome", "dead"), alpha]
        ),
        1.0
    );
    assert_eq!(
        value(
            &s,
            "switchyard_deliveries_finished_total",
            &[("outcome", "succeeded"), alpha]
        ),
        1.0
    );
    assert_eq!(value(&s, "switchyard_dlq_depth", &[alpha]), 1.0);
    assert_eq!(
        value(&s, "switchyard_dlq_depth", &[beta]),
        0.0,
        "a quiet tenant reads 0"
    );
    assert_eq!(value(&s, "switchyard_deliveries_pending", &[beta]), 0.0);
    assert!(text.contains(&format!("tenant=\"{BETA}\"")));
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_metrics_listener_of_its_own_takes_metrics_off_the_api() {
    let dir = tempfile::tempdir().unwrap();
    let metrics = MetricsConfig {
        listen: Some(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))),
        ..MetricsConfig::default()
    };
    let server = Server::start(config(dir.path(), metrics)).await.unwrap();
    let metrics_addr = server.metrics_addr.expect("a metrics listener");
    assert_ne!(metrics_addr, server.addr);
    let (status, _, _) = get_metrics(&format!("{}/metrics", server.url()), None).await;
    assert_eq!(status, 404, "not on the API's listener");
    let (status, _, _) = get_metrics(
        &format!("http://{metrics_addr}/v1/endpoints"),
        Some(ALPHA_TOKEN),
    )
    .await;
    assert_eq!(status, 404, "the API is not on the metrics listener");
    assert_eq!(
        call(&server, "GET", "/v1/endpoints", None, None).await.0,
        200
    );
    let (_, s) = scrape(&server.metrics_url(), None).await;
    assert_eq!(http(&s, "/v1/endpoints", "GET", "200"), 1.0);
    assert_eq!(
        http(&s, "unmatched", "GET", "404"),
        2.0,
        "both listeners' 404s"
    );
    // The API's document lists what the API's listener serves (src/openapi.rs: `route`).
    let (_, doc) = call(&server, "GET", "/openapi.json", None, None).await;
    assert!(doc["paths"]["/v1/endpoints"].is_object(), "{doc}");
    assert!(
        doc["paths"].get("/metrics").is_none(),
        "not documented where it is not served"
    );
    server.stop().await.unwrap();
}

/// The real binary: `--metrics-tenant-labels` alone is refused by the flag parser; with
/// `--metrics-listen` and `--metrics-token-file` the metrics are on their own address,
/// behind the token, and the token is in no log line (even at debug).
#[tokio::test]
async fn the_binary_serves_metrics_on_its_own_address_behind_the_token() {
    let bin = env!("CARGO_BIN_EXE_switchyard-control-plane");
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("cp.db").display());
    let tenant = format!("{ALPHA}:{ALPHA_TOKEN}");
    let refused = tokio::process::Command::new(bin)
        .args([
            "serve",
            "--db",
            &db,
            "--tenant",
            &tenant,
            "--metrics-tenant-labels",
        ])
        .output()
        .await
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("--metrics-token-file"), "{stderr}");

    let token_path = token_file(dir.path());
    let mut child = tokio::process::Command::new(bin)
        .args([
            "serve",
            "--db",
            &db,
            "--tenant",
            &tenant,
            "--listen",
            "127.0.0.1:0",
        ])
        .args(["--metrics-listen", "127.0.0.1:0", "--metrics-tenant-labels"])
        .arg("--metrics-token-file")
        .arg(&token_path)
        .env("RUST_LOG", "debug")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let (mut api, mut metrics) = (None, None);
    while api.is_none() || metrics.is_none() {
        let line = tokio::time::timeout(Duration::from_secs(20), stdout.next_line())
            .await
            .expect("the server prints its addresses")
            .unwrap()
            .expect("the server is running");
        if let Some(url) = line.strip_prefix("switchyard control plane listening on ") {
            api = Some(url.to_owned());
        } else if let Some(url) = line.strip_prefix("metrics on ") {
            metrics = Some(url.to_owned());
        }
    }
    let (api, metrics) = (api.unwrap(), metrics.unwrap());
    assert!(!metrics.starts_with(&api), "{metrics} is apart from {api}");
    assert_eq!(
        get_metrics(&format!("{api}/metrics"), Some(SCRAPE_TOKEN))
            .await
            .0,
        404
    );
    assert_eq!(get_metrics(&metrics, None).await.0, 401);
    let (text, s) = scrape(&metrics, Some(SCRAPE_TOKEN)).await;
    assert_eq!(
        value(&s, "switchyard_dlq_depth", &[("tenant", ALPHA)]),
        0.0,
        "{text}"
    );
    child.start_kill().unwrap();
    let output = child.wait_with_output().await.unwrap();
    let log = String::from_utf8_lossy(&output.stderr);
    assert!(
        log.contains("/metrics"),
        "the debug log shows the scrapes:\n{log}"
    );
    assert!(
        !log.contains(SCRAPE_TOKEN),
        "the token is in the log:\n{log}"
    );
}
