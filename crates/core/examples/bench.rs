//! `cargo run --release -p switchyard-core --example bench`
//!
//! Prints, from one run:
//! - enqueue rate (writes/s) vs a raw sqlx single-row insert per transaction with the same
//!   pragmas (target: ratio >= 0.5);
//! - drain rate (ops/s) of `Console::sync` vs raw keyed loopback requests to the same server
//!   with the same parallelism (target: ratio >= 0.5).

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Instant;

use serde_json::json;
use switchyard_control_plane::extract::Tenants;
use switchyard_control_plane::{Server, ServerConfig};
use switchyard_core::{
    Console, ConsoleOptions, NewProfile, ResourceKind, SyncOptions, SyncOutcome, Write,
};
use tokio::sync::Semaphore;

const ENQUEUE_N: usize = 3000;
const DRAIN_N: usize = 1500;
const PARALLEL: usize = 16;
const TOKEN: &str = "bench-token-0123456789";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;

    // --- enqueue vs raw insert ---
    let raw_pool = sqlx::sqlite::SqlitePoolOptions::new()
        .max_connections(1)
        .connect_with(switchyard_core::sqlite_connect_options(
            &dir.path().join("raw.db"),
        ))
        .await?;
    sqlx::query("CREATE TABLE rows (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, body TEXT NOT NULL, created_at INTEGER NOT NULL)")
        .execute(&raw_pool)
        .await?;
    let started = Instant::now();
    for i in 0..ENQUEUE_N {
        let mut tx = raw_pool.begin_with("BEGIN IMMEDIATE").await?;
        sqlx::query("INSERT INTO rows (key, body, created_at) VALUES (?, ?, ?)")
            .bind(uuid::Uuid::new_v4().to_string())
            .bind(json!({"name": format!("e{i}"), "spec": {"description": "bench"}}).to_string())
            .bind(i as i64)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
    }
    let raw_rate = ENQUEUE_N as f64 / started.elapsed().as_secs_f64();

    let console = Console::open(ConsoleOptions::new(dir.path().join("console"), "bench")).await?;
    console
        .add_profile(NewProfile {
            name: "offline".into(),
            url: "http://127.0.0.1:9".into(),
            token: TOKEN.into(),
        })
        .await?;
    let started = Instant::now();
    for i in 0..ENQUEUE_N {
        console
            .enqueue(
                "offline",
                Write::Create {
                    kind: ResourceKind::Endpoint,
                    name: format!("e{i}"),
                    spec: json!({"description": "bench"}),
                },
            )
            .await?;
    }
    let enqueue_rate = ENQUEUE_N as f64 / started.elapsed().as_secs_f64();
    println!(
        "enqueue: {enqueue_rate:>9.0} writes/s   raw sqlx insert: {raw_rate:>9.0} rows/s   ratio {:.2} (target >= 0.5)",
        enqueue_rate / raw_rate
    );

    // --- drain vs raw loopback requests ---
    let mut tenants = Tenants::default();
    tenants.add("bench", TOKEN);
    let server = Server::start(ServerConfig::new(
        SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        format!("sqlite://{}", dir.path().join("cp.db").display()),
        tenants,
    ))
    .await?;
    let url = server.url();
    let client = reqwest::Client::builder()
        .retry(reqwest::retry::never())
        .build()?;
    let gate = Arc::new(Semaphore::new(PARALLEL));
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..DRAIN_N {
        let (client, url, gate) = (client.clone(), url.clone(), gate.clone());
        tasks.spawn(async move {
            let _permit = gate.acquire().await.unwrap();
            let resp = client
                .post(format!("{url}/v1/endpoints"))
                .bearer_auth(TOKEN)
                .header("idempotency-key", uuid::Uuid::new_v4().to_string())
                .json(&json!({"name": format!("raw{i}"), "spec": {"description": "bench"}}))
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status(), 201);
            resp.bytes().await.unwrap();
        });
    }
    while let Some(r) = tasks.join_next().await {
        r?;
    }
    let raw_drain = DRAIN_N as f64 / started.elapsed().as_secs_f64();

    console
        .add_profile(NewProfile {
            name: "live".into(),
            url: url.clone(),
            token: TOKEN.into(),
        })
        .await?;
    for i in 0..DRAIN_N {
        console
            .enqueue(
                "live",
                Write::Create {
                    kind: ResourceKind::Endpoint,
                    name: format!("core{i}"),
                    spec: json!({"description": "bench"}),
                },
            )
            .await?;
    }
    let started = Instant::now();
    let report = console
        .sync(
            "live",
            SyncOptions {
                until_drained: true,
                timeout_ms: Some(600_000),
                refresh_after: false,
            },
        )
        .await?;
    let drain = DRAIN_N as f64 / started.elapsed().as_secs_f64();
    assert_eq!(report.outcome, SyncOutcome::Drained);
    assert_eq!(report.done as usize, DRAIN_N);
    println!(
        "drain:   {drain:>9.0} ops/s      raw keyed requests: {raw_drain:>9.0} req/s    ratio {:.2} (target >= 0.5; {PARALLEL} in parallel)",
        drain / raw_drain
    );
    server.stop().await?;
    Ok(())
}
