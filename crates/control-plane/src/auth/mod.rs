//! Who a request is: its bearer token resolved once, before any handler runs, to a
//! [`Caller`] (tenant and role); the role each route needs is [`roles::needed`], checked by
//! the [`crate::extract::Tenant`] extractor every authenticated handler takes.
//!
//! A token is either one given at start-up (`--tenant NAME:TOKEN`, kept in memory as a
//! SHA-256 digest: an admin token) or one made with `POST /v1/tokens` (its SHA-256 in the
//! store). The second kind is read from the store on every request, so a revocation holds on
//! every replica at once. A token is looked up by its digest, never compared byte by byte,
//! so the time an answer takes says nothing about how much of a guess was right.
//!
//! Requests that present a token nobody holds are counted per client address
//! ([`FailedAuth`]); past the limit they get 429 before any lookup.

pub mod roles;
pub mod tokens;

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Mutex;
use std::time::Instant;

use axum::extract::{ConnectInfo, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use switchyard_protocol::Role;

use crate::AppState;
use crate::error::ApiError;
use crate::limits::{Bucket, Rate};

/// The authenticated caller of a request (a request extension once [`authenticate`] ran).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub tenant: String,
    pub role: Role,
    /// The token's id and name; `None` for a start-up token.
    pub token: Option<(String, String)>,
}

/// How stale `last_used_at` may get: a busy token is written once a minute, not per request.
const LAST_USED_EVERY_MS: i64 = 60_000;

/// Resolves the request's bearer token to a [`Caller`] and adds it to the request. A request
/// without a token, or with an unknown one, goes on without (the handler answers 401), unless
/// its client is over the failed-authentication limit (429).
pub async fn authenticate(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    let Some(token) = crate::extract::bearer_token(request.headers()) else {
        return next.run(request).await;
    };
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip());
    if let Err(retry_after_s) = state.failed_auth.admit(peer, Instant::now()) {
        return ApiError::RateLimited {
            class: "failed_authentications",
            per_s: state.failed_auth.rate.per_s,
            retry_after_s,
        }
        .into_response();
    }
    let caller = match resolve(&state, token).await {
        Ok(caller) => caller,
        Err(e) => return e.into_response(),
    };
    match caller {
        Some(caller) => {
            request.extensions_mut().insert(caller);
        }
        None => state.failed_auth.failed(peer, Instant::now()),
    }
    next.run(request).await
}

async fn resolve(state: &AppState, token: &str) -> Result<Option<Caller>, ApiError> {
    // One digest for both lookups: the start-up tokens' and the store's.
    let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
    if let Some(tenant) = state.tenants.lookup_digest(&digest) {
        return Ok(Some(Caller {
            tenant: tenant.to_owned(),
            role: Role::Admin,
            token: None,
        }));
    }
    let found = state
        .telemetry
        .store("token_by_hash", state.store.token_by_hash(&digest))
        .await?;
    let Some(row) = found else { return Ok(None) };
    let now = state.clock.now_ms();
    if row
        .last_used_at
        .is_none_or(|at| at <= now - LAST_USED_EVERY_MS)
    {
        // Off the request's path: the answer does not wait for this write.
        let (store, id) = (state.store.clone(), row.id.clone());
        tokio::spawn(async move {
            if let Err(e) = store.touch_token(&id, now, LAST_USED_EVERY_MS).await {
                tracing::warn!(error = %e, token = %id, "recording a token's last use failed");
            }
        });
    }
    Ok(Some(Caller {
        tenant: row.tenant,
        role: row.role,
        token: Some((row.id, row.name)),
    }))
}

/// A new token's value: `sy_` and 32 random bytes, hex (what the store keeps is its SHA-256,
/// [`digest`]).
pub fn new_token_value() -> String {
    format!("sy_{}", hex::encode(rand::random::<[u8; 32]>()))
}

pub fn digest(value: &str) -> Vec<u8> {
    Sha256::digest(value.as_bytes()).to_vec()
}

/// Failed authentications per client address: a token bucket of `rate` each. A client that
/// presents unknown tokens faster gets 429 `rate_limited` (class `failed_authentications`)
/// until its bucket refills. Only failures take tokens; a client over the limit is refused
/// even with a good token, so guessing cannot go on between good requests.
#[derive(Debug)]
pub struct FailedAuth {
    rate: Rate,
    buckets: Mutex<HashMap<Option<IpAddr>, Bucket>>,
}

/// Most addresses tracked; past it, those whose buckets have refilled are forgotten.
const MAX_TRACKED: usize = 10_000;

impl FailedAuth {
    pub fn new(rate: Rate) -> Self {
        Self {
            rate,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// `Err(seconds)` while `peer` has no failure left to spend.
    pub fn admit(&self, peer: Option<IpAddr>, now: Instant) -> Result<(), u64> {
        if self.rate.is_off() {
            return Ok(());
        }
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        let Some(bucket) = buckets.get_mut(&peer) else {
            return Ok(());
        };
        bucket.refill(self.rate, now);
        bucket.has_one(self.rate)
    }

    /// Spends one of `peer`'s failures.
    pub fn failed(&self, peer: Option<IpAddr>, now: Instant) {
        if self.rate.is_off() {
            return;
        }
        let rate = self.rate;
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if buckets.len() >= MAX_TRACKED && !buckets.contains_key(&peer) {
            buckets.retain(|_, b| !b.refilled_by(rate, now));
        }
        let bucket = buckets.entry(peer).or_insert(Bucket::full(rate, now));
        bucket.refill(rate, now);
        bucket.spend_one();
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn failures_past_the_burst_are_refused_until_the_bucket_refills() {
        let limit = FailedAuth::new(Rate {
            per_s: 1.0,
            burst: 3,
        });
        let a = Some(IpAddr::from([10, 0, 0, 1]));
        let b = Some(IpAddr::from([10, 0, 0, 2]));
        let t0 = Instant::now();
        for _ in 0..3 {
            assert_eq!(limit.admit(a, t0), Ok(()));
            limit.failed(a, t0);
        }
        assert_eq!(limit.admit(a, t0), Err(1));
        assert_eq!(
            limit.admit(b, t0),
            Ok(()),
            "another client is not held back"
        );
        assert_eq!(limit.admit(a, t0 + Duration::from_secs(1)), Ok(()));
        let off = FailedAuth::new(Rate::OFF);
        for _ in 0..100 {
            off.failed(a, t0);
        }
        assert_eq!(off.admit(a, t0), Ok(()));
    }
}
