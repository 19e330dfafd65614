//! `switchyard-health-bench`: latency of `GET /v1/metrics/deliveries` with N recorded
//! attempts (default 1,000,000) spread over the last 24 hours, 50 targets, 10 endpoints and
//! 50 flows, against `GET /healthz` measured in the same run; and how fast the rollup
//! trigger absorbs recorded attempts (the seeding flips attempts from `in_flight` to their
//! outcome in bulk, so every row goes through the same trigger a worker's record does).
//!
//! Usage: switchyard-health-bench [--attempts N] [--db postgres://USER@HOST:PORT]

use std::time::{Duration, Instant};

use anyhow::Context;

#[path = "support/bench_db.rs"]
mod bench_db;
#[path = "support/idle_server.rs"]
mod idle_server;
#[path = "support/seed_pool.rs"]
mod seed_pool;
#[path = "support/timing.rs"]
mod timing;
use bench_db::BenchDb;
use seed_pool::{Param, SeedPool};
use timing::latency;

const TOKEN: &str = "bench-token-123";
const DAY_MS: i64 = 86_400_000;
/// Attempts per seeded delivery.
const PER_DELIVERY: i64 = 5;
const BATCH: i64 = 100_000;
/// Attempts flipped to their outcome per transaction.
const FLIP: i64 = 1_000;

fn args() -> anyhow::Result<(i64, Option<String>)> {
    let (mut attempts, mut db) = (1_000_000i64, None);
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().with_context(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--attempts" => attempts = value.parse()?,
            "--db" => db = Some(value),
            other => anyhow::bail!("unknown flag {other}"),
        }
    }
    Ok((attempts, db))
}

/// The seeding's statements on one backend: deliveries and their attempts inserted
/// `in_flight` (parameters: a slice's first and last number, now; the attempts' also the day
/// and the attempts in all), and the flip of attempts with ids in [1, 2) to their outcome.
struct Statements {
    deliveries: &'static str,
    attempts: &'static str,
    flip: String,
}

/// The flip's outcome: about one in ten failed, durations 5-705 ms.
const FLIP_SET: &str = "UPDATE attempts SET \
       outcome = CASE WHEN started_at % 10 = 0 THEN 'failed' ELSE 'succeeded' END, \
       duration_ms = 5 + started_at % 700, \
       status_code = CASE WHEN started_at % 10 = 0 THEN 503 ELSE 200 END, \
       error_class = CASE WHEN started_at % 10 = 0 THEN 'http_5xx' END, \
       error = CASE WHEN started_at % 10 = 0 THEN 'receiver answered HTTP 503' END, \
       finished_by = 'sender' ";

fn statements(pg: bool) -> Statements {
    let (from, to) = if pg { ("$1", "$2") } else { ("?1", "?2") };
    let flip = format!("{FLIP_SET}WHERE id >= {from} AND id < {to} AND outcome = 'in_flight'");
    if pg {
        Statements {
            deliveries: "INSERT INTO deliveries (id, tenant, event_id, event_type, endpoint, flow, target, mode, \
               state, attempts_made, max_attempts, created_at, updated_at) \
             SELECT 'dlv_h' || lpad(i::text, 12, '0'), 'bench', 'evt_h' || lpad(i::text, 12, '0'), \
               'bench', 'ep-' || (i % 10), 'fl-' || (i % 50), 'tg-' || (i % 50), 'async_inline', \
               'succeeded', 5, 5, $3::bigint, $3::bigint FROM generate_series($1::bigint, $2::bigint) AS s(i)",
            attempts: "INSERT INTO attempts (id, delivery_id, number, hop, hop_number, started_at, outcome, performed_by) \
             SELECT 'att_h' || lpad(i::text, 13, '0'), 'dlv_h' || lpad((i / 5)::text, 12, '0'), \
               i % 5 + 1, 'control_plane_webhook', i % 5 + 1, $3::bigint - (i * $4::bigint) / $5::bigint, \
               'in_flight', 'bench' \
             FROM generate_series($1::bigint, $2::bigint) AS s(i)",
            flip,
        }
    } else {
        Statements {
            deliveries: "WITH RECURSIVE seq(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM seq WHERE i < ?2) \
             INSERT INTO deliveries (id, tenant, event_id, event_type, endpoint, flow, target, mode, \
               state, attempts_made, max_attempts, created_at, updated_at) \
             SELECT printf('dlv_h%012d', i), 'bench', printf('evt_h%012d', i), 'bench', \
               'ep-' || (i % 10), 'fl-' || (i % 50), 'tg-' || (i % 50), 'async_inline', \
               'succeeded', 5, 5, ?3, ?3 FROM seq",
            attempts: "WITH RECURSIVE seq(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM seq WHERE i < ?2) \
             INSERT INTO attempts (id, delivery_id, number, hop_number, started_at, outcome, performed_by) \
             SELECT printf('att_h%013d', i), printf('dlv_h%012d', i / 5), i % 5 + 1, i % 5 + 1, \
               ?3 - (i * ?4) / ?5, 'in_flight', 'bench' FROM seq",
            flip,
        }
    }
}

/// Seeds `attempts` finished attempts: deliveries and their attempts are inserted
/// `in_flight`, then each batch is flipped to its outcome, which fires the rollup trigger per
/// row. Returns the seconds the flips took (the trigger's work).
async fn seed(db: &BenchDb, attempts: i64, now: i64) -> anyhow::Result<f64> {
    let sql = statements(db.is_postgres());
    let pool = SeedPool::connect(db).await?;
    pool.in_batches(sql.deliveries, attempts / PER_DELIVERY, BATCH, now)
        .await?;
    let flips = insert_attempts(&pool, &sql, attempts, now).await?;
    // PostgreSQL's VACUUM: what autovacuum does to the rollups' dead row versions on a live
    // server (SQLite keeps no dead versions and has no `VACUUM ANALYZE`).
    let analyze = if db.is_postgres() {
        "VACUUM ANALYZE"
    } else {
        "ANALYZE"
    };
    pool.execute(analyze, &[]).await?;
    pool.close().await;
    Ok(flips.as_secs_f64())
}

/// Inserts the attempts in batches, each flipped to its outcome right after; returns the time
/// the flips took.
async fn insert_attempts(
    pool: &SeedPool,
    sql: &Statements,
    attempts: i64,
    now: i64,
) -> anyhow::Result<Duration> {
    let mut flips = Duration::ZERO;
    let mut done = 0i64;
    while done < attempts {
        let hi = (done + BATCH).min(attempts) - 1;
        let params = [done, hi, now, DAY_MS, attempts].map(Param::Int);
        pool.execute(sql.attempts, &params).await?;
        let started = Instant::now();
        flip(pool, &sql.flip, done, hi).await?;
        flips += started.elapsed();
        done = hi + 1;
    }
    Ok(flips)
}

/// Flips the attempts `from..=hi` in slices of FLIP, each its own transaction as a worker's
/// records are: one statement updating the same rollup rows 100,000 times in one transaction
/// makes PostgreSQL keep every row version until it commits.
async fn flip(pool: &SeedPool, sql: &str, mut from: i64, hi: i64) -> anyhow::Result<()> {
    while from <= hi {
        let to = (from + FLIP).min(hi + 1);
        let params = [
            Param::Text(format!("att_h{from:013}")),
            Param::Text(format!("att_h{to:013}")),
        ];
        pool.execute(sql, &params).await?;
        from = to;
    }
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let (attempts, server) = args()?;
    let (db, server) = idle_server::open(
        "health",
        &format!("attempts={attempts}"),
        server.as_deref(),
        TOKEN,
    )
    .await?;
    let now = chrono::Utc::now().timestamp_millis();
    let started = Instant::now();
    let flips = seed(&db, attempts, now).await?;
    println!(
        "seeded {attempts} attempts in {:.1} s; the trigger absorbed them at {:.0} attempts/s",
        started.elapsed().as_secs_f64(),
        attempts as f64 / flips
    );
    let client = reqwest::Client::builder().no_proxy().build()?;
    let base = server.url();
    let runs = 100;
    let (h50, h95) = latency(&client, &format!("{base}/healthz"), TOKEN, runs).await?;
    println!("baseline GET /healthz:      p50 {h50:>7.2} ms   p95 {h95:>7.2} ms");
    let report: serde_json::Value = client
        .get(format!("{base}/v1/metrics/deliveries?window=24h"))
        .bearer_auth(TOKEN)
        .send()
        .await?
        .json()
        .await?;
    // The 24 h window is 24 hour buckets ending with the current one: it starts 23 to 24
    // hours ago, so it holds at least 23/24 of attempts spread evenly over the last day.
    let counted = report["totals"]["attempts"].as_i64().unwrap_or(0);
    anyhow::ensure!(
        counted >= attempts * 23 / 24 && counted <= attempts,
        "the 24 h report counts {counted} of {attempts} attempts"
    );
    for window in ["15m", "1h", "24h", "7d"] {
        for group_by in ["target", "flow"] {
            let url = format!("{base}/v1/metrics/deliveries?window={window}&group_by={group_by}");
            let (p50, p95) = latency(&client, &url, TOKEN, runs).await?;
            println!(
                "metrics {window:>3} by {group_by:<6}      p50 {p50:>7.2} ms   p95 {p95:>7.2} ms   (p95 = {:.1}x healthz)",
                p95 / h95
            );
        }
    }
    server.stop().await?;
    db.drop_database().await?;
    Ok(())
}
