//! The injected clock and random source, so retry logic is testable without sleeping.

use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};

use rand::{Rng, SeedableRng};

/// Wall-clock time in Unix milliseconds.
pub trait Clock: Send + Sync + 'static {
    fn now_ms(&self) -> i64;
}

pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        chrono::Utc::now().timestamp_millis()
    }
}

/// A clock that only moves when told to (tests).
#[derive(Default)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    pub fn new(start_ms: i64) -> Self {
        Self(AtomicI64::new(start_ms))
    }
    pub fn advance(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// A source of uniform random numbers.
pub trait RandomSource: Send + Sync + 'static {
    /// A uniform integer in `0..=max`.
    fn up_to(&self, max: u64) -> u64;
}

/// Thread-local OS-seeded randomness.
pub struct ThreadRandom;

impl RandomSource for ThreadRandom {
    fn up_to(&self, max: u64) -> u64 {
        rand::rng().random_range(0..=max)
    }
}

/// A seeded, reproducible source (tests).
pub struct SeededRandom(Mutex<rand::rngs::StdRng>);

impl SeededRandom {
    pub fn new(seed: u64) -> Self {
        Self(Mutex::new(rand::rngs::StdRng::seed_from_u64(seed)))
    }
}

impl RandomSource for SeededRandom {
    fn up_to(&self, max: u64) -> u64 {
        self.0.lock().expect("rng lock").random_range(0..=max)
    }
}
