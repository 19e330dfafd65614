//! The gauges' SQL on PostgreSQL.

use serde_json::json;
use switchyard_control_plane::Server;
use switchyard_control_plane::telemetry::{MetricsConfig, MetricsToken};

use crate::postgres;
use crate::support::*;

/// The gauges' SQL on PostgreSQL (the conformance suite's server, a database of its own):
/// totals without tenant labels, per tenant with them.
#[tokio::test]
async fn the_gauges_read_the_same_on_postgres() {
    let db = postgres::TestDatabase::create().await;
    let dir = tempfile::tempdir().unwrap();
    let key_file = dir.path().join("main-key");
    switchyard_control_plane::sealing::Sealer::ephemeral()
        .write_file(&key_file)
        .unwrap();
    let receiver = receiver();
    let on_postgres = |metrics: MetricsConfig| {
        let mut config = config(dir.path(), metrics);
        config.db_url = db.url.clone();
        config.main_key_file = Some(key_file.clone());
        config
    };
    let server = Server::start(on_postgres(MetricsConfig::default()))
        .await
        .unwrap();
    routes(&server, &receiver).await;
    for endpoint in ["ep-good", "ep-bad", "ep-bad"] {
        assert_eq!(submit(&server, endpoint, None).await.0, 202);
    }
    let url = server.metrics_url();
    let (_, s) = scrape_until(&url, None, "three attempts", |s| {
        attempts(s, "succeeded") + attempts(s, "failed") >= 3.0
    })
    .await;
    assert_eq!(value(&s, "switchyard_dlq_depth", &[]), 2.0);
    assert_eq!(value(&s, "switchyard_deliveries_pending", &[]), 0.0);
    assert_eq!(value(&s, "switchyard_deliveries_in_flight", &[]), 0.0);
    let body = json!({"selection": {"filter": {}}, "rate_per_s": 0.001});
    let (status, started) = call(&server, "PUT", "/v1/replays/pg-1", Some(body), None).await;
    assert_eq!(status, 201, "{started}");
    let (_, s) = scrape_until(&url, None, "the first re-delivery", |s| {
        attempts(s, "failed") >= 3.0
    })
    .await;
    assert_eq!(value(&s, "switchyard_replays_running", &[]), 1.0);
    assert_eq!(value(&s, "switchyard_deliveries_pending", &[]), 1.0);
    assert_eq!(
        value(&s, "switchyard_metrics_store_read_failures_total", &[]),
        0.0
    );
    server.stop().await.unwrap();

    let labelled = MetricsConfig {
        tenant_labels: true,
        token: Some(MetricsToken::new(SCRAPE_TOKEN)),
        listen: None,
    };
    let server = Server::start(on_postgres(labelled)).await.unwrap();
    let (_, s) = scrape(&server.metrics_url(), Some(SCRAPE_TOKEN)).await;
    let alpha = ("tenant", ALPHA);
    assert_eq!(value(&s, "switchyard_dlq_depth", &[alpha]), 1.0);
    assert_eq!(value(&s, "switchyard_deliveries_pending", &[alpha]), 1.0);
    assert_eq!(value(&s, "switchyard_replays_running", &[alpha]), 1.0);
    assert_eq!(value(&s, "switchyard_dlq_depth", &[("tenant", BETA)]), 0.0);
    assert_eq!(
        value(&s, "switchyard_metrics_store_read_failures_total", &[]),
        0.0
    );
    server.stop().await.unwrap();
}
