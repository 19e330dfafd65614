//! The control plane's store: every SQL statement lives behind these traits.
//!
//! One trait per aggregate (one file each): resources, signing secrets, client certificates,
//! idempotency keys, events, deliveries and their attempts, the DLQ, replay sessions, retirement sessions, the
//! edge protocol, diagnostics and their fixes (requeue, DLQ recount),
//! delivery health (`GET /v1/metrics/deliveries`), the gauges `GET /metrics` reads, and
//! API tokens.
//! [`Store`] and [`StoreTx`] gather them; a backend implements each in its own folder
//! (`sqlite/`, `postgres/`), with its own migrations (`migrations/<backend>/`), and [`open`]
//! picks the backend from the `--db` URL's scheme.
//!
//! Rules every backend keeps:
//! - a store method applies one transition atomically; callers hold no transaction, except
//!   the idempotency pipeline's unit of work ([`Store::begin`]), which commits a keyed
//!   request's claim, effect and stored response together, and the retirement advancer's
//!   (`crate::retirement::advance`), which commits a retirement's guarded transition with its
//!   effect on the resource;
//! - every claim and fence is one guarded statement (`UPDATE … WHERE id = ? AND state =
//!   'pending' … RETURNING`, `INSERT … ON CONFLICT DO NOTHING RETURNING`), correct with any
//!   number of writers, never a read followed by an unconditional write;
//! - decisions (retry or dead, when the next attempt is due) are made by the caller with
//!   pure functions and handed in; the store only applies them.

pub mod client_certs;
pub mod deliveries;
pub mod diagnostics;
pub mod dlq;
pub mod edges;
pub mod events;
pub mod gauges;
pub mod history;
pub mod keys;
pub mod metrics;
mod postgres;
pub mod replays;
pub mod resources;
mod retirement_rows;
pub mod retirements;
mod rows;
pub mod sealed;
pub mod secrets;
mod sqlite;
pub mod tokens;

use std::sync::Arc;

use async_trait::async_trait;

pub use client_certs::{
    Activation, CertMeta, ClientCertRow, ClientCertStore, ClientCertTx, ClientIdentity, Upload,
};
pub use deliveries::{
    Claimed, DeliveryStore, DueScope, ExpiredLease, Fence, Finish, FinishedBy, Transition,
};
pub use diagnostics::{
    Backlog, Bounds, DiagnosticsStore, DriftRow, ExpiringCertRow, FailingRow, OverlapRow,
    RecoveryTx, ReplayHold, Requeue, StuckRow,
};
pub use dlq::{DlqCount, DlqStore};
pub use edges::{EdgeStore, RelayedAttemptRow};
pub use events::{Acceptance, Accepted, EventStore, NewEvent, PlannedDelivery};
pub use gauges::{GaugeStore, Gauges, TenantGauges};
pub use history::HistoryStore;
pub use keys::{ClaimOutcome, KeyRecord, KeyScope, KeyState, KeyStore, KeyTx, StoredResponse};
pub use metrics::{HealthRow, MetricsStore, RollupRow};
pub use postgres::PostgresStore;
pub use replays::{NewReplay, ReplayItemRow, ReplayRow, ReplayStart, ReplayStore, ReplayTx};
pub use resources::{ResourceRow, ResourceStore, ResourceTx};
pub use retirements::{
    Inserted, NewRetirement, PendingGroup, RetirementChange, RetirementFacts, RetirementRow,
    RetirementStore, RetirementTx, Tombstone,
};
pub use sealed::SealStore;
pub use secrets::{
    Expiry, NewRotation, Rotation, SecretMeta, SecretStore, SecretTx, SigningKey, SigningSecretRow,
    overlap_ends_at,
};
pub use sqlite::SqliteStore;
pub use tokens::{NewToken, TokenInsert, TokenRow, TokenStore, TokenTx};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database could not be reached or answered with an error.
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    /// The `--db` URL names no backend this build has.
    #[error("unsupported database URL {0:?}: use sqlite://PATH or postgres://USER@HOST/DATABASE")]
    UnsupportedUrl(String),
    /// A sealed value did not open: the main key does not match the database.
    #[error(transparent)]
    Sealed(#[from] crate::sealing::SealError),
    /// The task that writes the worker's outcomes (`crate::delivery::recorder`) is gone
    /// (the runtime is shutting down): the outcome was not recorded.
    #[error("the delivery outcome recorder stopped before recording")]
    RecorderStopped,
}

pub(crate) fn sealed_error(e: crate::sealing::SealError) -> StoreError {
    StoreError::Sealed(e)
}

pub(crate) fn corrupt(what: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(what.to_string())
}

/// A new id: `prefix_` + a time-ordered UUIDv7 in hex.
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", uuid::Uuid::now_v7().simple())
}

/// Everything the control plane stores.
#[async_trait]
pub trait Store:
    ResourceStore
    + SecretStore
    + ClientCertStore
    + SealStore
    + KeyStore
    + EventStore
    + DeliveryStore
    + DiagnosticsStore
    + DlqStore
    + ReplayStore
    + RetirementStore
    + EdgeStore
    + MetricsStore
    + GaugeStore
    + HistoryStore
    + TokenStore
    + Send
    + Sync
    + 'static
{
    /// Cheap reachability check for `/healthz`.
    async fn ping(&self) -> Result<(), StoreError>;

    /// Starts the unit of work of one keyed request (the idempotency pipeline's): the claim,
    /// the operation's writes and the stored response commit together or not at all.
    /// Dropping it without [`StoreTx::commit`] rolls it back.
    async fn begin(&self) -> Result<Box<dyn StoreTx>, StoreError>;

    /// Wakes `wake` whenever another process commits new due work (PostgreSQL: `LISTEN`),
    /// from a task the caller aborts. `None` when the backend cannot tell: the worker polls.
    fn wake_on_new_work(
        &self,
        _wake: Arc<tokio::sync::Notify>,
    ) -> Option<tokio::task::JoinHandle<()>> {
        None
    }
}

/// One unit of work: what an idempotent operation may do inside it.
#[async_trait]
pub trait StoreTx:
    ResourceTx + SecretTx + ClientCertTx + KeyTx + ReplayTx + RecoveryTx + RetirementTx + TokenTx + Send
{
    async fn commit(self: Box<Self>) -> Result<(), StoreError>;
}

/// How many connections a replica's PostgreSQL pool holds at most, by default.
pub const POSTGRES_POOL: u32 = 16;

/// Opens the backend the URL's scheme names (`sqlite://PATH`, `sqlite::memory:`,
/// `postgres://…` or `postgresql://…`) and runs its pending migrations.
/// Its main key is the one the server would use with no `--main-key-file`: beside a SQLite
/// file (created when missing); for an in-memory or PostgreSQL database (tests), one key per
/// process, so several handles of one process share it.
pub async fn open(url: &str) -> Result<Arc<dyn Store>, StoreError> {
    let sealer = match crate::sealing::default_key_path(url) {
        Some(_) => Arc::new(crate::sealing::load(url, None)?.sealer),
        None => crate::sealing::process_key(),
    };
    open_with(url, POSTGRES_POOL, sealer).await
}

/// [`open`], with at most `max_connections` to PostgreSQL.
pub async fn open_with(
    url: &str,
    max_connections: u32,
    sealer: Arc<crate::sealing::Sealer>,
) -> Result<Arc<dyn Store>, StoreError> {
    let scheme = url.split(':').next().unwrap_or_default();
    match scheme {
        "sqlite" => Ok(Arc::new(SqliteStore::open(url, sealer).await?)),
        "postgres" | "postgresql" => Ok(Arc::new(
            PostgresStore::open(url, max_connections.max(2), sealer).await?,
        )),
        _ => Err(StoreError::UnsupportedUrl(redact(url))),
    }
}

/// A database URL without its password, for messages and logs.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(start), Some(at)) if at > start => {
            let userinfo = &url[start + 3..at];
            match userinfo.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..start + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

/// A PostgreSQL URL naming database `name` on the same server: `url`'s database path
/// replaced (or added), its query string kept. For the tests and benchmarks, which each
/// create a database of their own.
pub fn with_database(url: &str, name: &str) -> String {
    let (head, query) = match url.split_once('?') {
        Some((h, q)) => (h, format!("?{q}")),
        None => (url, String::new()),
    };
    let authority_start = head.find("://").map_or(0, |i| i + 3);
    let server = match head[authority_start..].find('/') {
        Some(slash) => &head[..authority_start + slash],
        None => head,
    };
    format!("{server}/{name}{query}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_their_password_in_messages() {
        assert_eq!(
            redact("postgres://app:s3cret@db:5432/cp"),
            "postgres://app:***@db:5432/cp"
        );
        assert_eq!(redact("postgres://app@db/cp"), "postgres://app@db/cp");
        assert_eq!(redact("sqlite://cp.db"), "sqlite://cp.db");
    }

    #[test]
    fn database_urls_keep_server_and_options() {
        assert_eq!(
            with_database("postgres://postgres@127.0.0.1:5432", "t1"),
            "postgres://postgres@127.0.0.1:5432/t1"
        );
        assert_eq!(
            with_database("postgres://u:p@db:5433/postgres?sslmode=disable", "t1"),
            "postgres://u:p@db:5433/t1?sslmode=disable"
        );
    }
}
