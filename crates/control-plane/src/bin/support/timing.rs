//! Request latency for the benches: `runs` sequential GETs, p50 and p95 in milliseconds.

use std::time::{Duration, Instant};

pub fn percentiles(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    let at = |p: f64| {
        samples[((samples.len() as f64 * p) as usize).min(samples.len() - 1)].as_secs_f64() * 1000.0
    };
    (at(0.50), at(0.95))
}

/// GETs `url` `runs` times with `token`; fails on a non-2xx answer.
pub async fn latency(
    client: &reqwest::Client,
    url: &str,
    token: &str,
    runs: usize,
) -> anyhow::Result<(f64, f64)> {
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        let response = client.get(url).bearer_auth(token).send().await?;
        anyhow::ensure!(
            response.status().is_success(),
            "{url}: HTTP {}",
            response.status()
        );
        response.bytes().await?;
        samples.push(started.elapsed());
    }
    Ok(percentiles(samples))
}
