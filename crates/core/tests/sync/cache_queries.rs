//! What the app's overview and command palette read from the cache without loading every
//! resource: counts per kind (disabled endpoints included, queued enable/disable folded in)
//! and a name search.

use serde_json::json;
use switchyard_core::{ResourceCounts, ResourceKind, SyncOptions, Write};

use crate::harness::{ControlPlane, console_with_profile};

#[tokio::test]
async fn counts_and_search_come_from_the_cache_with_queued_writes_folded_in() {
    let dir = tempfile::tempdir().unwrap();
    let cp = ControlPlane::start(dir.path(), true).await;
    let c = console_with_profile(&dir.path().join("console"), &cp.url()).await;
    for name in ["orders", "orders-eu", "billing"] {
        c.enqueue(
            "p",
            Write::Create {
                kind: ResourceKind::Endpoint,
                name: name.into(),
                spec: json!({"description": name}),
            },
        )
        .await
        .unwrap();
    }
    c.enqueue(
        "p",
        Write::Create {
            kind: ResourceKind::Target,
            name: "orders-hook".into(),
            spec: json!({"url": "http://127.0.0.1:9/hook"}),
        },
    )
    .await
    .unwrap();
    c.enqueue(
        "p",
        Write::Disable {
            name: "billing".into(),
        },
    )
    .await
    .unwrap();
    let drained = SyncOptions {
        until_drained: true,
        timeout_ms: Some(30_000),
        refresh_after: true,
    };
    c.sync("p", drained).await.unwrap();
    assert_eq!(
        c.resource_counts("p").await.unwrap(),
        ResourceCounts {
            endpoints: 3,
            targets: 1,
            flows: 0,
            disabled_endpoints: 1,
        }
    );

    // A queued (unsent) enable counts at once, as the lists show it.
    c.enqueue(
        "p",
        Write::Enable {
            name: "billing".into(),
        },
    )
    .await
    .unwrap();
    assert_eq!(c.resource_counts("p").await.unwrap().disabled_endpoints, 0);

    let found = c.search_resources("p", "ORDERS", 10).await.unwrap();
    assert_eq!(
        found,
        vec![
            (ResourceKind::Endpoint, "orders".to_owned()),
            (ResourceKind::Endpoint, "orders-eu".to_owned()),
            (ResourceKind::Target, "orders-hook".to_owned()),
        ],
        "case-insensitive, by name"
    );
    assert_eq!(c.search_resources("p", "orders", 2).await.unwrap().len(), 2);
    // LIKE wildcards in the query are literal characters, not patterns.
    assert!(c.search_resources("p", "%", 10).await.unwrap().is_empty());
    assert!(
        c.search_resources("p", "or_ers", 10)
            .await
            .unwrap()
            .is_empty()
    );
}
