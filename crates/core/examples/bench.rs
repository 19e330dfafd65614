//! `cargo run --release -p switchyard-core --example bench`
//!
//! Prints, from one run (rounds interleave the two sides of each ratio, so load from other
//! processes on the machine hits both alike), each figure with its target:
//! - enqueue rate (writes/s) vs a raw sqlx single-row insert per `BEGIN IMMEDIATE`
//!   transaction with the same pragmas (target: ratio >= 0.8);
//! - drain rate (ops/s) of `Console::sync` vs raw keyed loopback POSTs to the same server,
//!   with 16 in parallel and with 1 in flight (target: ratio >= 0.8 each).
//!
//! `BENCH_ROUNDS` (default 4) sets the rounds per figure; `BENCH_ONLY=enqueue` or
//! `BENCH_ONLY=drain` runs one part.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde_json::json;
use switchyard_control_plane::extract::Tenants;
use switchyard_control_plane::{Server, ServerConfig};
use switchyard_core::{
    Console, ConsoleOptions, NewProfile, ResourceKind, SyncOptions, SyncOutcome, Write,
};
use tokio::sync::Semaphore;

const ENQUEUE_PER_ROUND: usize = 750;
const DRAIN_PER_ROUND: usize = 400;
const TOKEN: &str = "bench-token-0123456789";
const TARGET: f64 = 0.8;

fn endpoint(name: String) -> Write {
    Write::Create {
        kind: ResourceKind::Endpoint,
        name,
        spec: json!({"description": "bench"}),
    }
}

fn rounds() -> usize {
    std::env::var("BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(4)
}

fn verdict(ratio: f64) -> &'static str {
    if ratio >= TARGET { "met" } else { "MISSED" }
}

async fn console(dir: &Path, concurrency: usize) -> anyhow::Result<Console> {
    let mut opts = ConsoleOptions::new(dir, "bench");
    opts.concurrency = concurrency;
    Ok(Console::open(opts).await?)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let rounds = rounds();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "console bench: {rounds} rounds per figure, load average at start: {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    if only != "drain" {
        bench_enqueue(dir.path(), rounds).await?;
    }
    if only == "enqueue" {
        return Ok(());
    }

    let mut tenants = Tenants::default();
    tenants.add("bench", TOKEN);
    let server = Server::start(
        ServerConfig::new(
            SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            format!("sqlite://{}", dir.path().join("cp.db").display()),
            tenants,
        )
        .local_only(),
    )
    .await?;
    for parallel in [16, 1] {
        bench_drain(dir.path(), &server.url(), parallel, rounds).await?;
    }
    server.stop().await?;
    Ok(())
}

async fn bench_enqueue(dir: &Path, rounds: usize) -> anyhow::Result<()> {
    let raw_pool = switchyard_core::sqlite_pool_options()
        .max_connections(1)
        .connect_with(switchyard_core::sqlite_connect_options(&dir.join("raw.db")))
        .await?;
    sqlx::query(
        "CREATE TABLE rows (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, body TEXT NOT NULL, created_at INTEGER NOT NULL)",
    )
    .execute(&raw_pool)
    .await?;
    let console = console(&dir.join("enqueue"), 16).await?;
    console
        .add_profile(NewProfile {
            name: "offline".into(),
            url: "http://127.0.0.1:9".into(),
            token: TOKEN.into(),
        })
        .await?;
    let (mut raw_s, mut core_s) = (0.0, 0.0);
    for round in 0..rounds {
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
    let n = (rounds * ENQUEUE_PER_ROUND) as f64;
    let (raw, core) = (n / raw_s, n / core_s);
    println!(
        "enqueue:             {core:>7.0} writes/s  raw sqlx insert:    {raw:>7.0} rows/s  ratio {:.2} (target >= {TARGET}: {}; {n} each)",
        core / raw,
        verdict(core / raw)
    );
    Ok(())
}

/// Raw keyed creates with `parallel` in flight, then the same number through the outbox
/// with the console's concurrency at `parallel`; per round, alternating.
async fn bench_drain(dir: &Path, url: &str, parallel: usize, rounds: usize) -> anyhow::Result<()> {
    let console = console(&dir.join(format!("drain-{parallel}")), parallel).await?;
    console
        .add_profile(NewProfile {
            name: "live".into(),
            url: url.to_owned(),
            token: TOKEN.into(),
        })
        .await?;
    let client = reqwest::Client::builder()
        .retry(reqwest::retry::never())
        .build()?;
    let (mut raw_s, mut core_s) = (0.0, 0.0);
    for round in 0..rounds {
        let gate = Arc::new(Semaphore::new(parallel));
        let started = Instant::now();
        let mut tasks = tokio::task::JoinSet::new();
        for i in 0..DRAIN_PER_ROUND {
            let (client, url, gate) = (client.clone(), url.to_owned(), gate.clone());
            tasks.spawn(async move {
                let _permit = gate.acquire().await.unwrap();
                let resp = client
                    .post(format!("{url}/v1/endpoints"))
                    .bearer_auth(TOKEN)
                    .header("idempotency-key", uuid::Uuid::new_v4().to_string())
                    .json(&json!({"name": format!("raw{parallel}-{round}-{i}"), "spec": {"description": "bench"}}))
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
                .enqueue("live", endpoint(format!("core{parallel}-{round}-{i}")))
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
    let n = (rounds * DRAIN_PER_ROUND) as f64;
    let (raw, core) = (n / raw_s, n / core_s);
    println!(
        "drain ({parallel:>2} in flight): {core:>7.0} ops/s     raw keyed requests: {raw:>7.0} req/s   ratio {:.2} (target >= {TARGET}: {}; {n} each)",
        core / raw,
        verdict(core / raw)
    );
    Ok(())
}
