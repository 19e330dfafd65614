//! `switchyard-diagnostics-bench`: latency of `GET /v1/diagnostics` for a tenant with N
//! deliveries (default 1,000,000), against `GET /healthz` measured in the same run. Of each
//! thousand deliveries 900 succeeded, 90 are dead (the DLQ, over 50 targets and the last
//! day), 8 pending (endpoint `ep-0` of ten is disabled), 1 a relay waiting for an edge that
//! never leased, 1 in flight with a lease that expired an hour ago; plus 500 overdue
//! re-deliveries of a replay session, five failing targets and one tampered DLQ counter: every
//! class has something to find, so every check does its whole work.
//!
//! Usage: switchyard-diagnostics-bench [--deliveries N] [--db postgres://USER@HOST:PORT]

use std::time::Instant;

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

/// An endpoint or target of tenant `bench` (`now`: the parameter holding the time).
fn resource(kind: &str, name: &str, spec: &str, status: &str, now: &str) -> String {
    format!(
        "INSERT INTO resources (tenant, kind, name, version, spec, status, created_at, updated_at) \
         VALUES ('bench', '{kind}', '{name}', 1, '{spec}', '{status}', {now}, {now})"
    )
}

/// Endpoint `ep-{n}`; `ep-0` is the disabled one, holding the pending deliveries.
fn endpoint(n: usize, enabled: bool, now: &str) -> String {
    let status = format!("{{\"enabled\": {enabled}, \"pending_deliveries\": 0}}");
    resource("endpoint", &format!("ep-{n}"), "{}", &status, now)
}

/// Target `tg-{n}`.
fn target(n: usize, now: &str) -> String {
    let spec = "{\"url\": \"http://192.0.2.1/hook\", \"timeout_ms\": 1000}";
    resource("target", &format!("tg-{n}"), spec, "{}", now)
}

/// Target `tg-{n}`'s health row: failing for an hour when `failing`, else healthy.
fn target_health(n: usize, failing: bool, now: &str) -> String {
    format!(
        "INSERT INTO delivery_health (tenant, dimension, name, consecutive_failures, failing_since, \
         last_success_at, last_failure_at, last_error_class, last_error) VALUES ('bench', 'target', 'tg-{n}', \
         {}, {}, {now} - 7200000, {now} - 60000, 'http_5xx', 'receiver answered HTTP 503')",
        if failing { 25 } else { 0 },
        if failing {
            format!("{now} - 3600000")
        } else {
            "NULL".into()
        },
    )
}

/// The replay session the overdue re-deliveries belong to.
fn replay_session(pg: bool, now: &str) -> String {
    let fingerprint = if pg { "'\\x00'::bytea" } else { "x'00'" };
    let request = "{\"selection\": {\"filter\": {}}}";
    format!(
        "INSERT INTO replay_sessions (tenant, id, fingerprint, request, created_at) \
         VALUES ('bench', 's-bench', {fingerprint}, '{request}', {now})"
    )
}

/// One DLQ counter off by one (`tg-7`'s oldest hour).
const DLQ_DRIFT: &str = "UPDATE dlq_counts SET count = count + 1 WHERE tenant = 'bench' AND target = 'tg-7' \
     AND hour = (SELECT MIN(hour) FROM dlq_counts WHERE tenant = 'bench' AND target = 'tg-7')";

/// The fixture around the deliveries: resources, failing targets' health rows, the replay
/// session and its overdue re-deliveries, one DLQ counter off by one.
fn fixture(pg: bool) -> Vec<String> {
    let now = if pg { "$1" } else { "?1" };
    let mut out = vec![
        endpoint(0, false, now),
        replay_session(pg, now),
        DLQ_DRIFT.to_owned(),
    ];
    out.extend((1..10).map(|n| endpoint(n, true, now)));
    for n in 0..50 {
        out.push(target(n, now));
        out.push(target_health(n, n < 5, now));
    }
    out
}

/// The deliveries' insert, for the numbers `?1`/`$1` to `?2`/`$2`.
fn deliveries_insert(pg: bool) -> String {
    if pg {
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
    }
}

/// The replay's re-deliveries: pending, due an hour ago, nobody sending them.
fn replays_insert(pg: bool) -> &'static str {
    if pg {
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
    }
}

async fn seed(db: &BenchDb, deliveries: i64, now: i64) -> anyhow::Result<()> {
    let pg = db.is_postgres();
    let pool = SeedPool::connect(db).await?;
    pool.in_batches(&deliveries_insert(pg), deliveries, BATCH, now)
        .await?;
    let replays = [0, 499, now].map(Param::Int);
    pool.execute(replays_insert(pg), &replays).await?;
    for statement in fixture(pg) {
        pool.execute(&statement, &[Param::Int(now)]).await?;
    }
    pool.execute(if pg { "VACUUM ANALYZE" } else { "ANALYZE" }, &[])
        .await?;
    pool.close().await;
    Ok(())
}

/// Every class of finding the fixture plants.
const CLASSES: [&str; 6] = [
    "stuck_delivery",
    "edge_unreachable",
    "failing_target",
    "disabled_endpoint_backlog",
    "stalled_replay",
    "dlq_counter_drift",
];

/// Prints what `GET /v1/diagnostics` finds; fails unless it finds every class planted.
async fn check_findings(client: &reqwest::Client, base: &str) -> anyhow::Result<()> {
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
    for class in CLASSES {
        anyhow::ensure!(
            findings.iter().any(|f| f["class"] == class),
            "no {class} finding: the fixture is wrong"
        );
    }
    Ok(())
}

/// `GET /v1/diagnostics` latency, after `GET /healthz`'s as the baseline.
async fn measure(client: &reqwest::Client, base: &str) -> anyhow::Result<()> {
    let runs = 100;
    let (h50, h95) = latency(client, &format!("{base}/healthz"), TOKEN, runs).await?;
    println!("baseline GET /healthz:     p50 {h50:>7.2} ms   p95 {h95:>7.2} ms");
    let (p50, p95) = latency(client, &format!("{base}/v1/diagnostics"), TOKEN, runs).await?;
    println!(
        "GET /v1/diagnostics:       p50 {p50:>7.2} ms   p95 {p95:>7.2} ms   (target p95 < {TARGET_P95_MS} ms: {})",
        if p95 < TARGET_P95_MS { "met" } else { "MISSED" }
    );
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let (deliveries, server) = args()?;
    let (db, server) = idle_server::open(
        "diagnostics",
        &format!("deliveries={deliveries}"),
        server.as_deref(),
        TOKEN,
    )
    .await?;
    let now = chrono::Utc::now().timestamp_millis();
    let started = Instant::now();
    seed(&db, deliveries, now).await?;
    println!(
        "seeded {deliveries} deliveries (+500 re-deliveries) in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let client = reqwest::Client::builder().no_proxy().build()?;
    let base = server.url();
    check_findings(&client, &base).await?;
    measure(&client, &base).await?;
    server.stop().await?;
    db.drop_database().await?;
    Ok(())
}
