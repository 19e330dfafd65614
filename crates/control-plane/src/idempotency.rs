//! The Idempotency-Key protocol (contract section 1, rules 1–10).
//!
//! A keyed request is claimed atomically, executed in one transaction together with its
//! stored response (fenced by the claim's attempt number), and replayed byte for byte
//! afterwards. Domain logic is an [`Operation`]; this module never knows what it does.

use std::time::Duration;

use async_trait::async_trait;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use sha2::{Digest, Sha256};
use switchyard_protocol::headers::{IDEMPOTENCY_KEY, IDEMPOTENT_REPLAYED, parse_idempotency_key};

use crate::AppState;
use crate::error::ApiError;
use crate::hooks::HookPoint;
use crate::store::{ClaimOutcome, KeyRecord, KeyScope, KeyState, StoreTx, StoredResponse};

/// How the key is claimed. Only `Atomic` is correct; `CheckThenInsert` exists so a test can
/// prove the concurrency tests catch the classic race (a negative control).
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
    pub claim_strategy: ClaimStrategy,
}

impl Default for IdempotencyConfig {
    fn default() -> Self {
        Self {
            require_key: true,
            retention: Duration::from_secs(86_400),
            lease: Duration::from_secs(10),
            claim_strategy: ClaimStrategy::Atomic,
        }
    }
}

/// What an operation sees while it runs.
pub struct OpContext<'a> {
    pub tenant: &'a str,
    /// Unix milliseconds, from the injected clock.
    pub now: i64,
}

/// A mutating request's effect. It writes through `tx` and renders the response that is
/// sent and stored; an error is rendered by the pipeline (and stored if rule 7 says so).
#[async_trait]
pub trait Operation: Send + Sync {
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
            run_keyed(state, &scope, fingerprint, op).await
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

async fn run_unkeyed(
    state: &AppState,
    tenant: &str,
    op: &dyn Operation,
) -> Result<Outcome, ApiError> {
    let ctx = OpContext {
        tenant,
        now: state.clock.now_ms(),
    };
    let mut tx = state.store.begin().await?;
    let response = op.execute(&mut *tx, &ctx).await?;
    tx.commit().await?;
    Ok(Outcome::Fresh(response))
}

async fn run_keyed(
    state: &AppState,
    scope: &KeyScope,
    fingerprint: Vec<u8>,
    op: &dyn Operation,
) -> Result<Outcome, ApiError> {
    let attempt = match claim(state, scope, &fingerprint).await? {
        Claim::Owned(attempt) => attempt,
        Claim::Replay(response) => return Ok(Outcome::Replayed(response)),
    };
    state.hooks.at(HookPoint::AfterClaim, &scope.key).await;

    let ctx = OpContext {
        tenant: &scope.tenant,
        now: state.clock.now_ms(),
    };
    let mut tx = state.store.begin().await?;
    let response = match op.execute(&mut *tx, &ctx).await {
        Ok(response) => response,
        Err(error) => {
            drop(tx); // roll back whatever the operation wrote
            return finish_with_error(state, scope, attempt, error).await;
        }
    };
    state.hooks.at(HookPoint::AfterEffect, &scope.key).await;
    if !tx.complete_key(scope, attempt, &response).await? {
        drop(tx);
        return fenced_out(state, scope).await;
    }
    tx.commit().await?;
    Ok(Outcome::Fresh(response))
}

/// An operation failed after the claim: store the error if rule 7 says so, else release
/// the key so a corrected retry can run.
async fn finish_with_error(
    state: &AppState,
    scope: &KeyScope,
    attempt: i64,
    error: ApiError,
) -> Result<Outcome, ApiError> {
    if !error.is_stored() {
        state.store.release_key(scope, attempt).await?;
        return Err(error);
    }
    let response = error.to_stored();
    let mut tx = state.store.begin().await?;
    if !tx.complete_key(scope, attempt, &response).await? {
        drop(tx);
        return fenced_out(state, scope).await;
    }
    tx.commit().await?;
    Ok(Outcome::Fresh(response))
}

/// A takeover bumped the attempt while this holder ran; its work was rolled back. Answer
/// with whatever the key holds now.
async fn fenced_out(state: &AppState, scope: &KeyScope) -> Result<Outcome, ApiError> {
    tracing::warn!(key = %scope.key, "stale idempotency lease fenced out; effect rolled back");
    match state.store.get_key(scope).await? {
        Some(KeyRecord {
            state: KeyState::Completed,
            response: Some(response),
            ..
        }) => Ok(Outcome::Replayed(response)),
        Some(record) => Err(in_progress(state, &record)),
        None => Err(ApiError::KeyInProgress { retry_after_s: 1 }),
    }
}

enum Claim {
    Owned(i64),
    Replay(StoredResponse),
}

async fn claim(state: &AppState, scope: &KeyScope, fingerprint: &[u8]) -> Result<Claim, ApiError> {
    let now = state.clock.now_ms();
    let locked_until = now + lease_ms(state);
    let outcome = match state.idempotency.claim_strategy {
        ClaimStrategy::Atomic => {
            state
                .store
                .claim_key(scope, fingerprint, now, locked_until)
                .await?
        }
        ClaimStrategy::CheckThenInsert => {
            check_then_insert(state, scope, fingerprint, now, locked_until).await?
        }
    };
    let record = match outcome {
        ClaimOutcome::Claimed { attempt } => return Ok(Claim::Owned(attempt)),
        ClaimOutcome::Existing(record) => record,
    };
    if record.fingerprint != fingerprint {
        return Err(ApiError::KeyReused);
    }
    match record.state {
        KeyState::Completed => Ok(Claim::Replay(record.response.clone().ok_or_else(|| {
            ApiError::Internal("completed idempotency key has no stored response".into())
        })?)),
        KeyState::InProgress if record.locked_until > now => Err(in_progress(state, &record)),
        KeyState::InProgress => {
            match state
                .store
                .take_over_key(scope, record.attempt, now, locked_until)
                .await?
            {
                Some(attempt) => {
                    tracing::info!(key = %scope.key, attempt, "took over an expired idempotency lease");
                    Ok(Claim::Owned(attempt))
                }
                // Someone else took it over first; they hold a fresh lease now.
                None => match state.store.get_key(scope).await? {
                    Some(KeyRecord {
                        state: KeyState::Completed,
                        response: Some(r),
                        ..
                    }) => Ok(Claim::Replay(r)),
                    Some(record) => Err(in_progress(state, &record)),
                    None => Err(ApiError::KeyInProgress { retry_after_s: 1 }),
                },
            }
        }
    }
}

/// The deliberately wrong claim (negative control): read, then write unconditionally.
async fn check_then_insert(
    state: &AppState,
    scope: &KeyScope,
    fingerprint: &[u8],
    now: i64,
    locked_until: i64,
) -> Result<ClaimOutcome, ApiError> {
    if let Some(record) = state.store.get_key(scope).await? {
        return Ok(ClaimOutcome::Existing(record));
    }
    // Widen the race window the way a busy server would.
    tokio::time::sleep(Duration::from_millis(5)).await;
    state
        .store
        .overwrite_claim(scope, fingerprint, now, locked_until)
        .await?;
    Ok(ClaimOutcome::Claimed { attempt: 1 })
}

fn lease_ms(state: &AppState) -> i64 {
    i64::try_from(state.idempotency.lease.as_millis()).unwrap_or(i64::MAX / 2)
}

fn in_progress(state: &AppState, record: &KeyRecord) -> ApiError {
    let left_ms = (record.locked_until - state.clock.now_ms()).max(0);
    let retry_after_s = u64::try_from((left_ms + 999) / 1000).unwrap_or(1).max(1);
    ApiError::KeyInProgress { retry_after_s }
}

/// Deletes keys older than the retention window, every `every`, until the task is dropped.
pub fn spawn_sweeper(state: AppState, every: Duration) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let retention =
                i64::try_from(state.idempotency.retention.as_millis()).unwrap_or(i64::MAX / 2);
            let cutoff = state.clock.now_ms().saturating_sub(retention);
            match state.store.sweep_keys(cutoff).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(swept = n, "expired idempotency keys removed"),
                Err(e) => tracing::warn!(error = %e, "idempotency sweep failed; will retry"),
            }
        }
    })
}
