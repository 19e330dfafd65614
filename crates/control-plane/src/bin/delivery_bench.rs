//! `switchyard-delivery-bench`: throughput of the delivery pipeline and DLQ query latency.
//!
//! Prints, each against a baseline measured in the same run:
//! - events accepted/s (POST /v1/events, worker off) vs. GET /v1/info requests/s;
//! - events delivered/s to a loopback receiver vs. raw POSTs/s to that receiver;
//! - DLQ first page (unfiltered and filtered) and stats latency p50/p95 with N dead
//!   deliveries (default 1,000,000, bulk-inserted) vs. GET /healthz latency.
//!
//! - with `--replicas 1,3`: events delivered/s by 1 and by 3 replicas (servers with their
//!   own pools and workers) draining one backlog, as a ratio to the single replica.
//!
//! `--db postgres://USER@HOST:PORT` runs everything on PostgreSQL, each part on a database of
//! its own (dropped at the end); otherwise SQLite.
//!
//! Usage: switchyard-delivery-bench [--events N] [--dlq-rows N] [--concurrency N]
//!        [--db URL] [--replicas LIST] [--skip-dlq]

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use axum::Router;
use axum::http::StatusCode;
use axum::routing::post;
use serde_json::json;
use switchyard_control_plane::delivery::schedule::parse_schedule;
use switchyard_control_plane::extract::Tenants;
use switchyard_control_plane::{Server, ServerConfig};

#[path = "support/bench_db.rs"]
mod bench_db;
#[path = "support/timing.rs"]
mod timing;
use bench_db::BenchDb;
use timing::latency;

const TOKEN: &str = "bench-token-123";

struct Args {
    events: usize,
    dlq_rows: u64,
    concurrency: usize,
    /// A PostgreSQL server to run on; SQLite when absent.
    db: Option<String>,
    replicas: Vec<usize>,
    skip_dlq: bool,
}

fn args() -> anyhow::Result<Args> {
    let mut args = Args {
        events: 5_000,
        dlq_rows: 1_000_000,
        concurrency: 16,
        db: None,
        replicas: Vec::new(),
        skip_dlq: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--skip-dlq" {
            args.skip_dlq = true;
            continue;
        }
        let value = it.next().with_context(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--events" => args.events = value.parse()?,
            "--dlq-rows" => args.dlq_rows = value.parse()?,
            "--concurrency" => args.concurrency = value.parse()?,
            "--db" => args.db = Some(value),
            "--replicas" => {
                args.replicas = value
                    .split(',')
                    .map(|n| n.trim().parse())
                    .collect::<Result<_, _>>()?;
            }
            other => anyhow::bail!("unknown flag {other}"),
        }
    }
    Ok(args)
}

async fn start(db: &BenchDb, worker: bool) -> anyhow::Result<Server> {
    let mut tenants = Tenants::default();
    tenants.add("bench", TOKEN);
    let mut config = ServerConfig::new(
        SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        db.url(),
        tenants,
    )
    .local_only();
    config.delivery.run_worker = worker;
    config.main_key_file = db.main_key_file()?;
    config.delivery.schedule =
        parse_schedule("0s,50ms,100ms,200ms,400ms").map_err(anyhow::Error::msg)?;
    Server::start(config).await
}

/// Runs `total` requests with `concurrency` callers; returns requests/s.
async fn rate<F, Fut>(total: usize, concurrency: usize, call: F) -> anyhow::Result<f64>
where
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = anyhow::Result<()>> + Send,
{
    let call = Arc::new(call);
    let next = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let tasks: Vec<_> = (0..concurrency)
        .map(|_| {
            let (call, next) = (call.clone(), next.clone());
            tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                    if i >= total {
                        return Ok::<_, anyhow::Error>(());
                    }
                    call(i).await?;
                }
            })
        })
        .collect();
    for t in tasks {
        t.await??;
    }
    Ok(total as f64 / started.elapsed().as_secs_f64())
}

async fn setup_route(client: &reqwest::Client, base: &str, url: &str) -> anyhow::Result<()> {
    for (plural, name, spec) in [
        ("endpoints", "ep", json!({})),
        ("targets", "tg", json!({"url": url, "timeout_ms": 5000})),
        ("flows", "fl", json!({"endpoint": "ep", "target": "tg"})),
    ] {
        let r = client
            .post(format!("{base}/v1/{plural}"))
            .bearer_auth(TOKEN)
            .header("idempotency-key", format!("bench-{plural}"))
            .json(&json!({"name": name, "spec": spec}))
            .send()
            .await?;
        anyhow::ensure!(
            r.status().as_u16() == 201,
            "create {plural}: HTTP {}",
            r.status()
        );
    }
    Ok(())
}

async fn receiver(count: Arc<AtomicU64>) -> anyhow::Result<String> {
    let app = Router::new().route(
        "/hook",
        post(move || {
            let count = count.clone();
            async move {
                count.fetch_add(1, Ordering::Relaxed);
                StatusCode::OK
            }
        }),
    );
    let listener =
        tokio::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).await?;
    let url = format!("http://{}/hook", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(url)
}

async fn throughput(args: &Args) -> anyhow::Result<()> {
    let client = reqwest::Client::builder().no_proxy().build()?;
    let received = Arc::new(AtomicU64::new(0));
    let hook = receiver(received.clone()).await?;

    // Accepting: worker off, so only the submission path is measured.
    let db = BenchDb::create(args.db.as_deref(), "throughput").await?;
    let server = start(&db, false).await?;
    let base = server.url();
    setup_route(&client, &base, &hook).await?;
    let (c, b) = (client.clone(), base.clone());
    let info_rate = rate(args.events, args.concurrency, move |_| {
        let (c, b) = (c.clone(), b.clone());
        async move {
            c.get(format!("{b}/v1/info"))
                .bearer_auth(TOKEN)
                .send()
                .await?
                .bytes()
                .await?;
            Ok(())
        }
    })
    .await?;
    let (c, b) = (client.clone(), base.clone());
    let accept_rate = rate(args.events, args.concurrency, move |i| {
        let (c, b) = (c.clone(), b.clone());
        async move {
            let r = c
                .post(format!("{b}/v1/events"))
                .bearer_auth(TOKEN)
                .json(&json!({"endpoint": "ep", "event_type": "bench", "payload": {"i": i}, "event_key": format!("k{i}")}))
                .send()
                .await?;
            anyhow::ensure!(r.status().as_u16() == 202, "submit: HTTP {}", r.status());
            Ok(())
        }
    })
    .await?;
    server.stop().await?;
    println!(
        "events accepted/s:        {accept_rate:>10.0}   (baseline GET /v1/info: {info_rate:.0}/s, ratio {:.2})",
        accept_rate / info_rate
    );

    // Delivering: the backlog of accepted events, drained by a worker.
    let (c, h) = (client.clone(), hook.clone());
    let raw_rate = rate(args.events, args.concurrency, move |_| {
        let (c, h) = (c.clone(), h.clone());
        async move {
            c.post(&h).body("{}").send().await?;
            Ok(())
        }
    })
    .await?;
    received.store(0, Ordering::Relaxed);
    let started = Instant::now();
    let server = start(&db, true).await?;
    while received.load(Ordering::Relaxed) < args.events as u64 {
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(600),
            "delivery stalled"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let delivered_rate = args.events as f64 / started.elapsed().as_secs_f64();
    server.stop().await?;
    println!(
        "events delivered/s:       {delivered_rate:>10.0}   (baseline raw POSTs to the receiver: {raw_rate:.0}/s, ratio {:.2})",
        delivered_rate / raw_rate
    );
    db.drop_database().await?;
    Ok(())
}

/// Accepts `events` events (no worker running), then times `replicas` servers with workers
/// draining them to the receiver.
async fn drain_with(args: &Args, replicas: usize) -> anyhow::Result<f64> {
    let client = reqwest::Client::builder().no_proxy().build()?;
    let received = Arc::new(AtomicU64::new(0));
    let hook = receiver(received.clone()).await?;
    let db = BenchDb::create(args.db.as_deref(), &format!("replicas{replicas}")).await?;
    let server = start(&db, false).await?;
    let base = server.url();
    setup_route(&client, &base, &hook).await?;
    let (c, b) = (client.clone(), base.clone());
    rate(args.events, args.concurrency, move |i| {
        let (c, b) = (c.clone(), b.clone());
        async move {
            let r = c
                .post(format!("{b}/v1/events"))
                .bearer_auth(TOKEN)
                .json(&json!({"endpoint": "ep", "event_type": "bench", "payload": {"i": i}}))
                .send()
                .await?;
            anyhow::ensure!(r.status().as_u16() == 202, "submit: HTTP {}", r.status());
            Ok(())
        }
    })
    .await?;
    server.stop().await?;
    let started = Instant::now();
    let mut servers = Vec::new();
    for _ in 0..replicas {
        servers.push(start(&db, true).await?);
    }
    while received.load(Ordering::Relaxed) < args.events as u64 {
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(600),
            "delivery stalled"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let delivered = args.events as f64 / started.elapsed().as_secs_f64();
    for s in servers {
        s.stop().await?;
    }
    anyhow::ensure!(
        received.load(Ordering::Relaxed) == args.events as u64,
        "the receiver got {} requests for {} events",
        received.load(Ordering::Relaxed),
        args.events
    );
    db.drop_database().await?;
    Ok(delivered)
}

async fn replicas(args: &Args) -> anyhow::Result<()> {
    let mut base = None;
    for &n in &args.replicas {
        let rate = drain_with(args, n).await?;
        let first = *base.get_or_insert(rate);
        // The target of docs/control-plane.md ("Benchmark"): three replicas on one
        // PostgreSQL deliver at least 1.5 times what one does.
        let target = if args.replicas[0] == 1 && n == 3 {
            format!("; target >= 1.50: {}", verdict(rate / first >= 1.5))
        } else {
            String::new()
        };
        println!(
            "delivered/s, {n} replica(s):  {rate:>10.0}   (ratio to {} replica(s): {:.2}{target})",
            args.replicas[0],
            rate / first
        );
    }
    Ok(())
}

/// How a figure compares with its target, as the other benches print it.
fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "MISSED" }
}

async fn dlq(args: &Args) -> anyhow::Result<()> {
    let db = BenchDb::create(args.db.as_deref(), "dlq").await?;
    let server = start(&db, false).await?;
    let now = chrono::Utc::now().timestamp_millis();
    let started = Instant::now();
    seed_dead(&db, args.dlq_rows, now).await?;
    println!(
        "DLQ rows inserted:        {:>10}   in {:.1} s",
        args.dlq_rows,
        started.elapsed().as_secs_f64()
    );
    let client = reqwest::Client::builder().no_proxy().build()?;
    let base = server.url();
    let runs = 200;
    let (h50, h95) = latency(&client, &format!("{base}/healthz"), TOKEN, runs).await?;
    println!("baseline GET /healthz:    p50 {h50:>7.2} ms   p95 {h95:>7.2} ms");
    for (label, query) in dlq_queries(now) {
        let (p50, p95) = latency(&client, &format!("{base}{query}"), TOKEN, runs).await?;
        let target = if query.starts_with("/v1/dlq/stats") {
            200.0
        } else {
            20.0
        };
        println!(
            "{label:<25} p50 {p50:>7.2} ms   p95 {p95:>7.2} ms   (p95 = {:.1}x healthz; target p95 < {target} ms: {})",
            p95 / h95,
            verdict(p95 < target)
        );
    }
    deep_pages(&client, &base).await?;
    server.stop().await?;
    db.drop_database().await?;
    Ok(())
}

/// The DLQ pages and stats measured, by label; `since` filters start 7 days before `now`.
fn dlq_queries(now: i64) -> [(&'static str, String); 11] {
    let since = chrono::DateTime::from_timestamp_millis(now - 7 * 86_400_000)
        .unwrap_or_default()
        .to_rfc3339();
    let since = since.replace('+', "%2B");
    [
        ("DLQ page, unfiltered", "/v1/dlq?limit=50".to_owned()),
        (
            "DLQ page, target",
            "/v1/dlq?limit=50&target=tg-7".to_owned(),
        ),
        (
            "DLQ page, error_class",
            "/v1/dlq?limit=50&error_class=timeout".to_owned(),
        ),
        (
            "DLQ page, endpoint+since",
            format!("/v1/dlq?limit=50&endpoint=ep-3&since={since}"),
        ),
        (
            "DLQ page, target+class",
            "/v1/dlq?limit=50&target=tg-7&error_class=timeout".to_owned(),
        ),
        (
            "DLQ page, target+class=0",
            "/v1/dlq?limit=50&target=tg-7&error_class=http_4xx".to_owned(),
        ),
        (
            "DLQ page, flow+class+since",
            format!("/v1/dlq?limit=50&flow=fl-7&error_class=timeout&since={since}"),
        ),
        (
            "DLQ page, endpoint+target",
            "/v1/dlq?limit=50&endpoint=ep-3&target=tg-8".to_owned(),
        ),
        (
            "DLQ stats, target",
            "/v1/dlq/stats?group_by=target".to_owned(),
        ),
        (
            "DLQ stats, error_class",
            "/v1/dlq/stats?group_by=error_class".to_owned(),
        ),
        ("DLQ stats, hour", "/v1/dlq/stats?group_by=hour".to_owned()),
    ]
}

/// A page deep in the DLQ, via cursors: ten pages of 500 fetched one after the other.
async fn deep_pages(client: &reqwest::Client, base: &str) -> anyhow::Result<()> {
    let mut url = format!("{base}/v1/dlq?limit=500&target=tg-7");
    let started = Instant::now();
    for _ in 0..10 {
        let page: serde_json::Value = client
            .get(&url)
            .bearer_auth(TOKEN)
            .send()
            .await?
            .json()
            .await?;
        let Some(cursor) = page["next_cursor"].as_str() else {
            break;
        };
        url = format!("{base}/v1/dlq?limit=500&target=tg-7&cursor={cursor}");
    }
    println!(
        "DLQ 10 pages of 500 via cursor: {:.1} ms",
        started.elapsed().as_secs_f64() * 1000.0
    );
    Ok(())
}

/// Bulk-inserts `rows` dead deliveries: 50 targets, 10 endpoints, 20 flows, 5 error classes,
/// deaths spread over the last 30 days, one statement per 100k rows. The fixture rows go
/// straight into the server's database: bench data, written once, not a path the server
/// runs (its store owns every statement it runs). The DLQ counters follow by trigger.
async fn seed_dead(db: &BenchDb, rows: u64, now: i64) -> anyhow::Result<()> {
    let batch = 100_000u64;
    let mut done = 0u64;
    if db.is_postgres() {
        let writer = sqlx::PgPool::connect(&db.url()).await?;
        while done < rows {
            let n = batch.min(rows - done);
            sqlx::query(
                "INSERT INTO deliveries (id, tenant, event_id, event_type, endpoint, flow, target, mode, state, \
                   attempts_made, webhook_hop_attempts, max_attempts, created_at, updated_at, dead_at, exhausted_hop, \
                   error_class, last_status) \
                 SELECT 'dlv_bench' || lpad(i::text, 12, '0'), 'bench', 'evt_bench' || lpad(i::text, 12, '0'), 'bench', \
                   'ep-' || (i % 10), 'fl-' || (i % 20), 'tg-' || (i % 50), 'async_inline', 'dead', 5, 5, 5, \
                   $1 - (i * 2591) % 2592000000, $1 - (i * 2591) % 2592000000, $1 - (i * 2591) % 2592000000, \
                   'control_plane_webhook', \
                   CASE i % 5 WHEN 0 THEN 'http_5xx' WHEN 1 THEN 'http_4xx' WHEN 2 THEN 'timeout' WHEN 3 THEN 'connect' ELSE 'tls' END, \
                   CASE i % 5 WHEN 0 THEN 503 WHEN 1 THEN 404 ELSE NULL END \
                 FROM generate_series($2::bigint, $3::bigint) AS s(i)",
            )
            .bind(now)
            .bind(done as i64)
            .bind((done + n - 1) as i64)
            .execute(&writer)
            .await?;
            done += n;
        }
        sqlx::query("ANALYZE").execute(&writer).await?;
        writer.close().await;
        return Ok(());
    }
    let writer = sqlx::SqlitePool::connect(&db.url()).await?;
    while done < rows {
        let n = batch.min(rows - done);
        sqlx::query(
            "WITH RECURSIVE seq(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM seq WHERE i < ?) \
             INSERT INTO deliveries (id, tenant, event_id, event_type, endpoint, flow, target, mode, state, \
               attempts_made, webhook_hop_attempts, max_attempts, created_at, updated_at, dead_at, exhausted_hop, \
               error_class, last_status) \
             SELECT printf('dlv_bench%012d', i), 'bench', printf('evt_bench%012d', i), 'bench', \
               'ep-' || (i % 10), 'fl-' || (i % 20), 'tg-' || (i % 50), 'async_inline', 'dead', 5, 5, 5, \
               ? - (i * 2591) % 2592000000, ? - (i * 2591) % 2592000000, ? - (i * 2591) % 2592000000, \
               'control_plane_webhook', \
               CASE i % 5 WHEN 0 THEN 'http_5xx' WHEN 1 THEN 'http_4xx' WHEN 2 THEN 'timeout' WHEN 3 THEN 'connect' ELSE 'tls' END, \
               CASE i % 5 WHEN 0 THEN 503 WHEN 1 THEN 404 ELSE NULL END \
             FROM seq",
        )
        .bind(done as i64)
        .bind((done + n - 1) as i64)
        .bind(now)
        .bind(now)
        .bind(now)
        .execute(&writer)
        .await?;
        done += n;
    }
    sqlx::query("ANALYZE").execute(&writer).await?;
    writer.close().await;
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = args()?;
    println!(
        "switchyard-delivery-bench: events={} dlq_rows={} concurrency={}",
        args.events, args.dlq_rows, args.concurrency
    );
    if let Some(db) = &args.db {
        println!(
            "database: PostgreSQL at {}",
            switchyard_control_plane::store::redact(db)
        );
    } else {
        println!("database: SQLite (WAL)");
    }
    throughput(&args).await?;
    if !args.replicas.is_empty() {
        replicas(&args).await?;
    }
    if !args.skip_dlq {
        dlq(&args).await?;
    }
    Ok(())
}
