//! `switchyard-cp-bench`: what the Idempotency-Key bookkeeping costs.
//!
//! Measures, in one run on loopback: a keyed create, the same create handler with the
//! bookkeeping switched off (the baseline), and a keyed replay, at 1 and 16 concurrent
//! clients. Rounds alternate between the variants and the median round is reported, so
//! machine noise hits all of them alike. Figures are printed as ratios to the baseline; on
//! PostgreSQL each round also reports the write-ahead log it wrote per request, which noise does
//! not move.
//!
//! `BENCH_DB=postgres://USER@HOST:PORT` runs the same on PostgreSQL (each server on a new
//! database of its own, dropped at the end); otherwise SQLite.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

#[path = "support/bench_db.rs"]
mod bench_db;
use bench_db::BenchDb;
use switchyard_control_plane::extract::Tenants;
use switchyard_control_plane::{Server, ServerConfig};

const TOKEN: &str = "bench-token-0001";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Variant {
    Plain,
    Keyed,
    Replay,
}

impl Variant {
    fn label(self) -> &'static str {
        match self {
            Variant::Plain => "create, no idempotency bookkeeping (baseline)",
            Variant::Keyed => "create with Idempotency-Key",
            Variant::Replay => "replay of a completed key",
        }
    }
}

struct Round {
    rps: f64,
    p50_us: f64,
    p99_us: f64,
    /// PostgreSQL only: bytes of write-ahead log per request — what a request makes the
    /// database write and flush, a figure the machine's noise does not move.
    wal_per_request: Option<f64>,
}

/// Reads PostgreSQL's write-ahead log position, so a round's WAL volume can be told.
struct WalMeter(Option<tokio::sync::Mutex<sqlx::PgConnection>>);

impl WalMeter {
    async fn connect(server: Option<&str>) -> anyhow::Result<Self> {
        use sqlx::Connection;
        Ok(Self(match server {
            Some(url) => Some(tokio::sync::Mutex::new(
                sqlx::PgConnection::connect(url).await?,
            )),
            None => None,
        }))
    }

    async fn position(&self) -> anyhow::Result<Option<i64>> {
        let Some(conn) = &self.0 else { return Ok(None) };
        let lsn = sqlx::query_scalar("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint")
            .fetch_one(&mut *conn.lock().await)
            .await?;
        Ok(Some(lsn))
    }
}

async fn start(require_key: bool, db: &BenchDb) -> anyhow::Result<Server> {
    let mut tenants = Tenants::default();
    tenants.add("bench", TOKEN);
    let mut config = ServerConfig::new("127.0.0.1:0".parse()?, db.url(), tenants).local_only();
    config.idempotency.require_key = require_key;
    config.main_key_file = db.main_key_file()?;
    Server::start(config).await
}

/// Runs `clients` concurrent loops of `per_client` sequential requests.
async fn round(
    base: &str,
    variant: Variant,
    clients: usize,
    per_client: usize,
    seq: Arc<AtomicU64>,
) -> anyhow::Result<Round> {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(clients)
        .build()?;
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (client, base, seq) = (client.clone(), base.to_owned(), seq.clone());
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::with_capacity(per_client);
            for _ in 0..per_client {
                let n = seq.fetch_add(1, Ordering::Relaxed);
                let (name, key) = match variant {
                    Variant::Replay => ("replayed".to_owned(), "replay-key".to_owned()),
                    _ => (format!("ep-{n}"), format!("key-{n}")),
                };
                let mut request = client
                    .post(format!("{base}/v1/endpoints"))
                    .bearer_auth(TOKEN)
                    .json(&json!({"name": name, "spec": {"description": "bench endpoint", "event_types": ["a.b"]}}));
                if variant != Variant::Plain {
                    request = request.header("idempotency-key", key);
                }
                let t = Instant::now();
                let response = request.send().await?;
                let status = response.status().as_u16();
                response.bytes().await?;
                latencies.push(t.elapsed());
                anyhow::ensure!(status == 201, "{variant:?}: HTTP {status}");
            }
            anyhow::Ok(latencies)
        }));
    }
    let mut all: Vec<Duration> = Vec::new();
    for task in tasks {
        all.extend(task.await??);
    }
    let elapsed = started.elapsed().as_secs_f64();
    all.sort_unstable();
    let pct =
        |p: f64| all[((all.len() as f64 * p) as usize).min(all.len() - 1)].as_secs_f64() * 1e6;
    Ok(Round {
        rps: all.len() as f64 / elapsed,
        p50_us: pct(0.50),
        p99_us: pct(0.99),
        wal_per_request: None,
    })
}

fn median(mut rounds: Vec<Round>) -> Round {
    rounds.sort_by(|a, b| a.rps.total_cmp(&b.rps));
    rounds.swap_remove(rounds.len() / 2)
}

/// A count from the environment variable `name`, `default` when unset or not a number.
fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The two servers, each on a database of its own: `plain` without the bookkeeping (the
/// baseline), `keyed` for the keyed creates and the replays; `seq` numbers every request.
struct Servers {
    plain_db: BenchDb,
    keyed_db: BenchDb,
    plain: Server,
    keyed: Server,
    seq: Arc<AtomicU64>,
    wal: WalMeter,
}

impl Servers {
    async fn start(server: Option<&str>) -> anyhow::Result<Self> {
        let (plain_db, keyed_db) = (
            BenchDb::create(server, "plain").await?,
            BenchDb::create(server, "keyed").await?,
        );
        let plain = start(false, &plain_db).await?;
        let keyed = start(true, &keyed_db).await?;
        let seq = Arc::new(AtomicU64::new(0));
        // The replayed key completes once up front.
        round(&keyed.url(), Variant::Replay, 1, 1, seq.clone()).await?;
        Ok(Self {
            plain_db,
            keyed_db,
            plain,
            keyed,
            seq,
            wal: WalMeter::connect(server).await?,
        })
    }

    fn url(&self, variant: Variant) -> String {
        if variant == Variant::Plain {
            self.plain.url()
        } else {
            self.keyed.url()
        }
    }

    async fn run(
        &self,
        variant: Variant,
        clients: usize,
        per_client: usize,
    ) -> anyhow::Result<Round> {
        let before = self.wal.position().await?;
        let mut round = round(
            &self.url(variant),
            variant,
            clients,
            per_client,
            self.seq.clone(),
        )
        .await?;
        // Rounds run one at a time, so the log written meanwhile is this round's (plus the
        // idle servers' few background writes).
        if let (Some(before), Some(after)) = (before, self.wal.position().await?) {
            round.wal_per_request = Some((after - before) as f64 / (clients * per_client) as f64);
        }
        Ok(round)
    }

    async fn stop(self) -> anyhow::Result<()> {
        self.plain.stop().await?;
        self.keyed.stop().await?;
        self.plain_db.drop_database().await?;
        self.keyed_db.drop_database().await?;
        Ok(())
    }
}

/// The median round of each variant at `clients` concurrent clients, after a warm-up.
async fn medians(
    servers: &Servers,
    clients: usize,
    rounds: usize,
    requests: usize,
) -> anyhow::Result<Vec<(Variant, Round)>> {
    // At least one request each, so small BENCH_REQUESTS values still measure something.
    let per_client = (requests / clients).max(1);
    let mut results: Vec<(Variant, Vec<Round>)> = [Variant::Plain, Variant::Keyed, Variant::Replay]
        .into_iter()
        .map(|v| (v, Vec::new()))
        .collect();
    // Warm-up, then alternate so drift and noise hit every variant alike.
    let warm_up = (per_client / 4).max(1);
    servers.run(Variant::Plain, clients, warm_up).await?;
    servers.run(Variant::Keyed, clients, warm_up).await?;
    for _ in 0..rounds {
        for (variant, out) in &mut results {
            out.push(servers.run(*variant, clients, per_client).await?);
        }
    }
    Ok(results.into_iter().map(|(v, r)| (v, median(r))).collect())
}

/// The table of one client count, each variant as a ratio to the first (the baseline).
fn print_table(clients: usize, medians: &[(Variant, Round)]) {
    let base = &medians[0].1;
    println!("{clients} concurrent client(s):");
    println!(
        "  {:<48} {:>9} {:>9} {:>9}  {:>14}  {:>10}",
        "variant", "req/s", "p50 µs", "p99 µs", "cost vs base", "WAL B/req"
    );
    for (variant, r) in medians {
        let wal = r
            .wal_per_request
            .map_or_else(|| "-".to_owned(), |b| format!("{b:.0}"));
        println!(
            "  {:<48} {:>9.0} {:>9.0} {:>9.0}  {:>13.2}×  {:>10}",
            variant.label(),
            r.rps,
            r.p50_us,
            r.p99_us,
            base.rps / r.rps,
            wal
        );
    }
    println!();
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let rounds = env_count("BENCH_ROUNDS", 5);
    let requests = env_count("BENCH_REQUESTS", 1600);
    let server = std::env::var("BENCH_DB").ok();
    let servers = Servers::start(server.as_deref()).await?;

    println!(
        "switchyard-cp-bench: {rounds} alternating rounds of {requests} requests per variant, median round shown"
    );
    let postgres = servers.keyed_db.is_postgres();
    if postgres {
        println!("(PostgreSQL, READ COMMITTED, loopback HTTP/1.1, client in the same process)\n");
    } else {
        println!(
            "(SQLite WAL, synchronous=NORMAL, loopback HTTP/1.1, client in the same process)\n"
        );
    }
    for clients in [1usize, 16] {
        print_table(
            clients,
            &medians(&servers, clients, rounds, requests).await?,
        );
    }
    let target = if postgres { "1.3" } else { "1.6" };
    println!(
        "cost vs base = baseline req/s ÷ variant req/s (target for the keyed create: at most {target}×)"
    );
    servers.stop().await
}
