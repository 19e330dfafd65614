//! The retry schedule: the delay before each attempt, with jitter.
//!
//! Deliveries use bounded jitter: each attempt lands near its slot of the schedule
//! (±20 %), so the fifth attempt of `0s,10s,1m,10m,1h` comes about an hour after the
//! fourth, and a receiver that is down for ten minutes still gets its later attempts.
//! Full jitter (anywhere in `[0, base]`) suits clients that retry on their own, where
//! spreading a crowd matters more than keeping a schedule: the edge plane's reports.

use std::sync::Arc;
use std::time::Duration;

/// A source of uniform randomness in `[0, 1)`, injected so retry timing is testable.
pub trait RandomSource: Send + Sync + 'static {
    fn unit(&self) -> f64;
}

/// The thread-local generator of `rand`.
pub struct ThreadRandom;

impl RandomSource for ThreadRandom {
    fn unit(&self) -> f64 {
        rand::random::<f64>()
    }
}

/// Always the same value (tests): `Fixed(1.0)` means "no jitter, the full delay".
pub struct Fixed(pub f64);

impl RandomSource for Fixed {
    fn unit(&self) -> f64 {
        self.0
    }
}

/// How far a delay strays from its base.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Jitter {
    /// Uniform in `[0, base]`.
    Full,
    /// Uniform in `[base × (1 − f), base × (1 + f)]`, `f` in `[0, 1]`.
    Bounded(f64),
}

/// The jitter of the delivery schedule: ±20 % around each slot.
pub const DELIVERY_JITTER: Jitter = Jitter::Bounded(0.2);

/// Attempts and their delays. `delays[n-1]` is the base delay before attempt `n`; the number
/// of delays is the attempt budget (5 by default: `0s,10s,1m,10m,1h`).
#[derive(Clone)]
pub struct RetryPolicy {
    pub delays: Vec<Duration>,
    pub random: Arc<dyn RandomSource>,
    pub jitter: Jitter,
}

impl RetryPolicy {
    /// A policy with full jitter (client-side retries).
    pub fn new(delays: Vec<Duration>, random: Arc<dyn RandomSource>) -> Self {
        Self::with_jitter(delays, random, Jitter::Full)
    }

    pub fn with_jitter(
        delays: Vec<Duration>,
        random: Arc<dyn RandomSource>,
        jitter: Jitter,
    ) -> Self {
        assert!(
            !delays.is_empty(),
            "a retry schedule has at least one attempt"
        );
        Self {
            delays,
            random,
            jitter,
        }
    }

    pub fn max_attempts(&self) -> u32 {
        u32::try_from(self.delays.len()).unwrap_or(u32::MAX)
    }

    /// Milliseconds to wait before attempt `number` (1-based), jittered around the base
    /// delay. The first attempt of the default schedule is immediate.
    pub fn delay_before_ms(&self, number: u32) -> i64 {
        let index = (number.max(1) - 1) as usize;
        let base = self.delays.get(index).or(self.delays.last()).copied();
        let base_ms = base.map_or(0.0, |d| d.as_millis() as f64);
        let unit = self.random.unit().clamp(0.0, 1.0);
        let factor = match self.jitter {
            Jitter::Full => unit,
            Jitter::Bounded(f) => {
                let f = f.clamp(0.0, 1.0);
                1.0 - f + 2.0 * f * unit
            }
        };
        (base_ms * factor).round() as i64
    }
}

/// The one duration parser (`500ms`, `90s`, `10m`, `24h`, `2d`), shared with the console.
pub use switchyard_protocol::parse_duration;

/// Parses a schedule like `0s,10s,1m,10m,1h` (1-20 entries).
pub fn parse_schedule(text: &str) -> Result<Vec<Duration>, String> {
    let delays = text
        .split(',')
        .map(parse_duration)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    if delays.is_empty() || delays.len() > 20 {
        return Err("a retry schedule has 1 to 20 delays".into());
    }
    Ok(delays)
}

/// Formats delays the way `parse_schedule` reads them (`0s`, `50ms`, `10s`, `1m`, `1h`).
pub fn format_schedule(delays: &[Duration]) -> Vec<String> {
    delays
        .iter()
        .map(|d| {
            let ms = d.as_millis();
            match ms {
                0 => "0s".to_owned(),
                ms if ms % 3_600_000 == 0 => format!("{}h", ms / 3_600_000),
                ms if ms % 60_000 == 0 => format!("{}m", ms / 60_000),
                ms if ms % 1_000 == 0 => format!("{}s", ms / 1_000),
                ms => format!("{ms}ms"),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_format_back_to_their_text() {
        for text in [
            "0s,10s,1m,10m,1h",
            "0s,50ms,100ms,200ms,400ms",
            "0s,2s,10s,30s,1m",
        ] {
            assert_eq!(
                format_schedule(&parse_schedule(text).unwrap()).join(","),
                text
            );
        }
    }

    #[test]
    fn default_schedule_parses_to_five_attempts() {
        let delays = parse_schedule("0s,10s,1m,10m,1h").unwrap();
        assert_eq!(
            delays,
            [0, 10, 60, 600, 3600].map(Duration::from_secs).to_vec()
        );
        assert!(parse_schedule("0s,10x").is_err());
        assert!(parse_schedule("").is_err());
    }

    #[test]
    fn full_jitter_spans_zero_to_the_base_delay() {
        let delays = parse_schedule("0s,10s,1m,10m,1h").unwrap();
        let top = RetryPolicy::new(delays.clone(), Arc::new(Fixed(1.0)));
        let bottom = RetryPolicy::new(delays.clone(), Arc::new(Fixed(0.0)));
        let mid = RetryPolicy::new(delays, Arc::new(Fixed(0.5)));
        assert_eq!(top.max_attempts(), 5);
        assert_eq!(top.delay_before_ms(1), 0);
        assert_eq!(top.delay_before_ms(2), 10_000);
        assert_eq!(top.delay_before_ms(5), 3_600_000);
        assert_eq!(mid.delay_before_ms(3), 30_000);
        assert_eq!(bottom.delay_before_ms(4), 0);
    }

    #[test]
    fn bounded_jitter_keeps_each_attempt_near_its_slot() {
        let delays = parse_schedule("0s,10s,1m,10m,1h").unwrap();
        let at = |unit: f64| {
            RetryPolicy::with_jitter(delays.clone(), Arc::new(Fixed(unit)), DELIVERY_JITTER)
        };
        let (low, mid, high) = (at(0.0), at(0.5), at(1.0));
        assert_eq!(
            low.delay_before_ms(1),
            0,
            "the first attempt stays immediate"
        );
        assert_eq!(low.delay_before_ms(5), 2_880_000, "an hour, less 20 %");
        assert_eq!(mid.delay_before_ms(5), 3_600_000);
        assert_eq!(high.delay_before_ms(5), 4_320_000, "an hour, plus 20 %");
        assert_eq!(
            (low.delay_before_ms(2), high.delay_before_ms(2)),
            (8_000, 12_000)
        );
        // Whatever the draw, attempt 5 waits most of an hour after attempt 4 (full jitter
        // could fire it seconds later).
        for unit in [0.0, 0.01, 0.3, 0.77, 0.999] {
            let d = at(unit).delay_before_ms(5);
            assert!((2_880_000..=4_320_000).contains(&d), "{d}");
        }
    }
}
