//! `switchyard-diagnostics-bench`: latency of `GET /v1/diagnostics` for a tenant with N
//! deliveries (default 1,000,000), against `GET /healthz` measured in the same run. Of each
//! thousand deliveries 900 succeeded, 90 are dead (the DLQ, over 50 targets and the last
//! day), 8 pending (endpoint `ep-0` of ten is disabled), 1 a relay waiting for an edge that
//! never leased, 1 in flight with a lease that expired an hour ago; plus 500 overdue
//! re-deliveries of a replay session, five failing targets and one tampered DLQ counter: every
//! class has something to find, so every check does its whole work.
//!
//! Usage: switchyard-diagnostics-bench [--deliveries N] [--db postgres://USER@HOST:PORT]

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Instant;

use anyhow::Context;
use switchyard_control_plane::extract::Tenants;
use switchyard_control_plane::{Server, ServerConfig};

#[path = "support/bench_db.rs"]
mod bench_db;
#[path = "support/timing.rs"]
mod timing;
use bench_db::BenchDb;
use timing::latency;

const TOKEN: &str = "bench-token-123";
const BATCH: i64 = 100_000;
/// The p95 the check aims at.
const TARGET_P95_MS: f64 = 100.0;

fn args() -> anyhow::Result<(i64, Option<String>)> {
    let (mut deliveries, mut db) = (1_000_000i64, None);
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().with_context(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--deliveries" => deliveries = value.parse()?,
            "--db" => db = Some(value),
            other => anyhow::bail!("unknown flag {other}"),
        }
    }
    Ok((deliveries, db))
}

/// The columns and values of a seeded delivery `i` (`?3`/`$3`: now), shared by both
/// backends' statements.
const COLUMNS: &str = "id, tenant, event_id, event_type, endpoint, flow, target, mode, edge, state, \
     attempts_made, max_attempts, next_attempt_at, lease_owner, lease_until, current_attempt, \
     created_at, updated_at, dead_at, error_class";

fn values(now: &str, id: &str, event: &str, attempt: &str) -> String {
    format!(
        "{id}, 'bench', {event}, 'bench', 'ep-' || (i % 10), 'fl-' || (i % 50), 'tg-' || (i % 50), \
         CASE WHEN i % 1000 = 998 THEN 'async_relay' ELSE 'async_inline' END, \
         CASE WHEN i % 1000 = 998 THEN 'edge-1' END, \
         CASE WHEN i % 1000 < 900 THEN 'succeeded' WHEN i % 1000 < 990 THEN 'dead' \
              WHEN i % 1000 < 999 THEN 'pending' ELSE 'in_flight' END, \
         CASE WHEN i % 1000 < 900 THEN 1 ELSE 5 END, 5, \
         CASE WHEN i % 1000 >= 990 AND i % 1000 < 999 THEN {now} + 3600000 END, \
         CASE WHEN i % 1000 = 999 THEN 'worker-gone' END, \
         CASE WHEN i % 1000 = 999 THEN {now} - 3600000 END, \
         CASE WHEN i % 1000 = 999 THEN {attempt} END, \
         {now} - (i % 86400) * 1000 - 600000, {now} - (i % 86400) * 1000, \
         CASE WHEN i % 1000 >= 900 AND i % 1000 < 990 THEN {now} - (i % 86400) * 1000 END, \
         CASE WHEN i % 1000 >= 900 AND i % 1000 < 990 THEN 'http_5xx' END"
    )
}

/// The fixture around the deliveries: resources, failing targets' health rows, the replay
/// session and its overdue re-deliveries, one DLQ counter off by one.
fn fixture(pg: bool) -> Vec<String> {
    let p = |n: usize| if pg { format!("${n}") } else { format!("?{n}") };
    let now = p(1);
    let mut out = vec![
        format!(
            "INSERT INTO resources (tenant, kind, name, version, spec, status, created_at, updated_at) \
             VALUES ('bench', 'endpoint', 'ep-0', 1, '{{}}', '{{\"enabled\": false, \"pending_deliveries\": 0}}', {now}, {now})"
        ),
        format!(
            "INSERT INTO replay_sessions (tenant, id, fingerprint, request, created_at) \
             VALUES ('bench', 's-bench', {}, '{{\"selection\": {{\"filter\": {{}}}}}}', {now})",
            if pg { "'\\x00'::bytea" } else { "x'00'" }
        ),
        format!(
            "UPDATE dlq_counts SET count = count + 1 WHERE tenant = 'bench' AND target = 'tg-7' \
             AND hour = (SELECT MIN(hour) FROM dlq_counts WHERE tenant = 'bench' AND target = 'tg-7')"
        ),
    ];
    for n in 1..10 {
        out.push(format!(
            "INSERT INTO resources (tenant, kind, name, version, spec, status, created_at, updated_at) \
             VALUES ('bench', 'endpoint', 'ep-{n}', 1, '{{}}', '{{\"enabled\": true, \"pending_deliveries\": 0}}', {now}, {now})"
        ));
    }
    for n in 0..50 {
        out.push(format!(
            "INSERT INTO resources (tenant, kind, name, version, spec, status, created_at, updated_at) \
             VALUES ('bench', 'target', 'tg-{n}', 1, '{{\"url\": \"http://192.0.2.1/hook\", \"timeout_ms\": 1000}}', '{{}}', {now}, {now})"
        ));
        let failing = n < 5;
        out.push(format!(
            "INSERT INTO delivery_health (tenant, dimension, name, consecutive_failures, failing_since, \
             last_success_at, last_failure_at, last_error_class, last_error) VALUES ('bench', 'target', 'tg-{n}', \
             {}, {}, {now} - 7200000, {now} - 60000, 'http_5xx', 'receiver answered HTTP 503')",
            if failing { 25 } else { 0 },
            if failing { format!("{now} - 3600000") } else { "NULL".into() },
        ));
    }
    out
}

async fn seed(db: &BenchDb, deliveries: i64, now: i64) -> anyhow::Result<()> {
    let pg = db.is_postgres();
    let insert = if pg {
        format!(
            "INSERT INTO deliveries ({COLUMNS}) SELECT {} FROM generate_series($1::bigint, $2::bigint) AS seq(i)",
            values(
                "$3::bigint",
                "'dlv_d' || lpad(i::text, 9, '0')",
                "'evt_d' || lpad(i::text, 9, '0')",
                "'att_d' || lpad(i::text, 9, '0')"
            )
        )
    } else {
        format!(
            "WITH RECURSIVE seq(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM seq WHERE i < ?2) \
             INSERT INTO deliveries ({COLUMNS}) SELECT {} FROM seq",
            values(
                "?3",
                "printf('dlv_d%09d', i)",
                "printf('evt_d%09d', i)",
                "printf('att_d%09d', i)"
            )
        )
    };
    // The replay's re-deliveries: pending, due an hour ago, nobody sending them.
    let replays = if pg {
        "INSERT INTO deliveries (id, tenant, event_id, event_type, endpoint, flow, target, mode, state, \
           max_attempts, next_attempt_at, created_at, updated_at, replay_session) \
         SELECT 'dlv_r' || lpad(i::text, 9, '0'), 'bench', 'evt_r', 'bench', 'ep-1', 'fl-1', 'tg-1', \
           'async_inline', 'pending', 5, $3::bigint - 3600000, $3::bigint - 3600000, $3::bigint - 3600000, 's-bench' \
         FROM generate_series($1::bigint, $2::bigint) AS seq(i)"
    } else {
        "WITH RECURSIVE seq(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM seq WHERE i < ?2) \
         INSERT INTO deliveries (id, tenant, event_id, event_type, endpoint, flow, target, mode, state, \
           max_attempts, next_attempt_at, created_at, updated_at, replay_session) \
         SELECT printf('dlv_r%09d', i), 'bench', 'evt_r', 'bench', 'ep-1', 'fl-1', 'tg-1', \
           'async_inline', 'pending', 5, ?3 - 3600000, ?3 - 3600000, ?3 - 3600000, 's-bench' FROM seq"
    };
    macro_rules! run_seed {
        ($pool:expr) => {{
            let pool = $pool;
            let mut done = 0i64;
            while done < deliveries {
                let hi = (done + BATCH).min(deliveries) - 1;
                sqlx::query(&insert)
                    .bind(done)
                    .bind(hi)
                    .bind(now)
                    .execute(&pool)
                    .await?;
                done = hi + 1;
            }
            sqlx::query(replays)
                .bind(0i64)
                .bind(499i64)
                .bind(now)
                .execute(&pool)
                .await?;
            for statement in fixture(pg) {
                sqlx::query(&statement).bind(now).execute(&pool).await?;
            }
            sqlx::query(if pg { "VACUUM ANALYZE" } else { "ANALYZE" })
                .execute(&pool)
                .await?;
            pool.close().await;
        }};
    }
    if pg {
        run_seed!(sqlx::PgPool::connect(&db.url()).await?);
    } else {
        run_seed!(sqlx::SqlitePool::connect(&db.url()).await?);
    }
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let (deliveries, server) = args()?;
    let db = BenchDb::create(server.as_deref(), "diagnostics").await?;
    println!(
        "switchyard-diagnostics-bench: deliveries={deliveries} on {}",
        if db.is_postgres() {
            "PostgreSQL"
        } else {
            "SQLite (WAL)"
        }
    );
    let mut tenants = Tenants::default();
    tenants.add("bench", TOKEN);
    let mut config = ServerConfig::new(
        SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        db.url(),
        tenants,
    );
    // Nothing may change the fixture while it is measured.
    config.delivery.run_worker = false;
    config.main_key_file = db.main_key_file()?;
    let server = Server::start(config).await?;
    let now = chrono::Utc::now().timestamp_millis();
    let started = Instant::now();
    seed(&db, deliveries, now).await?;
    println!(
        "seeded {deliveries} deliveries (+500 re-deliveries) in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let client = reqwest::Client::builder().no_proxy().build()?;
    let base = server.url();
    let found: serde_json::Value = client
        .get(format!("{base}/v1/diagnostics"))
        .bearer_auth(TOKEN)
        .send()
        .await?
        .json()
        .await?;
    let findings = found["findings"].as_array().context("findings")?;
    let mut classes: Vec<&str> = findings
        .iter()
        .filter_map(|f| f["class"].as_str())
        .collect();
    classes.dedup();
    println!("findings: {} ({})", findings.len(), classes.join(", "));
    for class in [
        "stuck_delivery",
        "edge_unreachable",
        "failing_target",
        "disabled_endpoint_backlog",
        "stalled_replay",
        "dlq_counter_drift",
    ] {
        anyhow::ensure!(
            findings.iter().any(|f| f["class"] == class),
            "no {class} finding: the fixture is wrong"
        );
    }
    let runs = 100;
    let (h50, h95) = latency(&client, &format!("{base}/healthz"), TOKEN, runs).await?;
    println!("baseline GET /healthz:     p50 {h50:>7.2} ms   p95 {h95:>7.2} ms");
    let (p50, p95) = latency(&client, &format!("{base}/v1/diagnostics"), TOKEN, runs).await?;
    println!(
        "GET /v1/diagnostics:       p50 {p50:>7.2} ms   p95 {p95:>7.2} ms   (target p95 < {TARGET_P95_MS} ms: {})",
        if p95 < TARGET_P95_MS { "met" } else { "MISSED" }
    );
    server.stop().await?;
    db.drop_database().await?;
    Ok(())
}
