//! The retry policy: which failures are transient, full-jitter backoff with a cap, an
//! attempt cap and a retry budget (token bucket). This is the ONLY layer that retries:
//! the HTTP client is built with retries off.
//!
//! Everything here is pure (time and randomness are passed in) so it is tested without
//! sleeping.

use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::clock::RandomSource;

/// Backoff and give-up rules.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RetryPolicy {
    /// `base` of `random(0, min(cap, base·2^n))`, in ms.
    pub base_ms: u64,
    /// `cap` of the same, in ms.
    pub cap_ms: u64,
    /// Transient failures in a row after which the op needs a person.
    pub max_attempts: u32,
    /// The longest `Retry-After` honoured, in ms (longer values are clamped).
    pub max_retry_after_ms: u64,
    /// Retry budget: bucket size (retries that may happen in a burst).
    pub budget_capacity: f64,
    /// Retry budget: tokens regained per second.
    pub budget_refill_per_s: f64,
    /// Retry budget: tokens regained per success.
    pub budget_per_success: f64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            base_ms: 100,
            cap_ms: 5_000,
            max_attempts: 25,
            max_retry_after_ms: 60_000,
            budget_capacity: 50.0,
            budget_refill_per_s: 10.0,
            budget_per_success: 0.5,
        }
    }
}

impl RetryPolicy {
    /// Full jitter: `random(0, min(cap, base·2^failures))` where `failures` counts the
    /// transient failures so far (1 after the first).
    pub fn backoff_ms(&self, failures: u32, rng: &dyn RandomSource) -> u64 {
        let exp = failures.saturating_sub(1).min(40);
        let ceiling = self.base_ms.saturating_mul(1u64 << exp).min(self.cap_ms);
        rng.up_to(ceiling)
    }
}

/// What one send attempt produced, as the retry logic sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum AttemptOutcome {
    /// 2xx.
    Success,
    /// Safe to resend with the same key: connect/timeout/reset, 502/503/504, 429,
    /// 409 `idempotency_key_in_progress`. `retry_after_ms` from the `Retry-After` header.
    Transient { retry_after_ms: Option<u64> },
    /// The token was refused: nothing executed, the op stays pending, the run stops.
    Unauthorized,
    /// Anything else (400, 404, 409 domain, 412, 422, 500…): a person decides.
    Permanent,
}

/// Classifies an HTTP status (+ problem code) into an outcome.
pub fn classify_status(
    status: u16,
    code: Option<&str>,
    retry_after_ms: Option<u64>,
) -> AttemptOutcome {
    match status {
        200..=299 => AttemptOutcome::Success,
        401 => AttemptOutcome::Unauthorized,
        429 | 502 | 503 | 504 => AttemptOutcome::Transient { retry_after_ms },
        409 if code == Some("idempotency_key_in_progress") => {
            AttemptOutcome::Transient { retry_after_ms }
        }
        _ => AttemptOutcome::Permanent,
    }
}

/// Parses `Retry-After` (delta-seconds or an HTTP date) into milliseconds from `now_ms`.
pub fn parse_retry_after(value: &str, now_ms: i64) -> Option<u64> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(secs.saturating_mul(1000));
    }
    let when = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    Some((when.timestamp_millis() - now_ms).max(0) as u64)
}

/// A token bucket bounding retries across a whole sync run, so an outage is not amplified.
pub struct RetryBudget {
    capacity: f64,
    refill_per_ms: f64,
    per_success: f64,
    state: Mutex<(f64, i64)>,
}

impl RetryBudget {
    pub fn new(policy: &RetryPolicy, now_ms: i64) -> Self {
        Self {
            capacity: policy.budget_capacity,
            refill_per_ms: policy.budget_refill_per_s / 1000.0,
            per_success: policy.budget_per_success,
            state: Mutex::new((policy.budget_capacity, now_ms)),
        }
    }

    fn refill(&self, state: &mut (f64, i64), now_ms: i64) {
        let elapsed = (now_ms - state.1).max(0) as f64;
        state.0 = (state.0 + elapsed * self.refill_per_ms).min(self.capacity);
        state.1 = now_ms.max(state.1);
    }

    /// Takes one retry token. `Err(wait_ms)` = empty; a token is back after `wait_ms`.
    pub fn try_take(&self, now_ms: i64) -> Result<(), u64> {
        let mut state = self.state.lock().expect("budget lock");
        self.refill(&mut state, now_ms);
        if state.0 >= 1.0 {
            state.0 -= 1.0;
            Ok(())
        } else if self.refill_per_ms > 0.0 {
            Err(((1.0 - state.0) / self.refill_per_ms).ceil() as u64)
        } else {
            Err(u64::MAX)
        }
    }

    pub fn on_success(&self, now_ms: i64) {
        let mut state = self.state.lock().expect("budget lock");
        self.refill(&mut state, now_ms);
        state.0 = (state.0 + self.per_success).min(self.capacity);
    }

    pub fn tokens(&self, now_ms: i64) -> f64 {
        let mut state = self.state.lock().expect("budget lock");
        self.refill(&mut state, now_ms);
        state.0
    }
}

/// The next state of an op after an attempt: the outbox state machine's transition rule.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// Confirmed by the server.
    Done,
    /// Back to pending; try again at `at_ms` with the same key.
    RetryAt { at_ms: i64 },
    /// Stays pending, untouched (e.g. 401: the run stops, nothing was executed).
    Hold,
    /// A person must decide.
    NeedsAttention { gave_up: bool },
}

/// Decides what follows an attempt. `failures` counts transient failures in a row,
/// including this one.
pub fn next_after(
    outcome: &AttemptOutcome,
    failures: u32,
    policy: &RetryPolicy,
    budget: &RetryBudget,
    now_ms: i64,
    rng: &dyn RandomSource,
) -> Next {
    match outcome {
        AttemptOutcome::Success => {
            budget.on_success(now_ms);
            Next::Done
        }
        AttemptOutcome::Permanent => Next::NeedsAttention { gave_up: false },
        AttemptOutcome::Unauthorized => Next::Hold,
        AttemptOutcome::Transient { retry_after_ms } => {
            if failures >= policy.max_attempts {
                return Next::NeedsAttention { gave_up: true };
            }
            let jitter = policy.backoff_ms(failures, rng);
            let mut delay = match retry_after_ms {
                Some(ra) => (*ra).min(policy.max_retry_after_ms).max(jitter.min(*ra)),
                None => jitter,
            };
            if let Err(wait) = budget.try_take(now_ms) {
                delay = delay.max(wait);
            }
            Next::RetryAt {
                at_ms: now_ms + delay as i64,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::SeededRandom;

    /// Always answers the top of the range, to see the ceiling.
    struct MaxRandom;
    impl RandomSource for MaxRandom {
        fn up_to(&self, max: u64) -> u64 {
            max
        }
    }

    fn policy() -> RetryPolicy {
        RetryPolicy {
            base_ms: 100,
            cap_ms: 2_000,
            max_attempts: 5,
            max_retry_after_ms: 10_000,
            budget_capacity: 3.0,
            budget_refill_per_s: 1.0,
            budget_per_success: 0.5,
        }
    }

    #[test]
    fn backoff_ceiling_doubles_then_caps() {
        let p = policy();
        let ceilings: Vec<u64> = (1..=7).map(|n| p.backoff_ms(n, &MaxRandom)).collect();
        assert_eq!(ceilings, [100, 200, 400, 800, 1600, 2000, 2000]);
    }

    #[test]
    fn backoff_is_full_jitter_within_the_ceiling() {
        let p = policy();
        let rng = SeededRandom::new(7);
        let samples: Vec<u64> = (0..200).map(|_| p.backoff_ms(4, &rng)).collect();
        assert!(samples.iter().all(|&d| d <= 800));
        // Full jitter spreads over the whole range, including near zero.
        assert!(samples.iter().any(|&d| d < 100), "{samples:?}");
        assert!(samples.iter().any(|&d| d > 700), "{samples:?}");
    }

    #[test]
    fn only_transient_statuses_are_retried() {
        for status in [502, 503, 504, 429] {
            assert!(matches!(
                classify_status(status, None, None),
                AttemptOutcome::Transient { .. }
            ));
        }
        assert!(matches!(
            classify_status(409, Some("idempotency_key_in_progress"), Some(1000)),
            AttemptOutcome::Transient {
                retry_after_ms: Some(1000)
            }
        ));
        for (status, code) in [
            (400, "validation_failed"),
            (404, "not_found"),
            (409, "name_taken"),
            (409, "in_use"),
            (412, "version_mismatch"),
            (422, "idempotency_key_reused"),
            (500, "internal"),
        ] {
            assert_eq!(
                classify_status(status, Some(code), None),
                AttemptOutcome::Permanent,
                "{status} {code}"
            );
        }
        assert_eq!(classify_status(201, None, None), AttemptOutcome::Success);
        assert_eq!(
            classify_status(401, None, None),
            AttemptOutcome::Unauthorized
        );
    }

    #[test]
    fn retry_after_is_honoured_and_clamped() {
        let p = policy();
        let budget = RetryBudget::new(&p, 0);
        let rng = SeededRandom::new(1);
        let out = AttemptOutcome::Transient {
            retry_after_ms: Some(3_000),
        };
        assert_eq!(
            next_after(&out, 1, &p, &budget, 1_000, &rng),
            Next::RetryAt { at_ms: 4_000 }
        );
        let long = AttemptOutcome::Transient {
            retry_after_ms: Some(600_000),
        };
        assert_eq!(
            next_after(&long, 1, &p, &budget, 0, &rng),
            Next::RetryAt { at_ms: 10_000 }
        );
        assert_eq!(parse_retry_after("2", 0), Some(2_000));
        assert_eq!(
            parse_retry_after("Thu, 01 Jan 1970 00:00:05 GMT", 1_000),
            Some(4_000)
        );
        assert_eq!(parse_retry_after("soon", 0), None);
    }

    #[test]
    fn gives_up_after_max_attempts_and_never_retries_permanent_failures() {
        let p = policy();
        let budget = RetryBudget::new(&p, 0);
        let rng = SeededRandom::new(1);
        let t = AttemptOutcome::Transient {
            retry_after_ms: None,
        };
        assert!(matches!(
            next_after(&t, 4, &p, &budget, 0, &rng),
            Next::RetryAt { .. }
        ));
        assert_eq!(
            next_after(&t, 5, &p, &budget, 0, &rng),
            Next::NeedsAttention { gave_up: true }
        );
        assert_eq!(
            next_after(&AttemptOutcome::Permanent, 1, &p, &budget, 0, &rng),
            Next::NeedsAttention { gave_up: false }
        );
        assert_eq!(
            next_after(&AttemptOutcome::Unauthorized, 1, &p, &budget, 0, &rng),
            Next::Hold
        );
        assert_eq!(
            next_after(&AttemptOutcome::Success, 0, &p, &budget, 0, &rng),
            Next::Done
        );
    }

    #[test]
    fn an_empty_budget_delays_retries_until_a_token_refills() {
        let p = policy();
        let budget = RetryBudget::new(&p, 0);
        let rng = MaxRandom;
        let t = AttemptOutcome::Transient {
            retry_after_ms: None,
        };
        for _ in 0..3 {
            assert_eq!(
                next_after(&t, 1, &p, &budget, 0, &rng),
                Next::RetryAt { at_ms: 100 }
            );
        }
        // Bucket empty: the next retry waits a full refill interval (1 token/s).
        assert_eq!(
            next_after(&t, 1, &p, &budget, 0, &rng),
            Next::RetryAt { at_ms: 1_000 }
        );
        // Time refills it; successes add half a token.
        assert!(budget.tokens(500) >= 0.49 && budget.tokens(500) < 0.51);
        budget.on_success(500);
        assert!(budget.tokens(500) >= 0.99);
    }
}
