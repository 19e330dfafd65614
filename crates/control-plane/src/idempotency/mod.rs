//! The Idempotency-Key protocol (contract section 1, rules 1–10).
//!
//! A keyed request is claimed atomically and replayed byte for byte afterwards. How it runs
//! depends on where its effect lands (seed rules 5 and 6, see [`Effect`]):
//! - a **local** effect (database writes) commits in one write transaction together with the
//!   key and the stored response — the key recorded completed after the effect, by the one
//!   guarded insert that decides which copy of a request wins; a crash anywhere rolls all of
//!   it back;
//! - an **external** effect (a call out, e.g. a webhook) is bracketed: the claim commits
//!   first as in progress with a lease, the call runs outside any transaction with a
//!   downstream key that every attempt shares, then the stored response commits, fenced by
//!   the claim's attempt number so a holder whose lease was taken over cannot overwrite it.
//!
//! Domain logic is an [`Operation`]; this module never knows what it does.

mod pipeline;

use std::time::Duration;

use async_trait::async_trait;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use sha2::{Digest, Sha256};
use switchyard_protocol::headers::{IDEMPOTENCY_KEY, IDEMPOTENT_REPLAYED, parse_idempotency_key};

use crate::AppState;
use crate::error::ApiError;
use crate::store::{KeyScope, StoreTx, StoredResponse};
use crate::telemetry::IdempotencyOutcome;

/// How the key is claimed. Only `Atomic` is correct; `CheckThenInsert` exists so a test can
/// prove the concurrency tests catch the classic race (a negative control). Built only with
/// the `fault-injection` feature, which tests enable and releases never do.
#[cfg(feature = "fault-injection")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClaimStrategy {
    #[default]
    Atomic,
    /// Negative control for tests only: read the key, then write it unconditionally.
    CheckThenInsert,
}

/// Idempotency settings of a server.
#[derive(Debug, Clone)]
pub struct IdempotencyConfig {
    /// Whether mutating requests must carry a key. Only the benchmark's baseline turns this off.
    pub require_key: bool,
    /// How long a completed key is remembered (contract default: 24 h).
    pub retention: Duration,
    /// How long an in-progress claim is leased before another request may take it over.
    pub lease: Duration,
    #[cfg(feature = "fault-injection")]
    pub claim_strategy: ClaimStrategy,
}

impl Default for IdempotencyConfig {
    fn default() -> Self {
        Self {
            require_key: true,
            retention: Duration::from_secs(86_400),
            lease: Duration::from_secs(10),
            #[cfg(feature = "fault-injection")]
            claim_strategy: ClaimStrategy::Atomic,
        }
    }
}

/// What an operation sees while it runs.
pub struct OpContext<'a> {
    pub tenant: &'a str,
    /// Unix milliseconds, from the injected clock.
    pub now: i64,
    /// For an [`Effect::External`] operation: what its `call_external` returned.
    pub external: Option<Value>,
}

/// Where an operation's effect lands, which decides how the pipeline runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Effect {
    /// Database writes only (seed rule 5): effect, key and stored response commit in one
    /// write transaction. Copies of the request queue behind it and replay its answer.
    #[default]
    Local,
    /// A call the database cannot enlist (seed rule 6): the claim commits first, as in
    /// progress with a lease; the call runs outside any transaction; the stored response
    /// commits after, fenced by the claim's attempt. Copies meanwhile get 409 in progress.
    External,
}

/// A mutating request's effect. It writes through `tx` and renders the response that is
/// sent and stored; an error is rendered by the pipeline (and stored if rule 7 says so).
#[async_trait]
pub trait Operation: Send + Sync {
    fn effect(&self) -> Effect {
        Effect::Local
    }

    /// The outside call of an [`Effect::External`] operation, made after the claim has
    /// committed and outside any transaction. `downstream_key` is the same for every attempt
    /// at one idempotency key (a takeover after a crash sends the same one), so a receiver
    /// that deduplicates on it sees one effect. The result reaches `execute` as
    /// `ctx.external`. Local operations keep the default, which is never called.
    async fn call_external(
        &self,
        _state: &AppState,
        _ctx: &OpContext<'_>,
        _downstream_key: &str,
    ) -> Result<Value, ApiError> {
        Ok(Value::Null)
    }

    async fn execute(
        &self,
        tx: &mut dyn StoreTx,
        ctx: &OpContext<'_>,
    ) -> Result<StoredResponse, ApiError>;
}

/// The request identity: SHA-256 over method, path, `If-Match` and the canonical JSON body.
pub fn fingerprint(
    method: &str,
    path: &str,
    if_match: Option<&str>,
    body: Option<&Value>,
) -> Vec<u8> {
    let mut hash = Sha256::new();
    for part in [
        method.as_bytes(),
        path.as_bytes(),
        if_match.unwrap_or("").as_bytes(),
    ] {
        hash.update((part.len() as u64).to_be_bytes());
        hash.update(part);
    }
    if let Some(body) = body {
        hash.update(crate::canonical_json::to_vec(body));
    }
    hash.finalize().to_vec()
}

/// Reads the `Idempotency-Key` header (`None` when absent).
pub fn key_from_headers(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    match headers.get(IDEMPOTENCY_KEY) {
        None => Ok(None),
        Some(raw) => parse_idempotency_key(raw.as_bytes())
            .map(Some)
            .map_err(|why| {
                if raw.is_empty() || raw.as_bytes() == b"\"\"" {
                    ApiError::KeyMissing
                } else {
                    ApiError::KeyInvalid(why)
                }
            }),
    }
}

enum Outcome {
    Fresh(StoredResponse),
    Replayed(StoredResponse),
}

/// Runs `op` under the key in `headers`, with the request's `fingerprint`.
pub async fn run(
    state: &AppState,
    tenant: &str,
    headers: &HeaderMap,
    fingerprint: Vec<u8>,
    op: &dyn Operation,
) -> Response {
    let outcome = match key_from_headers(headers) {
        Ok(Some(key)) => {
            let scope = KeyScope {
                tenant: tenant.to_owned(),
                key,
            };
            let outcome = pipeline::run_keyed(state, &scope, &fingerprint, op).await;
            if let Some(counted) = counted_as(&outcome) {
                state.telemetry.idempotency(counted);
            }
            outcome
        }
        Ok(None) if state.idempotency.require_key => Err(ApiError::KeyMissing),
        Ok(None) => run_unkeyed(state, tenant, op).await,
        Err(e) => Err(e),
    };
    match outcome {
        Ok(Outcome::Fresh(response)) => response.into_response(),
        Ok(Outcome::Replayed(response)) => {
            let mut response = response.into_response();
            response
                .headers_mut()
                .insert(IDEMPOTENT_REPLAYED, HeaderValue::from_static("true"));
            response
        }
        Err(error) => error.into_response(),
    }
}

/// What a keyed request's outcome counts as in `switchyard_idempotency_requests_total`. A
/// stored answer is `executed` whatever its status (a stored 404 ran under the key too); a
/// client mistake answered before execution (400, 413, …: never stored) is not counted.
fn counted_as(outcome: &Result<Outcome, ApiError>) -> Option<IdempotencyOutcome> {
    match outcome {
        Ok(Outcome::Fresh(_)) => Some(IdempotencyOutcome::Executed),
        Ok(Outcome::Replayed(_)) => Some(IdempotencyOutcome::Replayed),
        Err(ApiError::KeyInProgress { .. }) => Some(IdempotencyOutcome::InProgress),
        Err(ApiError::KeyReused) => Some(IdempotencyOutcome::Reused),
        Err(_) => None,
    }
}

async fn run_unkeyed(
    state: &AppState,
    tenant: &str,
    op: &dyn Operation,
) -> Result<Outcome, ApiError> {
    let mut ctx = OpContext {
        tenant,
        now: state.clock.now_ms(),
        external: None,
    };
    if op.effect() == Effect::External {
        // No key to share between attempts: this one call gets an identity of its own.
        let downstream = format!("msg_{}", uuid::Uuid::new_v4().simple());
        ctx.external = Some(op.call_external(state, &ctx, &downstream).await?);
    }
    let mut tx = state.telemetry.store("begin", state.store.begin()).await?;
    let response = op.execute(&mut *tx, &ctx).await?;
    tx.commit().await?;
    Ok(Outcome::Fresh(response))
}

/// How long delivery-health hour rollups are kept: the 7-day window and a day.
pub const ROLLUP_RETENTION_MINUTES: i64 = 8 * 24 * 60;
/// How long minute rollups are kept: they serve the windows of an hour or less.
pub const MINUTE_ROLLUP_RETENTION_MINUTES: i64 = 24 * 60;

/// Deletes keys older than the retention window, every `every`, and delivery-health rollups
/// past [`ROLLUP_RETENTION_MINUTES`] once an hour, until the task is dropped.
pub fn spawn_sweeper(state: AppState, every: Duration) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut rollups_swept_at = i64::MIN;
        loop {
            tick.tick().await;
            let retention =
                i64::try_from(state.idempotency.retention.as_millis()).unwrap_or(i64::MAX / 2);
            let now = state.clock.now_ms();
            let cutoff = now.saturating_sub(retention);
            match state.store.sweep_keys(cutoff).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(swept = n, "expired idempotency keys removed"),
                Err(e) => tracing::warn!(error = %e, "idempotency sweep failed; will retry"),
            }
            // Delivery-health rollups older than the longest window (7 d) plus a day; once an
            // hour is enough, and keeps the scan of the rollups off every tick.
            if now.saturating_sub(rollups_swept_at) >= 3_600_000 {
                rollups_swept_at = now;
                let minute = now.div_euclid(60_000);
                match state
                    .store
                    .sweep_rollups(
                        minute - ROLLUP_RETENTION_MINUTES,
                        minute - MINUTE_ROLLUP_RETENTION_MINUTES,
                    )
                    .await
                {
                    Ok(0) => {}
                    Ok(n) => {
                        tracing::info!(swept = n, "delivery-health rollups past retention removed")
                    }
                    Err(e) => tracing::warn!(error = %e, "rollup sweep failed; will retry"),
                }
            }
        }
    })
}
