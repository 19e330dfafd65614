//! Backends, fixtures and the `conformance!` macro of the store suite.

use std::sync::Arc;

use serde_json::json;
use switchyard_control_plane::delivery::http::AttemptResult;
use switchyard_control_plane::store::{
    Acceptance, Accepted, NewEvent, PlannedDelivery, ResourceRow, Store, new_id,
};
use switchyard_protocol::{ErrorClass, FlowMode, ResourceKind};

pub const TENANT: &str = "acme";
/// A fixed "now" (unix ms): the store only sees injected time.
pub const T0: i64 = 1_700_000_000_000;

/// A database the scenario owns, and how to open handles on it.
pub struct Backend {
    url: String,
    _dir: Option<tempfile::TempDir>,
    _pg: Option<crate::postgres::TestDatabase>,
}

impl Backend {
    pub async fn sqlite() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("cp.db").display());
        Self {
            url,
            _dir: Some(dir),
            _pg: None,
        }
    }

    /// A database of its own on the test PostgreSQL server.
    pub async fn postgres() -> Self {
        let db = crate::postgres::TestDatabase::create().await;
        Self {
            url: db.url.clone(),
            _dir: None,
            _pg: Some(db),
        }
    }

    /// Runs `sql` on the database directly, outside the store: what a test uses to tamper
    /// with maintained figures the store itself never gets wrong.
    pub async fn tamper(&self, sql: &str) {
        if self.url.starts_with("sqlite") {
            let pool = sqlx::SqlitePool::connect(&self.url).await.unwrap();
            sqlx::query(sql).execute(&pool).await.unwrap();
            pool.close().await;
        } else {
            let pool = sqlx::PgPool::connect(&self.url).await.unwrap();
            sqlx::query(sql).execute(&pool).await.unwrap();
            pool.close().await;
        }
    }

    /// A new handle on the database: its own connections, as another replica has.
    pub async fn open(&self) -> Arc<dyn Store> {
        switchyard_control_plane::store::open(&self.url)
            .await
            .unwrap()
    }
}

/// Generates one test per backend for each scenario `async fn NAME(&Backend)` of the file.
macro_rules! conformance {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn sqlite() {
                super::$name(&crate::support::Backend::sqlite().await).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn postgres() {
                super::$name(&crate::support::Backend::postgres().await).await;
            }
        }
    )*};
}
pub(crate) use conformance;

fn resource(kind: ResourceKind, name: &str, spec: serde_json::Value) -> ResourceRow {
    ResourceRow {
        kind,
        name: name.to_owned(),
        version: 1,
        spec,
        status: json!({}),
        created_at: T0,
        updated_at: T0,
    }
}

/// Endpoint `ep`, target `tg` (nothing listens there) and `flows` flows `fl-N` between
/// them, in `mode` (through edge `edge-1` when relayed).
pub async fn route(store: &Arc<dyn Store>, mode: FlowMode, flows: usize) {
    let mut tx = store.begin().await.unwrap();
    assert!(
        tx.insert_resource(TENANT, &resource(ResourceKind::Endpoint, "ep", json!({})))
            .await
            .unwrap()
    );
    assert!(
        tx.insert_resource(
            TENANT,
            &resource(
                ResourceKind::Target,
                "tg",
                json!({"url": "http://127.0.0.1:9/hook", "timeout_ms": 1000})
            )
        )
        .await
        .unwrap()
    );
    for n in 0..flows {
        let mut spec = json!({"endpoint": "ep", "target": "tg", "mode": mode});
        if mode == FlowMode::AsyncRelay {
            spec["edge"] = json!("edge-1");
        }
        assert!(
            tx.insert_resource(
                TENANT,
                &resource(ResourceKind::Flow, &format!("fl-{n}"), spec)
            )
            .await
            .unwrap()
        );
    }
    tx.commit().await.unwrap();
}

/// The deliveries an event gets: one per flow of `ep`, due at `now`, `max_attempts` each.
pub async fn plan(store: &Arc<dyn Store>, now: i64, max_attempts: u32) -> Vec<PlannedDelivery> {
    store
        .flows_of_endpoint(TENANT, "ep")
        .await
        .unwrap()
        .into_iter()
        .map(|(name, flow)| PlannedDelivery {
            flow: name,
            target: flow.target,
            mode: flow.mode,
            edge: flow.edge,
            max_attempts,
            next_attempt_at: now,
            begin_now: flow.mode == FlowMode::Sync,
        })
        .collect()
}

/// Accepts an event on `ep` (with `key` when given) at `now`.
pub async fn accept(store: &Arc<dyn Store>, key: Option<&str>, now: i64) -> (String, Accepted) {
    let deliveries = plan(store, now, 5).await;
    let id = new_id("evt");
    let payload = json!({"n": 1});
    let accepted = store
        .accept_event(&Acceptance {
            event: NewEvent {
                tenant: TENANT,
                id: &id,
                endpoint: "ep",
                event_type: "order.paid",
                event_key: key,
                payload: &payload,
            },
            dedup_cutoff: now - 86_400_000,
            deliveries,
            owner: "control-plane",
            lease_margin_ms: 1_000,
            now,
        })
        .await
        .unwrap();
    (id, accepted)
}

pub fn failure() -> AttemptResult {
    AttemptResult::failed(ErrorClass::Http5xx, "receiver answered HTTP 503")
}

pub fn success() -> AttemptResult {
    AttemptResult {
        duration_ms: 4,
        status_code: Some(200),
        error_class: None,
        error: None,
    }
}
