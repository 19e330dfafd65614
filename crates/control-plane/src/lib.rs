//! The Switchyard reference control plane.
//!
//! [`Server::start`] runs it in-process (tests, the desktop app's sandbox, benchmarks);
//! the `switchyard-control-plane` binary wraps the same thing in a CLI.

pub mod auth;
pub mod canonical_json;
pub mod client_certs;
pub mod clock;
mod cursor;
pub mod delivery;
pub mod demo;
pub mod demo_history;
pub mod demo_receiver;
pub mod diagnostics;
pub mod dlq;
pub mod dlq_stats;
pub mod edge;
pub mod error;
pub mod events;
pub mod extract;
pub mod head_errors;
pub mod hooks;
pub mod host_guard;
pub mod idempotency;
pub mod limits;
pub mod main_key_rotation;
pub mod metrics;
pub mod openapi;
pub mod replays;
pub mod resources;
pub mod retirement;
pub mod sandbox;
pub mod sealing;
pub mod server;
pub mod store;
mod system;
pub mod telemetry;

use std::sync::Arc;

pub use server::{DrainReport, Server, ServerConfig};

/// Shared state of every request handler.
pub type AppState = Arc<AppStateInner>;

pub struct AppStateInner {
    pub store: Arc<dyn store::Store>,
    pub clock: Arc<dyn clock::Clock>,
    pub hooks: Arc<dyn hooks::Hooks>,
    pub tenants: extract::Tenants,
    pub idempotency: idempotency::IdempotencyConfig,
    pub retry_schedule: Vec<String>,
    /// The delivery pipeline (events, worker, DLQ, replays, edge protocol).
    pub delivery: Arc<delivery::DeliveryContext>,
    /// Body, header, time and replay-selection caps (docs/control-plane.md, "Limits").
    pub limits: limits::Limits,
    pub rate_limiter: limits::RateLimiter,
    /// Unknown tokens per client address (`limits.failed_auth`).
    pub failed_auth: auth::FailedAuth,
    /// This server's Prometheus registry (`GET /metrics`); the same one as `delivery`'s.
    pub telemetry: Arc<telemetry::Telemetry>,
    /// When states become findings in `GET /v1/diagnostics` (docs/recovery.md).
    pub diagnostics: diagnostics::DiagnosticsConfig,
}
