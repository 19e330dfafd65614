//! `GET /v1/diagnostics`: what this control plane can see is wrong for the tenant, each
//! finding with the keyed calls that fix it (docs/recovery.md, "Server-side findings").
//!
//! The store reads the facts through bounded, indexed queries (`crate::store::diagnostics`);
//! [`findings`] turns them into findings with pure functions of the facts, the thresholds and
//! the injected clock's now; [`fixes`] holds the two fixes that had no API before (the
//! requeue of a stuck delivery and the DLQ recount). The other fixes are existing calls:
//! enable an endpoint, test a target, replay its DLQ, cancel a replay.

pub mod credentials;
pub mod findings;
pub mod fixes;

use std::time::Duration;

use axum::Json;
use axum::extract::State;
use switchyard_protocol::Diagnostics;
use utoipa::openapi::path::HttpMethod;
use utoipa_axum::router::OpenApiRouter;

use crate::AppState;
use crate::clock::to_datetime;
use crate::error::ApiError;
use crate::extract::Tenant;
use crate::store::Bounds;

/// When a state becomes a finding (`serve --diagnose-…` flags; docs/recovery.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiagnosticsConfig {
    /// How long after its lease expired an in-flight delivery counts as stuck. A running
    /// worker reaps an expired lease within a second (it looks at least every poll and wakes
    /// at the earliest lease expiry), so a delivery still in flight well after means no
    /// worker is reaping: `stuck_delivery`.
    pub stuck_after: Duration,
    /// How long an edge plane may go without calling lease, while relay deliveries wait for
    /// it, before it is `edge_unreachable`. An edge polls every `--poll` (200 ms by default).
    pub edge_silence: Duration,
    /// How long a replay session's re-delivery may stay due and unsent before the session
    /// is `stalled_replay`.
    pub replay_stall: Duration,
    /// Consecutive failed attempts of a target that make it `failing_target` (5: one
    /// delivery's whole budget under the default schedule).
    pub failure_run: u32,
    /// How much each check reads.
    pub bounds: Bounds,
}

impl Default for DiagnosticsConfig {
    fn default() -> Self {
        Self {
            stuck_after: Duration::from_secs(60),
            edge_silence: Duration::from_secs(120),
            replay_stall: Duration::from_secs(300),
            failure_run: 5,
            bounds: Bounds::default(),
        }
    }
}

pub fn routes() -> OpenApiRouter<AppState> {
    use crate::openapi::{diagnostics as doc, route};
    OpenApiRouter::new()
        .routes(route(
            "/v1/diagnostics",
            HttpMethod::Get,
            diagnose,
            doc::diagnose(),
        ))
        .merge(fixes::routes())
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX / 4)
}

async fn diagnose(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
) -> Result<Json<Diagnostics>, ApiError> {
    let config = state.diagnostics;
    let bounds = config.bounds;
    let now = state.clock.now_ms();
    let store = &state.store;
    // Independent reads: on SQLite each takes a reader of its own, on PostgreSQL a
    // connection of the pool.
    let (stuck, relays, disabled, replays, failing, drift, overlaps, certificates) = tokio::try_join!(
        store.stuck_deliveries(&tenant, now - millis(config.stuck_after), bounds.subjects),
        store.waiting_relays(&tenant, bounds),
        store.disabled_backlogs(&tenant, bounds),
        store.overdue_replays(&tenant, now - millis(config.replay_stall), bounds),
        store.failing_targets(&tenant, i64::from(config.failure_run.max(1)), bounds),
        store.dlq_drift(&tenant, bounds.subjects),
        store.open_overlaps(&tenant, now, bounds.subjects),
        store.expiring_certificates(
            &tenant,
            now.saturating_add(credentials::CERTIFICATE_NOTICE_MS),
            bounds.subjects
        ),
    )?;
    let facts = findings::Facts {
        now,
        tenant: &tenant,
        edge_silence_ms: millis(config.edge_silence),
        count_cap: u64::from(bounds.count_cap),
        stuck,
        relays,
        disabled,
        replays,
        failing,
        drift,
        overlaps,
        certificates,
    };
    Ok(Json(Diagnostics {
        checked_at: to_datetime(now),
        findings: findings::all(facts),
    }))
}
