//! `switchyard-control-plane serve …`

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};
use switchyard_control_plane::delivery::addresses::Cidr;
use switchyard_control_plane::delivery::schedule::parse_duration;
use switchyard_control_plane::demo::{self, DEMO_TENANT, DEMO_TOKEN};
use switchyard_control_plane::extract::{MAX_BODY_BYTES, Tenants};
use switchyard_control_plane::limits::{Limits, Rate};
use switchyard_control_plane::replays::MAX_FILTER_SELECTION;
use switchyard_control_plane::telemetry::{MetricsConfig, MetricsToken};
use switchyard_control_plane::{Server, ServerConfig};
use tracing_subscriber::EnvFilter;

#[derive(Parser)]
#[command(
    name = "switchyard-control-plane",
    version = switchyard_build_info::LONG_VERSION,
    about = "The Switchyard reference control plane"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the HTTP API.
    Serve(Box<ServeArgs>),
    /// Run an edge plane: deliver a control plane's async_relay flows that name this edge.
    Edge(EdgeArgs),
    /// Add a new main key and re-seal every secret at rest under it (resumable: run it
    /// again after an interruption to finish). Stop the control plane first, or restart
    /// every replica with the new key file right after.
    RotateMainKey(RotateArgs),
}

/// The database and its main key: `serve` and `rotate-main-key` name them the same way.
#[derive(clap::Args)]
struct StoreArgs {
    /// Database URL: sqlite://PATH (created if missing; one process), or
    /// postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE (any number of replicas share it).
    /// Prefer SWITCHYARD_DB for a URL with a password: it stays out of `ps`.
    #[arg(
        long,
        env = "SWITCHYARD_DB",
        hide_env_values = true,
        default_value = "sqlite://cp.db"
    )]
    db: String,
    /// The main key file that seals signing secrets and stored responses at rest (one
    /// `<id> <base64 key>` per line). Default: `<db>.main-key` beside a SQLite database,
    /// created (0600) when missing; required for PostgreSQL (every replica the same file).
    #[arg(long, env = "SWITCHYARD_MAIN_KEY_FILE")]
    main_key_file: Option<PathBuf>,
}

#[derive(clap::Args)]
struct RotateArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// Remove the keys no value uses any more from the file once everything is re-sealed.
    #[arg(long)]
    drop_old_keys: bool,
}

#[derive(clap::Args)]
struct EdgeArgs {
    /// Base URL of the control plane.
    #[arg(long)]
    control_plane: String,
    /// The tenant's bearer token (prefer SWITCHYARD_EDGE_TOKEN: keeps it out of `ps`).
    #[arg(long, env = "SWITCHYARD_EDGE_TOKEN", hide_env_values = true)]
    token: String,
    /// This edge's name, as flows name it in spec.edge.
    #[arg(long)]
    name: String,
    /// Attempts sent at once.
    #[arg(long, default_value_t = 32)]
    concurrency: usize,
    /// Sleep between leases when idle.
    #[arg(long, default_value = "200ms", value_parser = parse_duration)]
    poll: Duration,
    /// Delays before each try of an outcome report to the control plane.
    #[arg(long, default_value = "0s,10s,1m,10m,1h")]
    retry_schedule: String,
    /// On SIGTERM or Ctrl-C, how long to let the attempts in flight finish and report
    /// before exiting (what is left then is reported as interrupted and retried at once).
    /// A second signal exits at once.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    drain_timeout: Duration,
    /// Let webhooks go to loopback, private (10/8, 172.16/12, 192.168/16, fc00::/7),
    /// link-local (169.254/16, fe80::/10) and other non-public addresses, which are refused
    /// by default (forbidden_address). For receivers on this host or its private network.
    #[arg(long)]
    allow_private_targets: bool,
    /// Refuse webhooks to this address range (CIDR, e.g. 10.20.0.0/16 or fd00:ec2::/32; a
    /// bare address is one address) even with --allow-private-targets: at save for an IP
    /// literal, at connect time for the address a name resolves to. Repeatable.
    #[arg(long = "forbid-cidr", value_name = "CIDR", value_parser = Cidr::parse)]
    forbid_cidrs: Vec<Cidr>,
}

#[derive(clap::Args)]
struct ServeArgs {
    /// Address to listen on (port 0 picks a free port; the chosen URL is printed).
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    #[command(flatten)]
    store: StoreArgs,
    /// Most connections this process opens to PostgreSQL.
    #[arg(long, default_value_t = 16)]
    db_max_connections: u32,
    /// A tenant and its bearer token, NAME:TOKEN. Repeatable. Prefer --tenants-file or
    /// SWITCHYARD_TENANTS so tokens stay out of the process list.
    #[arg(long = "tenant", value_name = "NAME:TOKEN")]
    tenants: Vec<String>,
    /// A file with one NAME:TOKEN per line (# comments allowed).
    #[arg(long, value_name = "PATH")]
    tenants_file: Option<PathBuf>,
    /// How long completed Idempotency-Keys are kept, e.g. 24h, 30m, 90s.
    #[arg(long, default_value = "24h", value_parser = parse_duration)]
    idempotency_retention: Duration,
    /// How long an in-progress key is leased before a retry may take it over.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    idempotency_lease: Duration,
    /// How often expired keys are swept.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    sweep_every: Duration,
    /// Delivery retry schedule: the delay before each attempt.
    #[arg(long)]
    retry_schedule: Option<String>,
    /// Seed demo endpoints, targets and flows for a tenant named `demo` if it has none,
    /// run the built-in demo receiver on loopback and a trickle of demo events. Unless
    /// --retry-schedule is given, the demo uses the faster schedule 0s,2s,10s,30s,1m.
    #[arg(long)]
    demo: bool,
    /// Added to a target's timeout to form an attempt's lease; an attempt whose lease
    /// expires unrecorded counts as failed (timeout) and is retried.
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    delivery_lease_margin: Duration,
    /// A due async_relay attempt that no edge leases within this time counts as failed.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    edge_pickup_timeout: Duration,
    /// How often the worker advances the open retirements (drain checks, grace periods).
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    retirement_every: Duration,
    /// Run no delivery worker in this process (events are accepted; another process
    /// sharing the database delivers).
    #[arg(long)]
    no_worker: bool,
    /// On SIGTERM or Ctrl-C, how long to wait for requests and attempts in progress to
    /// finish before exiting (attempts still in flight then are released: due again at
    /// once, for another replica or the next start). A second signal exits at once.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    drain_timeout: Duration,
    /// This process's worker name, recorded as `performed_by` of its attempts (default:
    /// `worker-` and a random id). Name replicas to tell their attempts apart.
    #[arg(long)]
    worker_id: Option<String>,
    /// Let targets point at loopback, private (10/8, 172.16/12, 192.168/16, fc00::/7),
    /// link-local (169.254/16, fe80::/10) and other non-public addresses. By default a
    /// target naming one is refused (400 target_address_forbidden) and a delivery whose
    /// name resolves to one fails (forbidden_address). --demo implies it.
    #[arg(long)]
    allow_private_targets: bool,
    /// Refuse webhooks to this address range (CIDR, e.g. 10.20.0.0/16 or fd00:ec2::/32; a
    /// bare address is one address) even with --allow-private-targets: at save for an IP
    /// literal, at connect time for the address a name resolves to. Repeatable.
    #[arg(long = "forbid-cidr", value_name = "CIDR", value_parser = Cidr::parse)]
    forbid_cidrs: Vec<Cidr>,
    /// Trust the CA certificates of this PEM file for HTTPS receivers' server certificates,
    /// besides the web PKI's roots (receivers with a private CA). May be given more than once.
    #[arg(long, value_name = "FILE")]
    target_ca_file: Vec<std::path::PathBuf>,
    /// Largest request body in bytes (413 payload_too_large).
    #[arg(long, value_name = "BYTES", default_value_t = MAX_BODY_BYTES)]
    max_body_bytes: usize,
    /// Largest request line plus headers in bytes (431 headers_too_large).
    #[arg(long, value_name = "BYTES", default_value_t = 16 * 1024)]
    max_header_bytes: usize,
    /// How long a connection may take to send a request's line and headers, and how long
    /// an idle keep-alive connection is kept; then it is closed (0s: no limit).
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    header_read_timeout: Duration,
    /// How long a request may take, body included, before it answers 503 unavailable
    /// (0s: no limit). A keyed write cut off this way still completes and is stored.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    request_timeout: Duration,
    /// Mutating calls (resources, target tests, replays) per tenant on this replica: N/s,
    /// N/m or N; 0 turns the limit off. Over it: 429 rate_limited with Retry-After.
    #[arg(long, value_name = "RATE", default_value = "100/s", value_parser = Rate::parse_per_s)]
    rate_limit_writes: f64,
    /// Writes a tenant may send at once (default: two seconds' worth of the rate).
    #[arg(long, value_name = "N")]
    rate_limit_writes_burst: Option<u32>,
    /// POST /v1/events per tenant on this replica: N/s, N/m or N; 0 turns the limit off.
    #[arg(long, value_name = "RATE", default_value = "1000/s", value_parser = Rate::parse_per_s)]
    rate_limit_events: f64,
    /// Events a tenant may send at once (default: two seconds' worth of the rate).
    #[arg(long, value_name = "N")]
    rate_limit_events_burst: Option<u32>,
    /// Requests with an unknown bearer token per client address, after a burst of 20:
    /// N/s, N/m or N; 0 turns the limit off.
    #[arg(long, value_name = "RATE", default_value = "1/s", value_parser = Rate::parse_per_s)]
    rate_limit_failed_auth: f64,
    /// Most dead deliveries one filter replay session selects (oldest death first).
    #[arg(long, value_name = "N", default_value_t = MAX_FILTER_SELECTION,
          value_parser = clap::value_parser!(u32).range(1..))]
    max_replay_selection: u32,
    /// Serve GET /metrics (Prometheus) on this address instead of on --listen's.
    #[arg(long, value_name = "ADDR")]
    metrics_listen: Option<SocketAddr>,
    /// A file holding the bearer token GET /metrics requires (without it, /metrics needs no
    /// token: it carries no tenant names then).
    #[arg(long, value_name = "PATH")]
    metrics_token_file: Option<PathBuf>,
    /// Label the metrics' gauges and event and delivery counters with tenant names.
    #[arg(long, requires = "metrics_token_file")]
    metrics_tenant_labels: bool,
    /// GET /v1/diagnostics: how long after its lease expired an in-flight delivery is
    /// reported stuck (a running worker takes an expired lease back within a second).
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    diagnose_stuck_after: Duration,
    /// GET /v1/diagnostics: how long an edge may go without leasing, while relay deliveries
    /// wait for it, before it is reported unreachable.
    #[arg(long, default_value = "2m", value_parser = parse_duration)]
    diagnose_edge_silence: Duration,
    /// GET /v1/diagnostics: how long a replay session's re-delivery may stay due and unsent
    /// before the session is reported stalled.
    #[arg(long, default_value = "5m", value_parser = parse_duration)]
    diagnose_replay_stall: Duration,
    /// GET /v1/diagnostics: consecutive failed attempts that make a target failing.
    #[arg(long, value_name = "N", default_value_t = 5,
          value_parser = clap::value_parser!(u32).range(1..))]
    diagnose_failure_run: u32,
}

/// The metrics flags, checked (the token file is read here; the token is never logged).
fn metrics(args: &ServeArgs) -> anyhow::Result<MetricsConfig> {
    let token = match &args.metrics_token_file {
        Some(path) => Some(MetricsToken::from_file(path)?),
        None => None,
    };
    Ok(MetricsConfig {
        tenant_labels: args.metrics_tenant_labels,
        token,
        listen: args.metrics_listen,
    })
}

/// The limits flags, checked.
fn limits(args: &ServeArgs) -> anyhow::Result<Limits> {
    if args.max_body_bytes == 0 {
        bail!("--max-body-bytes must be at least 1");
    }
    if args.max_header_bytes < 1024 {
        bail!("--max-header-bytes must be at least 1024");
    }
    let rate = |per_s: f64, burst: Option<u32>| {
        let mut rate = Rate::per_second(per_s);
        if let Some(burst) = burst.filter(|_| !rate.is_off()) {
            rate.burst = burst.max(1);
        }
        rate
    };
    Ok(Limits {
        max_body_bytes: args.max_body_bytes,
        max_header_bytes: args.max_header_bytes,
        header_read_timeout: args.header_read_timeout,
        request_timeout: args.request_timeout,
        writes: rate(args.rate_limit_writes, args.rate_limit_writes_burst),
        events: rate(args.rate_limit_events, args.rate_limit_events_burst),
        failed_auth: rate(args.rate_limit_failed_auth, Some(20)),
        max_replay_selection: args.max_replay_selection,
    })
}

const DEFAULT_SCHEDULE: &str = "0s,10s,1m,10m,1h";
use switchyard_control_plane::demo::DEMO_SCHEDULE;

fn load_tenants(args: &ServeArgs) -> anyhow::Result<Tenants> {
    let mut entries: Vec<String> = args.tenants.clone();
    if let Ok(env) = std::env::var("SWITCHYARD_TENANTS") {
        entries.extend(
            env.split(',')
                .filter(|e| !e.trim().is_empty())
                .map(str::to_owned),
        );
    }
    if let Some(path) = &args.tenants_file {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        entries.extend(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(str::to_owned),
        );
    }
    if args.demo {
        return demo_tenants(args, &entries);
    }
    let mut tenants = Tenants::default();
    for entry in entries {
        let (name, token) = Tenants::parse_entry(&entry).map_err(anyhow::Error::msg)?;
        tenants.try_add(&name, &token).map_err(anyhow::Error::msg)?;
    }
    Ok(tenants)
}

/// `--demo` serves a tenant whose token is printed in the README and lets webhooks reach
/// private addresses: fit for this machine only. It is refused beside real tenants (they
/// would share a server that reaches the private network) and on a listener other machines
/// can reach (anyone could use the public token).
fn demo_tenants(args: &ServeArgs, entries: &[String]) -> anyhow::Result<Tenants> {
    if !entries.is_empty() {
        bail!(
            "--demo cannot be combined with --tenant, --tenants-file or SWITCHYARD_TENANTS: the demo \
             tenant's token is public and the demo lets webhooks reach private addresses; run real \
             tenants on a server without --demo"
        );
    }
    if !args.listen.ip().is_loopback() {
        bail!(
            "--demo needs a loopback --listen (127.0.0.1 or [::1]), not {}: the demo tenant's token \
             is public, so other machines must not reach it",
            args.listen
        );
    }
    tracing::warn!(
        "demo mode: the only tenant is {DEMO_TENANT:?} with the public token {DEMO_TOKEN:?}; \
         loopback only (requests whose Host is not a loopback name are refused); webhooks may \
         go to loopback, private and link-local addresses"
    );
    let mut tenants = Tenants::default();
    tenants.add(DEMO_TENANT, DEMO_TOKEN);
    Ok(tenants)
}

/// The server's configuration from `serve`'s flags.
fn server_config(args: &ServeArgs, tenants: Tenants) -> anyhow::Result<ServerConfig> {
    let schedule_text = args.retry_schedule.clone().unwrap_or_else(|| {
        if args.demo {
            DEMO_SCHEDULE
        } else {
            DEFAULT_SCHEDULE
        }
        .to_owned()
    });
    let schedule = switchyard_control_plane::delivery::schedule::parse_schedule(&schedule_text)
        .map_err(anyhow::Error::msg)
        .context("--retry-schedule")?;
    let mut config = ServerConfig::new(args.listen, &args.store.db, tenants);
    config.idempotency.retention = args.idempotency_retention;
    config.idempotency.lease = args.idempotency_lease;
    config.sweep_every = args.sweep_every;
    config.delivery.schedule = schedule;
    config.delivery.lease_margin = args.delivery_lease_margin;
    config.delivery.edge_pickup_timeout = args.edge_pickup_timeout;
    config.delivery.retirement_every = args.retirement_every;
    config.delivery.run_worker = !args.no_worker;
    config.loopback_hosts_only = args.demo;
    // The demo's receiver is on loopback; every other server forbids private targets
    // unless told otherwise.
    config.delivery.allow_private_targets = args.allow_private_targets || args.demo;
    config.delivery.forbid_cidrs = args.forbid_cidrs.clone();
    if config.delivery.allow_private_targets {
        tracing::warn!(
            "private targets allowed: webhooks may go to loopback, private and link-local addresses"
        );
    }
    for file in &args.target_ca_file {
        let pem = std::fs::read_to_string(file)
            .map_err(|e| anyhow::anyhow!("--target-ca-file {}: {e}", file.display()))?;
        config.delivery.target_roots_pem.push(pem);
    }
    if let Some(worker_id) = &args.worker_id {
        config.delivery.worker_id = worker_id.clone();
    }
    config.db_max_connections = args.db_max_connections;
    config.main_key_file = args.store.main_key_file.clone();
    config.limits = limits(args)?;
    config.metrics = metrics(args)?;
    config.diagnostics = switchyard_control_plane::diagnostics::DiagnosticsConfig {
        stuck_after: args.diagnose_stuck_after,
        edge_silence: args.diagnose_edge_silence,
        replay_stall: args.diagnose_replay_stall,
        failure_run: args.diagnose_failure_run,
        ..Default::default()
    };
    Ok(config)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let args = match Cli::parse().command {
        Command::Serve(args) => *args,
        Command::Edge(args) => return run_edge(args).await,
        Command::RotateMainKey(args) => return rotate_main_key(args).await,
    };
    let tenants = load_tenants(&args)?;
    if tenants.is_empty() && !args.demo {
        bail!("no tenants: pass --tenant NAME:TOKEN, --tenants-file PATH or SWITCHYARD_TENANTS");
    }
    let config = server_config(&args, tenants)?;
    #[cfg(feature = "fault-injection")]
    let config = {
        let mut config = config;
        arm_fault_injection(&mut config)?;
        config
    };
    let server = Server::start(config).await?;
    println!("switchyard control plane listening on {}", server.url());
    if server.metrics_addr.is_some() {
        println!("metrics on {}", server.metrics_url());
    }
    let _demo = if args.demo {
        let runtime = demo::start(&server, Duration::from_secs(2)).await?;
        println!("demo receiver on {}", runtime.receiver.base_url());
        println!("demo tenant {DEMO_TENANT:?}: export SWITCHYARD_TOKEN={DEMO_TOKEN}");
        println!(
            "try: curl -H \"Authorization: Bearer {DEMO_TOKEN}\" {}/v1/flows",
            server.url()
        );
        Some(runtime)
    } else {
        None
    };
    server
        .run_until(first_of_two_signals(), args.drain_timeout)
        .await
}

/// Resolves on the first stop signal, and makes a second one end the process at once
/// (an operator who does not want to wait for the drain).
async fn first_of_two_signals() {
    shutdown_signal().await;
    tokio::spawn(async {
        shutdown_signal().await;
        eprintln!("second stop signal: exiting now without finishing the drain");
        std::process::exit(130);
    });
}

/// SIGINT (Ctrl-C) or SIGTERM (what `systemctl stop`, Kubernetes and most supervisors send).
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Tests of the real binary: `SWITCHYARD_TEST_CRASH_AT` (`after_claim`, `after_effect`)
/// aborts the process when a keyed request reaches that point (`retirement_before:STATE`,
/// `retirement_after:STATE`: around the commit of a retirement's transition into STATE); `SWITCHYARD_TEST_FAULTS`, a
/// comma-separated list, removes guards for negative controls: `check_then_insert_key`,
/// `stale_claim`, `unguarded_event_key`, `unfenced_reap`, `unguarded_replay`,
/// `unguarded_requeue`, `unguarded_retirement`.
#[cfg(feature = "fault-injection")]
fn arm_fault_injection(config: &mut ServerConfig) -> anyhow::Result<()> {
    use switchyard_control_plane::hooks::{CrashAt, HookPoint};
    use switchyard_control_plane::idempotency::ClaimStrategy;
    if let Ok(point) = std::env::var("SWITCHYARD_TEST_CRASH_AT") {
        if let Some(crash) = switchyard_control_plane::retirement::CrashPoint::parse(&point) {
            config.delivery.retirement_crash = Some(crash);
        } else {
            let point = HookPoint::parse(&point).context(
                "SWITCHYARD_TEST_CRASH_AT must be after_claim, after_effect, retirement_before:STATE or retirement_after:STATE",
            )?;
            config.hooks = std::sync::Arc::new(CrashAt(point));
        }
    }
    let faults = std::env::var("SWITCHYARD_TEST_FAULTS").unwrap_or_default();
    for fault in faults.split(',').map(str::trim).filter(|f| !f.is_empty()) {
        match fault {
            "check_then_insert_key" => {
                config.idempotency.claim_strategy = ClaimStrategy::CheckThenInsert;
            }
            "stale_claim" => config.delivery.unsafe_stale_claim = true,
            "unguarded_event_key" => config.delivery.unguarded_event_dedup = true,
            "unfenced_reap" => config.delivery.unfenced_reap = true,
            "unguarded_replay" => config.delivery.unguarded_replay = true,
            "unguarded_requeue" => config.delivery.unguarded_requeue = true,
            "unguarded_retirement" => config.delivery.unguarded_retirement = true,
            other => bail!("SWITCHYARD_TEST_FAULTS: unknown fault {other:?}"),
        }
    }
    Ok(())
}

async fn run_edge(args: EdgeArgs) -> anyhow::Result<()> {
    let report_schedule =
        switchyard_control_plane::delivery::schedule::parse_schedule(&args.retry_schedule)
            .map_err(anyhow::Error::msg)
            .context("--retry-schedule")?;
    let config = switchyard_control_plane::edge::agent::EdgeConfig {
        control_plane: args.control_plane.trim_end_matches('/').to_owned(),
        token: args.token,
        name: args.name,
        concurrency: args.concurrency,
        idle_poll: args.poll,
        report_schedule,
        allow_private_targets: args.allow_private_targets,
        forbid_cidrs: args.forbid_cidrs,
    };
    println!(
        "switchyard edge plane {:?} relaying for {}",
        config.name, config.control_plane
    );
    switchyard_control_plane::edge::agent::run_until(
        config,
        first_of_two_signals(),
        args.drain_timeout,
    )
    .await
    .map(drop)
}

async fn rotate_main_key(args: RotateArgs) -> anyhow::Result<()> {
    let rotation = switchyard_control_plane::main_key_rotation::rotate(
        &args.store.db,
        args.store.main_key_file.as_deref(),
        args.drop_old_keys,
        4,
        |n| eprint!("\rre-sealed {n} values"),
    )
    .await?;
    eprintln!();
    if rotation.added {
        println!(
            "main key rotated: {} seals from now on ({} values re-sealed); key file {}",
            rotation.current,
            rotation.resealed,
            rotation.key_file.display()
        );
    } else {
        println!(
            "finished an interrupted rotation: {} values re-sealed under {}; run the command again to rotate once more",
            rotation.resealed, rotation.current
        );
    }
    if !rotation.old_keys.is_empty() {
        println!(
            "older keys kept in the file: {} (remove them with --drop-old-keys once every replica runs with this file)",
            rotation.old_keys.join(", ")
        );
    }
    println!("restart the control plane (every replica) with this key file now");
    Ok(())
}
