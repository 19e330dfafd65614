//! Three replicas on a database of their own.

use std::time::Duration;

use futures::future::join_all;

use crate::postgres::TestDatabase;
use crate::support::{Api, Child, FAST, spawn_serve};

pub struct Cluster {
    pub nodes: Vec<Child>,
    pub apis: Vec<Api>,
    // Last: the database is dropped after the processes that use it.
    _db: TestDatabase,
    /// Holds the main key file every replica shares.
    _keys: tempfile::TempDir,
}

impl Cluster {
    /// Starts `n` replicas named `replica-0`… at once (they apply the migrations together:
    /// one applies, the others wait), with `faults` (`SWITCHYARD_TEST_FAULTS`) set.
    pub async fn start(n: usize, faults: &str) -> Self {
        Self::start_with(n, faults, "5s").await
    }

    /// [`Cluster::start`] with the delivery lease margin `lease_margin`: short where a test
    /// waits for a killed replica's leases to expire.
    pub async fn start_with(n: usize, faults: &str, lease_margin: &str) -> Self {
        let db = TestDatabase::create().await;
        let keys = tempfile::tempdir().unwrap();
        let key_file = keys.path().join("main-key");
        switchyard_control_plane::sealing::Sealer::ephemeral()
            .write_file(&key_file)
            .unwrap();
        let key_file = key_file.display().to_string();
        let names: Vec<String> = (0..n).map(|i| format!("replica-{i}")).collect();
        let nodes = join_all(names.iter().map(|name| {
            let url = db.url.clone();
            let name = name.clone();
            let faults = faults.to_owned();
            let margin = lease_margin.to_owned();
            let key_file = key_file.clone();
            async move {
                let args = [
                    "--retry-schedule",
                    FAST,
                    "--delivery-lease-margin",
                    &margin,
                    "--idempotency-lease",
                    "2s",
                    "--worker-id",
                    &name,
                    "--db-max-connections",
                    "8",
                    "--main-key-file",
                    &key_file,
                ];
                spawn_serve(&url, &args, &[("SWITCHYARD_TEST_FAULTS", &faults)]).await
            }
        }))
        .await;
        let apis = nodes
            .iter()
            .map(|n| Api::new(n.url.clone().unwrap()))
            .collect();
        Self {
            nodes,
            apis,
            _db: db,
            _keys: keys,
        }
    }

    /// The replica that serves request number `i`.
    pub fn api(&self, i: usize) -> &Api {
        &self.apis[i % self.apis.len()]
    }
}

/// Runs `f(i)` for `0..n` with at most `parallel` at once.
pub async fn spread<F, Fut, T>(n: usize, parallel: usize, f: F) -> Vec<T>
where
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = T>,
{
    use futures::StreamExt;
    futures::stream::iter((0..n).map(f))
        .buffer_unordered(parallel)
        .collect()
        .await
}

/// Polls `check` until it returns `Some`, for at most `within`.
pub async fn eventually<T, Fut>(what: &str, within: Duration, mut check: impl FnMut() -> Fut) -> T
where
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + within;
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
