//! `serve --demo`: a `demo` tenant with endpoints, targets and flows, seeded through the
//! public API with fixed Idempotency-Keys, so a restart replays instead of duplicating.

use serde_json::{Value, json};

/// The demo's retry schedule: fast enough that the DLQ fills within minutes.
pub const DEMO_SCHEDULE: &str = "0s,2s,10s,30s,1m";

/// The demo tenant's name and token. It is a sandbox on loopback: the token is not a secret.
pub const DEMO_TENANT: &str = "demo";
pub const DEMO_TOKEN: &str = "demo-token-switchyard";

/// The resources the demo starts with, in dependency order.
pub fn demo_resources(receiver_base: &str) -> Vec<(&'static str, &'static str, Value)> {
    vec![
        (
            "endpoints",
            "orders",
            json!({"description": "Order lifecycle events from the shop", "event_types": ["order.created", "order.paid", "order.shipped"]}),
        ),
        (
            "endpoints",
            "payments",
            json!({"description": "Payment provider callbacks", "event_types": []}),
        ),
        (
            "endpoints",
            "inventory",
            json!({"description": "Stock level changes", "event_types": ["stock.low", "stock.out"]}),
        ),
        (
            "targets",
            "billing",
            json!({"url": format!("{receiver_base}/healthy"), "timeout_ms": 5000}),
        ),
        (
            "targets",
            "analytics",
            json!({"url": format!("{receiver_base}/slow"), "timeout_ms": 5000}),
        ),
        (
            "targets",
            "crm",
            json!({"url": format!("{receiver_base}/flaky"), "timeout_ms": 5000}),
        ),
        (
            "targets",
            "legacy-erp",
            json!({"url": format!("{receiver_base}/always-500"), "timeout_ms": 5000}),
        ),
        (
            "targets",
            "warehouse",
            json!({"url": format!("{receiver_base}/timeout"), "timeout_ms": 1000}),
        ),
        (
            "flows",
            "orders-to-billing",
            json!({"endpoint": "orders", "target": "billing", "event_types": ["order.paid"], "mode": "async_inline"}),
        ),
        (
            "flows",
            "orders-to-analytics",
            json!({"endpoint": "orders", "target": "analytics", "mode": "async_inline"}),
        ),
        (
            "flows",
            "orders-to-crm",
            json!({"endpoint": "orders", "target": "crm", "mode": "async_inline"}),
        ),
        (
            "flows",
            "payments-to-erp",
            json!({"endpoint": "payments", "target": "legacy-erp", "mode": "async_inline"}),
        ),
        (
            "flows",
            "inventory-to-warehouse",
            json!({"endpoint": "inventory", "target": "warehouse", "mode": "async_inline"}),
        ),
    ]
}

/// Creates the demo resources on the server at `base_url`; existing ones are left alone.
pub async fn seed(base_url: &str, receiver_base: &str) -> anyhow::Result<()> {
    let client = reqwest::Client::new();
    for (plural, name, spec) in demo_resources(receiver_base) {
        let response = client
            .post(format!("{base_url}/v1/{plural}"))
            .bearer_auth(DEMO_TOKEN)
            .header("idempotency-key", format!("demo-seed-{plural}-{name}"))
            .json(&json!({"name": name, "spec": spec}))
            .send()
            .await?;
        let status = response.status().as_u16();
        // 409 name_taken: it was created before (and perhaps edited since): keep it.
        // 422 idempotency_key_reused: seeded before with another receiver base (the demo
        // receiver's port changes per run); `repoint_targets` updates the URL.
        if status != 201 && status != 409 && status != 422 {
            anyhow::bail!(
                "seeding {plural}/{name} failed with HTTP {status}: {}",
                response.text().await?
            );
        }
    }
    Ok(())
}

/// Points the demo targets at `receiver_base` (the receiver's port changes per run); a
/// target the user re-pointed elsewhere is left alone.
pub async fn repoint_targets(base_url: &str, receiver_base: &str) -> anyhow::Result<()> {
    let client = reqwest::Client::new();
    for (plural, name, spec) in demo_resources(receiver_base) {
        if plural != "targets" {
            continue;
        }
        let current: Value = client
            .get(format!("{base_url}/v1/targets/{name}"))
            .bearer_auth(DEMO_TOKEN)
            .send()
            .await?
            .json()
            .await?;
        let url = current["spec"]["url"].as_str().unwrap_or_default();
        let path = url.rsplit('/').next().unwrap_or_default();
        let demo_path = spec["url"]
            .as_str()
            .unwrap_or_default()
            .rsplit('/')
            .next()
            .unwrap_or_default();
        let ours = url.starts_with("http://127.0.0.1:") && path == demo_path;
        if !ours || url == spec["url"].as_str().unwrap_or_default() {
            continue;
        }
        client
            .patch(format!("{base_url}/v1/targets/{name}"))
            .bearer_auth(DEMO_TOKEN)
            .header(
                "idempotency-key",
                format!("demo-repoint-{name}-{receiver_base}"),
            )
            .json(&json!({"spec": {"url": spec["url"]}}))
            .send()
            .await?;
    }
    Ok(())
}

/// The demo's moving parts: the receiver and the trickle of events.
pub struct DemoRuntime {
    pub receiver: crate::demo_receiver::DemoReceiver,
    trickle: tokio::task::JoinHandle<()>,
}

impl Drop for DemoRuntime {
    fn drop(&mut self) {
        self.trickle.abort();
    }
}

/// Starts the demo receiver, seeds (or re-points) the demo resources at it, imports a day of
/// history into a demo tenant that has no events yet (a restart keeps what is there), and
/// starts a trickle of events (one every ~`every`).
pub async fn start(
    server: &crate::Server,
    every: std::time::Duration,
) -> anyhow::Result<DemoRuntime> {
    let base_url = server.url();
    let receiver = crate::demo_receiver::DemoReceiver::start().await?;
    let receiver_base = receiver.base_url();
    seed(&base_url, &receiver_base).await?;
    repoint_targets(&base_url, &receiver_base).await?;
    import_history(&server.state).await?;
    let trickle = crate::demo_receiver::spawn_trickle(base_url, DEMO_TOKEN.to_owned(), every);
    Ok(DemoRuntime { receiver, trickle })
}

/// The demo's day of history (`demo_history`), on the demo schedule, ending now.
async fn import_history(state: &crate::AppState) -> anyhow::Result<()> {
    let schedule: Vec<i64> = crate::delivery::schedule::parse_schedule(DEMO_SCHEDULE)
        .map_err(anyhow::Error::msg)?
        .iter()
        .map(|d| d.as_millis() as i64)
        .collect();
    let started = std::time::Instant::now();
    let events =
        crate::demo_history::demo_history(state.clock.now_ms(), &schedule, &mut rand::rng());
    let imported = state.store.import_history(DEMO_TENANT, &events).await?;
    if imported > 0 {
        tracing::info!(
            events = imported,
            ms = started.elapsed().as_millis() as u64,
            "demo: imported a day of history"
        );
    }
    Ok(())
}
