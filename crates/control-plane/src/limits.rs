//! Request limits: the body and header caps, the header-read and whole-request timeouts,
//! per-tenant rate limits on writes and event ingestion, and the replay-selection cap.
//!
//! The header-read timeout and the hard header buffer are applied by the connection loop in
//! src/server.rs (hyper's HTTP/1 settings); the rest is the two middlewares below.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::http::{HeaderValue, header};

use axum::extract::{Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::AppState;
use crate::error::ApiError;

/// A token-bucket rate: `per_s` tokens a second, at most `burst` saved up. `per_s <= 0`: off.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    pub per_s: f64,
    pub burst: u32,
}

impl Rate {
    pub const OFF: Rate = Rate {
        per_s: 0.0,
        burst: 0,
    };

    /// `per_s` a second with a burst of two seconds' worth (at least 1).
    pub fn per_second(per_s: f64) -> Self {
        Self {
            per_s,
            burst: default_burst(per_s),
        }
    }

    /// The burst as a bucket's capacity (at least one token).
    fn burst_f64(&self) -> f64 {
        f64::from(self.burst.max(1))
    }

    pub fn is_off(&self) -> bool {
        self.per_s.is_nan() || self.per_s <= 0.0
    }

    /// Parses `N/s`, `N/m` or a bare `N` (per second); `0` turns the limit off.
    pub fn parse_per_s(text: &str) -> Result<f64, String> {
        let text = text.trim();
        let (number, per) = match text.split_once('/') {
            Some((n, "s")) => (n, 1.0),
            Some((n, "m")) => (n, 60.0),
            Some(_) => return Err(format!("{text:?}: a rate is N/s, N/m or N (0: off)")),
            None => (text, 1.0),
        };
        let n: f64 = number
            .trim()
            .parse()
            .map_err(|_| format!("{text:?}: a rate is N/s, N/m or N (0: off)"))?;
        if !n.is_finite() || n < 0.0 {
            return Err(format!("{text:?}: a rate is a number of 0 or more"));
        }
        Ok(n / per)
    }

    /// A rate as an operator writes it: `100/s`, or per minute when under one a second
    /// (`1/m`, not `0.016666666666666666/s`); at most three decimals.
    pub fn describe(per_s: f64) -> String {
        let short = |n: f64| {
            let text = format!("{n:.3}");
            text.trim_end_matches('0').trim_end_matches('.').to_owned()
        };
        if per_s > 0.0 && per_s < 1.0 {
            format!("{}/m", short(per_s * 60.0))
        } else {
            format!("{}/s", short(per_s))
        }
    }
}

fn default_burst(per_s: f64) -> u32 {
    if per_s > 0.0 {
        (per_s * 2.0).ceil().clamp(1.0, f64::from(u32::MAX)) as u32
    } else {
        0
    }
}

/// The limits a server enforces; [`Limits::default`] is what `serve` uses unless told
/// otherwise (docs/control-plane.md, "Limits").
#[derive(Debug, Clone)]
pub struct Limits {
    /// Largest request body (413 `payload_too_large`).
    pub max_body_bytes: usize,
    /// Largest request line plus headers (431 `headers_too_large`).
    pub max_header_bytes: usize,
    /// How long a connection may take to send a request's line and headers, and how long an
    /// idle keep-alive connection is kept; then it is closed. Zero: no limit.
    pub header_read_timeout: Duration,
    /// How long a request may take, body included (503 `unavailable`). Zero: no limit.
    pub request_timeout: Duration,
    /// Mutating calls per tenant (resources, target tests, replays).
    pub writes: Rate,
    /// `POST /v1/events` per tenant.
    pub events: Rate,
    /// Requests presenting an unknown bearer token, per client address (`crate::auth`).
    pub failed_auth: Rate,
    /// Most dead deliveries one filter replay session selects (oldest death first).
    pub max_replay_selection: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_body_bytes: crate::extract::MAX_BODY_BYTES,
            max_header_bytes: 16 * 1024,
            header_read_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            writes: Rate::per_second(100.0),
            events: Rate::per_second(1000.0),
            // 20 wrong tokens at once, then one a second: no help to a guesser, no trouble
            // for an operator who mistyped a few.
            failed_auth: Rate {
                per_s: 1.0,
                burst: 20,
            },
            max_replay_selection: crate::replays::MAX_FILTER_SELECTION,
        }
    }
}

/// What a rate limit counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Writes,
    Events,
}

impl Class {
    pub fn name(self) -> &'static str {
        match self {
            Self::Writes => "writes",
            Self::Events => "events",
        }
    }

    /// `POST /v1/events` is ingestion; every other mutating `/v1/` call is a write, except
    /// the edge protocol (`/v1/edges/…`), whose pace is set by the edge agent's own leases.
    pub fn of(method: &Method, path: &str) -> Option<Self> {
        let mutating = matches!(
            *method,
            Method::POST | Method::PUT | Method::PATCH | Method::DELETE
        );
        if !mutating || !path.starts_with("/v1/") || path.starts_with("/v1/edges/") {
            None
        } else if path == "/v1/events" {
            Some(Self::Events)
        } else {
            Some(Self::Writes)
        }
    }
}

/// A token bucket of some [`Rate`] (not kept in it: a limiter holds one rate for many
/// buckets). Also the failed-authentication limit's (`crate::auth::FailedAuth`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bucket {
    tokens: f64,
    at: Instant,
}

impl Bucket {
    /// A full bucket.
    pub(crate) fn full(rate: Rate, now: Instant) -> Self {
        Self {
            tokens: rate.burst_f64(),
            at: now,
        }
    }

    /// Adds what `rate` refilled since the last look, up to the burst.
    pub(crate) fn refill(&mut self, rate: Rate, now: Instant) {
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        self.tokens = (self.tokens + elapsed * rate.per_s).min(rate.burst_f64());
        self.at = self.at.max(now);
    }

    /// `Err(seconds)` until a whole token is there (after [`Self::refill`]).
    pub(crate) fn has_one(&self, rate: Rate) -> Result<(), u64> {
        if self.tokens >= 1.0 {
            Ok(())
        } else {
            Err(((1.0 - self.tokens) / rate.per_s).ceil().max(1.0) as u64)
        }
    }

    pub(crate) fn spend_one(&mut self) {
        self.tokens = (self.tokens - 1.0).max(0.0);
    }

    /// Whether it would be full at `now`: nothing to remember about its client.
    pub(crate) fn refilled_by(&self, rate: Rate, now: Instant) -> bool {
        let mut later = *self;
        later.refill(rate, now);
        later.tokens >= rate.burst_f64()
    }
}

/// In-memory token buckets per (tenant, class). Each replica counts only what it serves.
/// Tenants are the configured set, so the map is bounded by it.
#[derive(Debug)]
pub struct RateLimiter {
    writes: Rate,
    events: Rate,
    buckets: Mutex<HashMap<String, [Option<Bucket>; 2]>>,
}

impl RateLimiter {
    pub fn new(writes: Rate, events: Rate) -> Self {
        Self {
            writes,
            events,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    pub fn rate(&self, class: Class) -> Rate {
        match class {
            Class::Writes => self.writes,
            Class::Events => self.events,
        }
    }

    /// Takes one token, or answers how many whole seconds until one is there.
    pub fn check(&self, tenant: &str, class: Class, now: Instant) -> Result<(), u64> {
        let rate = self.rate(class);
        if rate.is_off() {
            return Ok(());
        }
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if !buckets.contains_key(tenant) {
            buckets.insert(tenant.to_owned(), [None, None]);
        }
        let slot = &mut buckets.get_mut(tenant).expect("inserted above")[class as usize];
        let bucket = slot.get_or_insert(Bucket::full(rate, now));
        bucket.refill(rate, now);
        bucket.has_one(rate)?;
        bucket.spend_one();
        Ok(())
    }
}

/// Size of the request line and headers as sent (`NAME: VALUE\r\n` each).
fn head_bytes(request: &Request) -> usize {
    let line = request.method().as_str().len()
        + request
            .uri()
            .path_and_query()
            .map_or(1, |p| p.as_str().len())
        + " HTTP/1.1\r\n ".len();
    request.headers().iter().fold(line, |n, (name, value)| {
        n + name.as_str().len() + value.len() + 4
    })
}

/// The header cap and the rate limits, before any handler runs: a 429 is answered before an
/// Idempotency-Key is claimed, so the corrected retry with the same key executes.
pub async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let limits = &state.limits;
    if head_bytes(&request) > limits.max_header_bytes {
        let refusal = ApiError::HeadersTooLarge {
            limit: limits.max_header_bytes,
        };
        return refuse_before_body(request, limits.max_body_bytes, refusal).await;
    }
    if let Some(class) = Class::of(request.method(), request.uri().path())
        && let Some(caller) = request.extensions().get::<crate::auth::Caller>()
        && let Err(retry_after_s) = state
            .rate_limiter
            .check(&caller.tenant, class, Instant::now())
    {
        let refusal = ApiError::RateLimited {
            class: class.name(),
            per_s: state.rate_limiter.rate(class).per_s,
            retry_after_s,
        };
        return refuse_before_body(request, limits.max_body_bytes, refusal).await;
    }
    next.run(request).await
}

/// How long a refused request's body may take to arrive before the connection is given up.
const DRAIN_WITHIN: Duration = Duration::from_secs(2);

/// Answers a refusal decided from the head alone. The body may not have arrived yet (a
/// client that writes headers and body separately): hyper would close the connection after
/// the answer without saying so, and a keep-alive client would write its next request into
/// a closed socket. So the body is read and dropped first, up to the body cap and for at
/// most [`DRAIN_WITHIN`]; a larger or slower one gets `Connection: close`, which tells the
/// client to open a new connection.
async fn refuse_before_body(request: Request, max_body: usize, refusal: ApiError) -> Response {
    let drained = tokio::time::timeout(
        DRAIN_WITHIN,
        axum::body::to_bytes(request.into_body(), max_body),
    )
    .await;
    let mut response = refusal.into_response();
    if !matches!(drained, Ok(Ok(_))) {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// The whole-request timeout. It wraps `run_to_completion` (src/server.rs), so a request cut
/// off here keeps running in its own task and a keyed write still stores its response.
pub async fn deadline(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let within = state.limits.request_timeout;
    if within.is_zero() {
        return next.run(request).await;
    }
    match tokio::time::timeout(within, next.run(request)).await {
        Ok(response) => response,
        Err(_) => ApiError::TimedOut {
            after_s: within.as_secs(),
        }
        .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_refill_at_their_rate_and_say_when() {
        let limiter = RateLimiter::new(
            Rate {
                per_s: 0.5,
                burst: 2,
            },
            Rate::OFF,
        );
        let t0 = Instant::now();
        assert_eq!(limiter.check("acme", Class::Writes, t0), Ok(()));
        assert_eq!(limiter.check("acme", Class::Writes, t0), Ok(()));
        assert_eq!(limiter.check("acme", Class::Writes, t0), Err(2));
        // Another tenant and the other class have their own buckets (events: off).
        assert_eq!(limiter.check("globex", Class::Writes, t0), Ok(()));
        for _ in 0..100 {
            assert_eq!(limiter.check("acme", Class::Events, t0), Ok(()));
        }
        assert_eq!(
            limiter.check("acme", Class::Writes, t0 + Duration::from_secs(1)),
            Err(1)
        );
        assert_eq!(
            limiter.check("acme", Class::Writes, t0 + Duration::from_secs(2)),
            Ok(())
        );
    }

    #[test]
    fn classes_and_rates() {
        assert_eq!(Class::of(&Method::POST, "/v1/events"), Some(Class::Events));
        assert_eq!(Class::of(&Method::GET, "/v1/events"), None);
        assert_eq!(
            Class::of(&Method::PUT, "/v1/replays/r1"),
            Some(Class::Writes)
        );
        assert_eq!(
            Class::of(&Method::DELETE, "/v1/flows/f"),
            Some(Class::Writes)
        );
        assert_eq!(Class::of(&Method::POST, "/v1/edges/e/lease"), None);
        assert_eq!(Rate::parse_per_s("100/s"), Ok(100.0));
        assert_eq!(Rate::parse_per_s("60/m"), Ok(1.0));
        assert_eq!(Rate::parse_per_s("0"), Ok(0.0));
        assert!(Rate::parse_per_s("-1").is_err());
        assert!(Rate::parse_per_s("5/h").is_err());
        assert!(Rate::per_second(0.0).is_off());
        assert_eq!(Rate::per_second(100.0).burst, 200);
        assert_eq!(Rate::describe(100.0), "100/s");
        assert_eq!(Rate::describe(1.0 / 60.0), "1/m");
        assert_eq!(Rate::describe(0.5), "30/m");
        assert_eq!(Rate::describe(2.5), "2.5/s");
    }
}
