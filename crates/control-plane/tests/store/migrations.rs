//! SQLite migrations carry existing data forward: attempts made before per-hop budgets get
//! their hop and their number within it, deliveries their per-hop counts and, when dead,
//! the hop that ran out.

use std::path::Path;

use switchyard_protocol::{DlqFilter, Hop};

use crate::support::TENANT;

/// Runs the migrations before per-hop budgets (the first three) on a new database.
async fn database_before_hops(dir: &Path) -> sqlx::SqlitePool {
    let old = dir.join("old-migrations");
    std::fs::create_dir_all(&old).unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations/sqlite");
    for name in [
        "0001_resources_and_idempotency.sql",
        "0002_delivery_pipeline.sql",
        "0003_event_key_lookup.sql",
    ] {
        std::fs::copy(source.join(name), old.join(name)).unwrap();
    }
    let options = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(dir.join("cp.db"))
        .create_if_missing(true);
    let pool = sqlx::SqlitePool::connect_with(options).await.unwrap();
    sqlx::migrate::Migrator::new(old.as_path())
        .await
        .unwrap()
        .run(&pool)
        .await
        .unwrap();
    pool
}

#[tokio::test]
async fn attempts_made_before_per_hop_budgets_get_their_hops() {
    let dir = tempfile::tempdir().unwrap();
    let pool = database_before_hops(dir.path()).await;
    let insert_delivery = "INSERT INTO deliveries (id, tenant, event_id, event_type, endpoint, flow, target, mode, edge, \
         state, attempts_made, max_attempts, created_at, updated_at, dead_at, error_class) \
         VALUES (?, ?, 'evt_1', 't', 'ep', 'fl', 'tg', ?, ?, ?, ?, 5, 1, 1, ?, 'http_5xx')";
    for (id, mode, edge, state, made, dead_at) in [
        ("dlv_relay", "async_relay", Some("e1"), "dead", 3, Some(10)),
        ("dlv_inline", "async_inline", None, "pending", 2, None),
    ] {
        sqlx::query(insert_delivery)
            .bind(id)
            .bind(TENANT)
            .bind(mode)
            .bind(edge)
            .bind(state)
            .bind(made)
            .bind(dead_at)
            .execute(&pool)
            .await
            .unwrap();
    }
    for (id, delivery, number, by) in [
        ("att_r1", "dlv_relay", 1, "control-plane"),
        ("att_r2", "dlv_relay", 2, "edge:e1"),
        ("att_r3", "dlv_relay", 3, "edge:e1"),
        ("att_i1", "dlv_inline", 1, "worker-a"),
        ("att_i2", "dlv_inline", 2, "worker-b"),
    ] {
        sqlx::query(
            "INSERT INTO attempts (id, delivery_id, number, started_at, outcome, performed_by) \
             VALUES (?, ?, ?, 1, 'failed', ?)",
        )
        .bind(id)
        .bind(delivery)
        .bind(number)
        .bind(by)
        .execute(&pool)
        .await
        .unwrap();
    }
    pool.close().await;

    let store = switchyard_control_plane::store::open(&format!(
        "sqlite://{}",
        dir.path().join("cp.db").display()
    ))
    .await
    .unwrap();
    let relay = store.delivery(TENANT, "dlv_relay").await.unwrap().unwrap();
    let hops: Vec<(Hop, u32)> = relay
        .attempts
        .iter()
        .map(|a| (a.hop, a.hop_attempt))
        .collect();
    assert_eq!(
        hops,
        [
            (Hop::ControlPlaneEdge, 1),
            (Hop::EdgeWebhook, 1),
            (Hop::EdgeWebhook, 2)
        ]
    );
    assert_eq!(relay.exhausted_hop, Some(Hop::EdgeWebhook));
    let inline = store.delivery(TENANT, "dlv_inline").await.unwrap().unwrap();
    assert!(
        inline
            .attempts
            .iter()
            .all(|a| a.hop == Hop::ControlPlaneWebhook && a.hop_attempt == a.number)
    );
    assert_eq!(inline.exhausted_hop, None);
    let dlq = store
        .dlq_page(TENANT, &DlqFilter::default(), None, 10)
        .await
        .unwrap();
    assert_eq!(dlq[0].exhausted_hop, Some(Hop::EdgeWebhook));
}
