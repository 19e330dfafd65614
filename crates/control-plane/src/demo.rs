//! `serve --demo`: a `demo` tenant with endpoints, targets and flows, seeded through the
//! public API with fixed Idempotency-Keys, so a restart replays instead of duplicating.

use serde_json::{Value, json};

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
        if status != 201 && status != 409 {
            anyhow::bail!(
                "seeding {plural}/{name} failed with HTTP {status}: {}",
                response.text().await?
            );
        }
    }
    Ok(())
}
