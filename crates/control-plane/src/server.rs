//! Building the router and running the server.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::trace::TraceLayer;
use utoipa_axum::router::OpenApiRouter;

use crate::clock::{Clock, SystemClock};
use crate::error::ApiError;
use crate::extract::Tenants;
use crate::head_errors::ProblemHeads;
use crate::hooks::{Hooks, NoHooks};
use crate::idempotency::{IdempotencyConfig, spawn_sweeper};
use crate::limits::{Limits, RateLimiter};
use crate::telemetry::{MetricsConfig, Telemetry};
use crate::{AppState, AppStateInner, resources, system};

/// Everything a control plane needs to start.
pub struct ServerConfig {
    pub listen: SocketAddr,
    /// A socket the embedder bound already (then `listen` is not used): the desktop binds
    /// its sandbox's port before the window opens, registers that URL, and starts the
    /// server afterwards; requests made in between wait in the socket's backlog.
    pub listener: Option<std::net::TcpListener>,
    /// `sqlite://path/to/cp.db` or `postgres://…`; the scheme picks the store's backend.
    pub db_url: String,
    /// Most connections to PostgreSQL (ignored by SQLite).
    pub db_max_connections: u32,
    pub tenants: Tenants,
    pub idempotency: IdempotencyConfig,
    /// How often expired idempotency keys are swept.
    pub sweep_every: Duration,
    pub clock: Arc<dyn Clock>,
    pub hooks: Arc<dyn Hooks>,
    /// The delivery pipeline's schedule, leases and worker settings.
    pub delivery: crate::delivery::DeliveryConfig,
    /// The main key file that seals secrets at rest; `None`: the file beside a SQLite
    /// database, created when missing (see [`crate::sealing::load`]).
    pub main_key_file: Option<std::path::PathBuf>,
    /// Body, header, time, rate and replay-selection limits (docs/control-plane.md, "Limits").
    pub limits: Limits,
    /// How `GET /metrics` is served (docs/prometheus.md): its token, tenant labels, listener.
    pub metrics: MetricsConfig,
    /// The thresholds of `GET /v1/diagnostics` (docs/recovery.md).
    pub diagnostics: crate::diagnostics::DiagnosticsConfig,
    /// Answer only requests whose `Host` names loopback ([`crate::host_guard`]): servers whose
    /// token is public (the sandbox, `serve --demo`), out of reach of DNS rebinding.
    pub loopback_hosts_only: bool,
}

impl ServerConfig {
    /// A control plane with every guard on: targets on private and loopback addresses are
    /// refused (`delivery.allow_private_targets`) and the rate limits of [`Limits::default`]
    /// hold. An embedder turns either off explicitly ([`ServerConfig::local_only`]).
    pub fn new(listen: SocketAddr, db_url: impl Into<String>, tenants: Tenants) -> Self {
        Self {
            listen,
            listener: None,
            db_url: db_url.into(),
            db_max_connections: crate::store::POSTGRES_POOL,
            tenants,
            idempotency: IdempotencyConfig::default(),
            sweep_every: Duration::from_secs(60),
            clock: Arc::new(SystemClock),
            hooks: Arc::new(NoHooks),
            delivery: crate::delivery::DeliveryConfig::default(),
            main_key_file: None,
            limits: Limits::default(),
            metrics: MetricsConfig::default(),
            diagnostics: crate::diagnostics::DiagnosticsConfig::default(),
            loopback_hosts_only: false,
        }
    }
}

impl ServerConfig {
    /// For a control plane whose receivers and callers are this machine's own — the
    /// desktop's sandbox, tests, benchmarks: targets on loopback and private addresses are
    /// allowed, and the rate limits are off (one local client drives it as fast as it likes).
    /// The body, header and time caps stay.
    pub fn local_only(mut self) -> Self {
        self.delivery.allow_private_targets = true;
        self.limits.writes = crate::limits::Rate::OFF;
        self.limits.events = crate::limits::Rate::OFF;
        self.limits.failed_auth = crate::limits::Rate::OFF;
        self
    }
}

/// What a drain did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DrainReport {
    /// Attempts the worker held when the drain began.
    pub in_flight: usize,
    /// Of those, how many were still unrecorded when time ran out and were released.
    pub released: usize,
    /// Whether requests still running at the deadline were cut off.
    pub requests_cut: bool,
}

/// Opens the store with its main key, checks that the key opens what the database holds
/// (a wrong key stops start-up here, never as garbage signatures later), and seals what is
/// not yet sealed under the current key (values from before sealing, or a rotation that was
/// interrupted).
async fn open_sealed_store(config: &ServerConfig) -> anyhow::Result<Arc<dyn crate::store::Store>> {
    let loaded = crate::sealing::load(&config.db_url, config.main_key_file.as_deref())?;
    if let (true, Some(path)) = (loaded.created, &loaded.path) {
        tracing::warn!(path = %path.display(),
            "created a main key file for secrets at rest (0600); back it up with the database: without it the signing secrets cannot be read");
    }
    let store = crate::store::open_with(
        &config.db_url,
        config.db_max_connections,
        Arc::new(loaded.sealer),
    )
    .await?;
    store.check_sealed().await.map_err(|e| {
        anyhow::anyhow!(
            "{e} (main key file: {})",
            loaded
                .path
                .as_deref()
                .map_or("none".into(), |p| p.display().to_string())
        )
    })?;
    let mut sealed = 0;
    loop {
        let n = store.reseal_batch(500).await?;
        if n == 0 {
            break;
        }
        sealed += n;
    }
    if sealed > 0 {
        tracing::info!(sealed, "sealed values under the current main key");
    }
    Ok(store)
}

/// HTTP/1.1 connection settings. The header-read timeout closes a connection that has not
/// sent a whole request head in time (slowloris) and an idle keep-alive connection alike.
/// Heads up to twice the cap reach `crate::limits::guard`, which answers 431 problem+json;
/// hyper refuses longer ones itself without buffering them (and `crate::head_errors` turns
/// its bare 431 into problem+json).
fn http1_settings(limits: &Limits) -> hyper::server::conn::http1::Builder {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(
            (!limits.header_read_timeout.is_zero()).then_some(limits.header_read_timeout),
        )
        .max_header_size(limits.max_header_bytes.saturating_mul(2).max(8192));
    http
}

/// How long a drain that ran out of time waits for the delivery worker to return from the
/// store call it is in (a claim takes milliseconds; only a hung database takes longer).
const WORKER_CUT_GRACE: Duration = Duration::from_secs(5);

/// Serves HTTP/1.1 until `shutdown` resolves (or its sender is dropped), then stops
/// accepting, lets every connection finish the request it is on (idle ones close at once)
/// and returns once all are closed: what `axum::serve(…).with_graceful_shutdown` does, with
/// the settings above, which axum::serve does not expose. [`Server::drain`] bounds the wait.
async fn serve(
    listener: TcpListener,
    app: Router,
    http: hyper::server::conn::http1::Builder,
    max_header_bytes: usize,
    mut shutdown: oneshot::Receiver<()>,
) -> std::io::Result<()> {
    let (stop_tx, stop_rx) = watch::channel(false);
    // Every connection task holds a receiver; `closed()` resolves when the last one ends.
    let (open_tx, open_rx) = watch::channel(());
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Per-connection failures are the peer's; others (out of file
                    // descriptors) clear up with time, as axum::serve also assumes.
                    if !matches!(
                        e.kind(),
                        std::io::ErrorKind::ConnectionRefused
                            | std::io::ErrorKind::ConnectionAborted
                            | std::io::ErrorKind::ConnectionReset
                    ) {
                        tracing::error!(error = %e, "accepting a connection failed");
                        tokio::time::sleep(Duration::from_secs(1)).await;
                    }
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        // A head hyper cannot parse is answered with problem+json, not hyper's bare 400.
        let io = TokioIo::new(ProblemHeads::new(stream, max_header_bytes));
        // The client's address, for the failed-authentication limit (src/auth/mod.rs).
        let app = tower::ServiceExt::map_request(
            app.clone(),
            move |mut request: hyper::Request<hyper::body::Incoming>| {
                request
                    .extensions_mut()
                    .insert(axum::extract::ConnectInfo(peer));
                request
            },
        );
        let conn = http.serve_connection(io, TowerToHyperService::new(app));
        let mut stop = stop_rx.clone();
        let open = open_rx.clone();
        tokio::spawn(async move {
            let mut conn = std::pin::pin!(conn);
            let mut stopping = false;
            loop {
                tokio::select! {
                    result = conn.as_mut() => {
                        if let Err(e) = result {
                            tracing::debug!(error = %e, "connection ended");
                        }
                        break;
                    }
                    _ = stop.changed(), if !stopping => {
                        stopping = true;
                        conn.as_mut().graceful_shutdown();
                    }
                }
            }
            drop(open);
        });
    }
    drop(listener);
    let _ = stop_tx.send(true);
    drop(open_rx);
    open_tx.closed().await;
    Ok(())
}

/// A running control plane.
pub struct Server {
    pub addr: SocketAddr,
    /// Where `GET /metrics` is served when it has a listener of its own (`--metrics-listen`).
    pub metrics_addr: Option<SocketAddr>,
    pub state: AppState,
    shutdown: Option<oneshot::Sender<()>>,
    task: JoinHandle<std::io::Result<()>>,
    /// The separate metrics listener: its stop signal and task.
    metrics: Option<MetricsListener>,
    sweeper: JoinHandle<()>,
    worker: Option<JoinHandle<()>>,
    /// Wakes the worker when another replica commits new work.
    listener: Option<JoinHandle<()>>,
}

/// Runs every request in its own task. A client that disconnects (or a proxy that resets the
/// connection) drops the request future; without this, a handler could be cancelled half-way
/// through a transaction on the single writer connection, leaving a claimed key to wait out
/// its lease. With it, the work finishes and its response is stored for the retry.
async fn run_to_completion(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    match tokio::spawn(next.run(request)).await {
        Ok(response) => response,
        Err(failure) => {
            tracing::error!(error = %failure, "request task failed");
            axum::response::IntoResponse::into_response(ApiError::Internal(
                "request task failed".into(),
            ))
        }
    }
}

/// The API's routes, each with its OpenAPI operation; with `/metrics` unless the metrics
/// have a listener of their own.
fn api_routes(metrics_here: bool) -> OpenApiRouter<AppState> {
    let metrics = if metrics_here {
        crate::telemetry::routes()
    } else {
        OpenApiRouter::new()
    };
    system::routes()
        .merge(metrics)
        .merge(resources::routes())
        .merge(crate::events::routes())
        .merge(crate::dlq::routes())
        .merge(crate::replays::routes())
        .merge(crate::retirement::routes())
        .merge(crate::metrics::routes())
        .merge(crate::edge::routes())
        .merge(crate::diagnostics::routes())
        .merge(crate::auth::tokens::routes())
}

/// The API's router, and `/openapi.json` documenting exactly its routes.
pub fn router(state: AppState) -> Router {
    let (api, document) = api_routes(state.telemetry.serves_on_api()).split_for_parts();
    let document = crate::openapi::document(document.paths);
    api.merge(system::openapi_route(&document))
        .fallback(system::not_found)
        .method_not_allowed_fallback(system::method_not_allowed)
        .layer(DefaultBodyLimit::max(state.limits.max_body_bytes))
        .layer(axum::middleware::from_fn(run_to_completion))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::limits::guard,
        ))
        // Outside the rate limits: they count per tenant, which the token names.
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::auth::authenticate,
        ))
        // Outside run_to_completion: a request cut off by the timeout still finishes.
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::limits::deadline,
        ))
        .layer(CatchPanicLayer::custom(
            |_panic: Box<dyn std::any::Any + Send>| {
                axum::response::IntoResponse::into_response(ApiError::Internal(
                    "handler panicked".into(),
                ))
            },
        ))
        // Outside every answer above (a 429, a 503 timeout, a panic's 500 are all counted);
        // a layer of the router, so it runs after routing and sees the route template.
        .layer(axum::middleware::from_fn_with_state(
            state.telemetry.clone(),
            crate::telemetry::track,
        ))
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

/// A listener serving in the background: its stop signal and task.
type MetricsListener = (oneshot::Sender<()>, JoinHandle<std::io::Result<()>>);

/// The separate metrics listener (`--metrics-listen`), when there is one: its address, stop
/// signal and task.
async fn serve_metrics(
    listen: Option<SocketAddr>,
    state: &AppState,
) -> std::io::Result<(Option<SocketAddr>, Option<MetricsListener>)> {
    let Some(at) = listen else {
        return Ok((None, None));
    };
    let listener = TcpListener::bind(at).await?;
    let at = listener.local_addr()?;
    let (tx, rx) = oneshot::channel::<()>();
    let app = crate::telemetry::metrics_router(state.clone());
    let task = tokio::spawn(serve(
        listener,
        app,
        http1_settings(&state.limits),
        state.limits.max_header_bytes,
        rx,
    ));
    Ok((Some(at), Some((tx, task))))
}

impl Server {
    /// Opens the store, binds the listener and starts serving in the background.
    pub async fn start(mut config: ServerConfig) -> anyhow::Result<Self> {
        if config.metrics.tenant_labels && config.metrics.token.is_none() {
            // Contract section 8: no tenant data without auth.
            anyhow::bail!("metrics tenant labels need a metrics token (--metrics-token-file)");
        }
        let store = open_sealed_store(&config).await?;
        let telemetry = Arc::new(Telemetry::new(&config.metrics, config.tenants.names()));
        let mut delivery_config = config.delivery;
        delivery_config.dedup_retention = config.idempotency.retention;
        let mut delivery = crate::delivery::DeliveryContext::new(
            delivery_config,
            store.clone(),
            config.clock.clone(),
        );
        delivery.telemetry = telemetry.clone();
        let delivery = Arc::new(delivery);
        let state: AppState = Arc::new(AppStateInner {
            store,
            clock: config.clock,
            hooks: config.hooks,
            tenants: config.tenants,
            idempotency: config.idempotency,
            // What the worker uses, as `/v1/info` reports it.
            retry_schedule: crate::delivery::schedule::format_schedule(&delivery.config.schedule),
            delivery: delivery.clone(),
            rate_limiter: RateLimiter::new(config.limits.writes, config.limits.events),
            failed_auth: crate::auth::FailedAuth::new(config.limits.failed_auth),
            limits: config.limits,
            telemetry,
            diagnostics: config.diagnostics,
        });
        let listener = match config.listener.take() {
            Some(bound) => {
                bound.set_nonblocking(true)?;
                TcpListener::from_std(bound)?
            }
            None => TcpListener::bind(config.listen).await?,
        };
        let addr = listener.local_addr()?;
        let (metrics_addr, metrics) = serve_metrics(config.metrics.listen, &state).await?;
        let (tx, rx) = oneshot::channel::<()>();
        let mut app = router(state.clone());
        if config.loopback_hosts_only {
            app = app.layer(axum::middleware::from_fn(
                crate::host_guard::loopback_hosts_only,
            ));
        }
        let connections = http1_settings(&state.limits);
        let task = tokio::spawn(serve(
            listener,
            app,
            connections,
            state.limits.max_header_bytes,
            rx,
        ));
        let sweeper = spawn_sweeper(state.clone(), config.sweep_every);
        let worker = delivery
            .config
            .run_worker
            .then(|| crate::delivery::worker::spawn(delivery.clone()));
        let listener = if delivery.config.run_worker {
            state.store.wake_on_new_work(delivery.wake.clone())
        } else {
            None
        };
        Ok(Self {
            addr,
            metrics_addr,
            state,
            shutdown: Some(tx),
            task,
            metrics,
            sweeper,
            worker,
            listener,
        })
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The URL of `GET /metrics`, on its own listener or the API's.
    pub fn metrics_url(&self) -> String {
        format!("http://{}/metrics", self.metrics_addr.unwrap_or(self.addr))
    }

    /// Stops the separate metrics listener, if any: scrapes are short, so it gets a moment
    /// to finish the one in progress and is then cut.
    async fn stop_metrics(&mut self) {
        if let Some((tx, mut task)) = self.metrics.take() {
            let _ = tx.send(());
            if tokio::time::timeout(Duration::from_secs(1), &mut task)
                .await
                .is_err()
            {
                task.abort();
            }
        }
    }

    /// Stops accepting, finishes in-flight requests, and returns.
    pub async fn stop(mut self) -> anyhow::Result<()> {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        self.sweeper.abort();
        if let Some(worker) = self.worker.take() {
            worker.abort();
        }
        if let Some(listener) = self.listener.take() {
            listener.abort();
        }
        self.stop_metrics().await;
        (&mut self.task).await??;
        Ok(())
    }

    /// Drains and stops: stops accepting connections, and for at most `within` finishes the
    /// requests in progress while the worker claims nothing more and records the attempts it
    /// holds. What is still held when time runs out is released (recorded as interrupted and
    /// due again at once: see [`crate::delivery::worker::release_in_flight`]), so another
    /// replica or the next start takes it over without waiting out a lease. Draining first
    /// spares receivers a repeated attempt; nothing is lost either way.
    pub async fn drain(mut self, within: Duration) -> anyhow::Result<DrainReport> {
        let deadline = tokio::time::Instant::now() + within;
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        let delivery = self.state.delivery.clone();
        delivery
            .draining
            .store(true, std::sync::atomic::Ordering::SeqCst);
        delivery.wake.notify_one();
        let mut report = DrainReport {
            in_flight: delivery.in_flight_count(),
            released: 0,
            requests_cut: false,
        };
        tracing::info!(
            in_flight = report.in_flight,
            within_ms = within.as_millis() as u64,
            "draining: no new connections or attempts; finishing those in progress"
        );
        if let Some(mut worker) = self.worker.take()
            && tokio::time::timeout_at(deadline, &mut worker)
                .await
                .is_err()
        {
            // Not `abort()`: the worker ends between two store calls (a claim in progress
            // is committed, and what it claimed is released below with the rest). Only a
            // store call that hangs past WORKER_CUT_GRACE is cut short, as a last resort.
            delivery.drain_cut.notify_one();
            if tokio::time::timeout(WORKER_CUT_GRACE, &mut worker)
                .await
                .is_err()
            {
                tracing::warn!("the delivery worker's store call did not return; stopping it");
                worker.abort();
            }
            report.released = crate::delivery::worker::release_in_flight(&delivery).await?;
            tracing::warn!(
                released = report.released,
                "drain timed out: released the attempts still in flight (due again at once)"
            );
        }
        self.sweeper.abort();
        if let Some(listener) = self.listener.take() {
            listener.abort();
        }
        match tokio::time::timeout_at(deadline, &mut self.task).await {
            Ok(served) => served??,
            Err(_) => {
                report.requests_cut = true;
                tracing::warn!("drain timed out: closing the requests still running");
                self.task.abort();
            }
        }
        self.stop_metrics().await;
        tracing::info!(
            recorded = report.in_flight.saturating_sub(report.released),
            released = report.released,
            "drained"
        );
        Ok(report)
    }

    /// Runs until `signal` resolves, then drains (see [`Server::drain`]).
    pub async fn run_until(
        mut self,
        signal: impl std::future::Future<Output = ()>,
        drain_within: Duration,
    ) -> anyhow::Result<()> {
        tokio::select! {
            result = &mut self.task => result?.map_err(Into::into),
            () = signal => self.drain(drain_within).await.map(drop),
        }
    }

    /// Waits until the server stops (it only stops on `stop` or an I/O error).
    pub async fn wait(mut self) -> anyhow::Result<()> {
        (&mut self.task).await??;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> ServerConfig {
        ServerConfig::new(
            "127.0.0.1:0".parse().unwrap(),
            "sqlite::memory:",
            Tenants::default(),
        )
    }

    #[test]
    fn a_library_embedder_gets_every_guard_on_unless_it_opts_out() {
        let closed = config();
        assert!(!closed.delivery.allow_private_targets);
        assert!(!closed.limits.writes.is_off() && !closed.limits.events.is_off());
        assert!(!crate::delivery::DeliveryConfig::default().allow_private_targets);

        let local = config().local_only();
        assert!(local.delivery.allow_private_targets);
        assert!(local.limits.writes.is_off() && local.limits.events.is_off());
        assert_eq!(local.limits.max_body_bytes, closed.limits.max_body_bytes);
    }
}
