//! DLQ explorer figures through the console core: 100,000 dead deliveries on a real control
//! plane (in-process, loopback), then
//! - time to the first page (cold: a fresh console's first call; warm: p50/p95 of 50 calls),
//!   against `server_info` (the smallest authenticated call through the same path) as baseline;
//! - paging through everything at 200 per page (what scrolling to the end fetches);
//! - memory: this process's RSS before and after holding every page (the server runs in this
//!   process too, so the delta is what the pages cost).
//!
//! `cargo run --release -p switchyard-core --example bench_dlq [-- ROWS]`

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::time::{Duration, Instant};

use switchyard_control_plane::extract::Tenants;
use switchyard_control_plane::{Server, ServerConfig};
use switchyard_core::{Console, ConsoleOptions, DlqQuery, NewProfile};

const TOKEN: &str = "bench-token-0123456789abcdef";

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn pct(mut v: Vec<Duration>, p: f64) -> f64 {
    v.sort();
    v[((v.len() as f64 - 1.0) * p).round() as usize].as_secs_f64() * 1000.0
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let rows: u64 = std::env::args()
        .nth(1)
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(100_000);
    let dir = tempfile::tempdir()?;
    let server = start_server(dir.path()).await?;
    // Held to the end: its connection is part of the process whose RSS is measured.
    let _writer = seed(dir.path(), rows).await?;
    let console = Console::open(ConsoleOptions::new(dir.path().join("console"), "bench")).await?;
    console
        .add_profile(NewProfile {
            name: "b".into(),
            url: server.url(),
            token: TOKEN.into(),
        })
        .await?;
    first_page(&console).await?;
    every_page(&console).await?;
    server.stop().await?;
    Ok(())
}

/// The control plane in this process, on loopback, its database in `dir`; no delivery worker.
async fn start_server(dir: &Path) -> anyhow::Result<Server> {
    let mut tenants = Tenants::default();
    tenants.add("bench", TOKEN);
    let mut config = ServerConfig::new(
        SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        format!("sqlite://{}", dir.join("cp.db").display()),
        tenants,
    )
    .local_only();
    config.delivery.run_worker = false;
    Server::start(config).await
}

/// `rows` dead deliveries in the server's database; returns the connection that wrote them.
async fn seed(dir: &Path, rows: u64) -> anyhow::Result<sqlx::SqlitePool> {
    // The fixture rows go straight into the server's database file (bench data, written once).
    let writer =
        sqlx::SqlitePool::connect(&format!("sqlite://{}", dir.join("cp.db").display())).await?;
    let now = chrono::Utc::now().timestamp_millis();
    let started = Instant::now();
    sqlx::query(
        "WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i < ? - 1) \
         INSERT INTO deliveries (id, tenant, event_id, event_type, endpoint, flow, target, mode, state, \
           attempts_made, max_attempts, created_at, updated_at, dead_at, error_class, last_status) \
         SELECT printf('dlv_bench%012d', i), 'bench', printf('evt_bench%012d', i), 'order.paid', \
           'ep-' || (i % 10), 'fl-' || (i % 20), 'tg-' || (i % 50), 'async_inline', 'dead', 5, 5, \
           ? - i * 1000, ? - i * 1000, ? - i * 1000, \
           CASE i % 5 WHEN 0 THEN 'http_5xx' WHEN 1 THEN 'http_4xx' WHEN 2 THEN 'timeout' WHEN 3 THEN 'connect' ELSE 'tls' END, \
           CASE i % 5 WHEN 0 THEN 503 WHEN 1 THEN 404 ELSE NULL END \
         FROM seq",
    )
    .bind(rows as i64)
    .bind(now)
    .bind(now)
    .bind(now)
    .execute(&writer)
    .await?;
    sqlx::query("ANALYZE").execute(&writer).await?;
    println!(
        "dead deliveries on the server: {rows} (inserted in {:.1} s)",
        started.elapsed().as_secs_f64()
    );
    Ok(writer)
}

/// Time to the first page: cold, then p50/p95 of 50 calls against `server_info`'s.
async fn first_page(console: &Console) -> anyhow::Result<()> {
    let first_page = DlqQuery {
        limit: Some(200),
        ..Default::default()
    };

    let cold = Instant::now();
    let page = console.dlq_page("b", &first_page).await?;
    let cold = cold.elapsed();
    assert_eq!(page.items.len(), 200);
    let mut warm = Vec::new();
    let mut base = Vec::new();
    for _ in 0..50 {
        let t = Instant::now();
        console.server_info("b").await?;
        base.push(t.elapsed());
        let t = Instant::now();
        console.dlq_page("b", &first_page).await?;
        warm.push(t.elapsed());
    }
    println!(
        "first page (200 rows), cold:        {:>8.2} ms",
        cold.as_secs_f64() * 1000.0
    );
    println!(
        "first page (200 rows), warm:        p50 {:>7.2} ms  p95 {:>7.2} ms",
        pct(warm.clone(), 0.5),
        pct(warm, 0.95)
    );
    println!(
        "baseline server_info, same path:    p50 {:>7.2} ms  p95 {:>7.2} ms",
        pct(base.clone(), 0.5),
        pct(base, 0.95)
    );
    Ok(())
}

/// Paging through everything at 200 per page, and the RSS it costs to hold every page.
async fn every_page(console: &Console) -> anyhow::Result<()> {
    let rss_before = rss_kib();
    let t = Instant::now();
    let mut held = Vec::new();
    let mut query = DlqQuery {
        limit: Some(200),
        ..Default::default()
    };
    loop {
        let page = console.dlq_page("b", &query).await?;
        held.extend(page.items);
        match page.next_cursor {
            Some(c) => query.cursor = Some(c),
            None => break,
        }
    }
    let all = t.elapsed();
    let rss_after = rss_kib();
    println!(
        "every page ({} rows, {} pages):    {:>8.2} s  ({:.2} ms per page)",
        held.len(),
        held.len().div_ceil(200),
        all.as_secs_f64(),
        all.as_secs_f64() * 1000.0 / held.len().div_ceil(200) as f64
    );
    println!(
        "process RSS (server in-process):    {:.1} MiB before paging, {:.1} MiB holding all {} rows (+{:.1} MiB)",
        rss_before as f64 / 1024.0,
        rss_after as f64 / 1024.0,
        held.len(),
        (rss_after.saturating_sub(rss_before)) as f64 / 1024.0
    );
    Ok(())
}
