//! `cargo run --release -p switchyard-core --example bench`
//!
//! Prints, from one run (rounds interleave the two sides, so load from other processes on
//! the machine hits both alike):
//! - enqueue rate (writes/s) vs a raw sqlx single-row insert per `BEGIN IMMEDIATE`
//!   transaction with the same pragmas (target: ratio >= 0.5);
//! - drain rate (ops/s) of `Console::sync` vs raw keyed loopback POSTs to the same server
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

const ROUNDS: usize = 4;
const ENQUEUE_PER_ROUND: usize = 750;
const DRAIN_PER_ROUND: usize = 400;
const PARALLEL: usize = 16;
const TOKEN: &str = "bench-token-0123456789";

fn endpoint(name: String) -> Write {
    Write::Create {
        kind: ResourceKind::Endpoint,
        name,
        spec: json!({"description": "bench"}),
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let raw_pool = sqlx::sqlite::SqlitePoolOptions::new()
        .max_connections(1)
        .connect_with(switchyard_core::sqlite_connect_options(
            &dir.path().join("raw.db"),
        ))
        .await?;
    sqlx::query(
        "CREATE TABLE rows (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, body TEXT NOT NULL, created_at INTEGER NOT NULL)",
    )
    .execute(&raw_pool)
    .await?;
    let console = Console::open(ConsoleOptions::new(dir.path().join("console"), "bench")).await?;
    console
        .add_profile(NewProfile {
            name: "offline".into(),
            url: "http://127.0.0.1:9".into(),
            token: TOKEN.into(),
        })
        .await?;

    // --- enqueue vs raw insert ---
    let (mut raw_s, mut core_s) = (0.0, 0.0);
    for round in 0..ROUNDS {
        let started = Instant::now();
        for i in 0..ENQUEUE_PER_ROUND {
            let mut tx = raw_pool.begin_with("BEGIN IMMEDIATE").await?;
            sqlx::query("INSERT INTO rows (key, body, created_at) VALUES (?, ?, ?)")
                .bind(uuid::Uuid::new_v4().to_string())
                .bind(
                    json!({"name": format!("e{round}-{i}"), "spec": {"description": "bench"}})
                        .to_string(),
                )
                .bind(i as i64)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
        }
        raw_s += started.elapsed().as_secs_f64();
        let started = Instant::now();
        for i in 0..ENQUEUE_PER_ROUND {
            console
                .enqueue("offline", endpoint(format!("e{round}-{i}")))
                .await?;
        }
        core_s += started.elapsed().as_secs_f64();
    }
    let n = (ROUNDS * ENQUEUE_PER_ROUND) as f64;
    let (raw, core) = (n / raw_s, n / core_s);
    println!(
        "enqueue: {core:>7.0} writes/s   raw sqlx insert: {raw:>7.0} rows/s   ratio {:.2} (target >= 0.5; {n} each)",
        core / raw
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
    console
        .add_profile(NewProfile {
            name: "live".into(),
            url: url.clone(),
            token: TOKEN.into(),
        })
        .await?;
    let client = reqwest::Client::builder()
        .retry(reqwest::retry::never())
        .build()?;
    let (mut raw_s, mut core_s) = (0.0, 0.0);
    for round in 0..ROUNDS {
        let gate = Arc::new(Semaphore::new(PARALLEL));
        let started = Instant::now();
        let mut tasks = tokio::task::JoinSet::new();
        for i in 0..DRAIN_PER_ROUND {
            let (client, url, gate) = (client.clone(), url.clone(), gate.clone());
            tasks.spawn(async move {
                let _permit = gate.acquire().await.unwrap();
                let resp = client
                    .post(format!("{url}/v1/endpoints"))
                    .bearer_auth(TOKEN)
                    .header("idempotency-key", uuid::Uuid::new_v4().to_string())
                    .json(&json!({"name": format!("raw{round}-{i}"), "spec": {"description": "bench"}}))
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
        raw_s += started.elapsed().as_secs_f64();

        for i in 0..DRAIN_PER_ROUND {
            console
                .enqueue("live", endpoint(format!("core{round}-{i}")))
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
        core_s += started.elapsed().as_secs_f64();
        assert_eq!(report.outcome, SyncOutcome::Drained);
        assert_eq!(report.done as usize, DRAIN_PER_ROUND);
    }
    let n = (ROUNDS * DRAIN_PER_ROUND) as f64;
    let (raw, core) = (n / raw_s, n / core_s);
    println!(
        "drain:   {core:>7.0} ops/s      raw keyed requests: {raw:>7.0} req/s   ratio {:.2} (target >= 0.5; {n} each, {PARALLEL} in parallel)",
        core / raw
    );
    server.stop().await?;
    Ok(())
}
