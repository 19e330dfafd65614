//! The narrow storage interface of the control plane.
//!
//! Domain logic (`crate::resources`) and the idempotency protocol (`crate::idempotency`) are
//! written once against these traits; a backend only runs SQL. SQLite is the default backend.

mod sqlite;

use async_trait::async_trait;
use serde_json::Value;
use switchyard_protocol::ResourceKind;

pub use sqlite::SqliteStore;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database could not be reached or answered with an error.
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
}

/// A resource as stored. Times are unix milliseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceRow {
    pub kind: ResourceKind,
    pub name: String,
    pub version: i64,
    pub spec: Value,
    pub status: Value,
    pub created_at: i64,
    pub updated_at: i64,
}

/// A webhook signing secret of a target.
#[derive(Debug, Clone, PartialEq)]
pub struct SigningSecretRow {
    pub id: String,
    pub secret: String,
    pub created_at: i64,
    pub expires_at: Option<i64>,
}

/// Who owns an idempotency key: keys are scoped to their tenant.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KeyScope {
    pub tenant: String,
    pub key: String,
}

/// A response exactly as it was sent, to be replayed byte for byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyState {
    InProgress,
    Completed,
}

/// The idempotency record of a key, as another request finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRecord {
    pub fingerprint: Vec<u8>,
    pub state: KeyState,
    pub attempt: i64,
    pub locked_until: i64,
    pub created_at: i64,
    pub response: Option<StoredResponse>,
}

/// What an atomic claim found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaimOutcome {
    /// This request inserted the key and owns its execution, fenced by `attempt`.
    Claimed { attempt: i64 },
    /// The key already existed.
    Existing(KeyRecord),
}

#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// Cheap reachability check for `/healthz`.
    async fn ping(&self) -> Result<(), StoreError>;

    /// Atomically claims `scope` (`INSERT … ON CONFLICT DO NOTHING RETURNING`): either this
    /// call inserts an in-progress row leased until `locked_until`, or it returns the row
    /// that is already there. Never check-then-insert.
    async fn claim_key(
        &self,
        scope: &KeyScope,
        fingerprint: &[u8],
        now: i64,
        locked_until: i64,
    ) -> Result<ClaimOutcome, StoreError>;

    /// Takes over an in-progress claim whose lease expired before `now`, if it is still at
    /// `seen_attempt`. Returns the new attempt number, or `None` when someone else won.
    async fn take_over_key(
        &self,
        scope: &KeyScope,
        seen_attempt: i64,
        now: i64,
        locked_until: i64,
    ) -> Result<Option<i64>, StoreError>;

    /// Deletes an in-progress claim at `attempt`, so a corrected request can reuse the key.
    async fn release_key(&self, scope: &KeyScope, attempt: i64) -> Result<(), StoreError>;

    /// Reads a key's record (for a request that lost a race).
    async fn get_key(&self, scope: &KeyScope) -> Result<Option<KeyRecord>, StoreError>;

    /// Deletes keys created before `created_before`; returns how many.
    async fn sweep_keys(&self, created_before: i64) -> Result<u64, StoreError>;

    /// Starts a write transaction (SQLite: `BEGIN IMMEDIATE` on the single writer).
    async fn begin(&self) -> Result<Box<dyn StoreTx>, StoreError>;

    async fn get_resource(
        &self,
        tenant: &str,
        kind: ResourceKind,
        name: &str,
    ) -> Result<Option<ResourceRow>, StoreError>;

    /// Resources of one kind ordered by name, starting after `after`.
    async fn list_resources(
        &self,
        tenant: &str,
        kind: ResourceKind,
        after: Option<&str>,
        limit: u32,
    ) -> Result<Vec<ResourceRow>, StoreError>;
}

/// One write transaction. Dropping it without `commit` rolls it back.
#[async_trait]
pub trait StoreTx: Send {
    async fn get_resource(
        &mut self,
        tenant: &str,
        kind: ResourceKind,
        name: &str,
    ) -> Result<Option<ResourceRow>, StoreError>;

    /// Inserts a new resource; `false` when the name is taken.
    async fn insert_resource(
        &mut self,
        tenant: &str,
        row: &ResourceRow,
    ) -> Result<bool, StoreError>;

    /// Replaces a resource if it is still at `expected_version`; `false` otherwise.
    async fn update_resource(
        &mut self,
        tenant: &str,
        row: &ResourceRow,
        expected_version: i64,
    ) -> Result<bool, StoreError>;

    async fn delete_resource(
        &mut self,
        tenant: &str,
        kind: ResourceKind,
        name: &str,
    ) -> Result<bool, StoreError>;

    /// Names of flows that reference the endpoint or target `name`, at most `limit`.
    async fn flows_referencing(
        &mut self,
        tenant: &str,
        kind: ResourceKind,
        name: &str,
        limit: u32,
    ) -> Result<Vec<String>, StoreError>;

    async fn insert_signing_secret(
        &mut self,
        tenant: &str,
        target: &str,
        secret: &SigningSecretRow,
    ) -> Result<(), StoreError>;

    async fn delete_signing_secrets(
        &mut self,
        tenant: &str,
        target: &str,
    ) -> Result<(), StoreError>;

    /// [`Store::claim_key`] inside this transaction: the claim commits (or rolls back) with
    /// the effect and the stored response, so a local effect needs one write transaction.
    async fn claim_key(
        &mut self,
        scope: &KeyScope,
        fingerprint: &[u8],
        now: i64,
        locked_until: i64,
    ) -> Result<ClaimOutcome, StoreError>;

    /// [`Store::take_over_key`] inside this transaction.
    async fn take_over_key(
        &mut self,
        scope: &KeyScope,
        seen_attempt: i64,
        now: i64,
        locked_until: i64,
    ) -> Result<Option<i64>, StoreError>;

    /// Writes an in-progress claim unconditionally, replacing any row. Only the negative
    /// control `ClaimStrategy::CheckThenInsert` uses this; it is the race the atomic claim
    /// prevents.
    #[doc(hidden)]
    async fn overwrite_claim(
        &mut self,
        scope: &KeyScope,
        fingerprint: &[u8],
        now: i64,
        locked_until: i64,
    ) -> Result<(), StoreError>;

    /// Marks the key completed with `response`, only if it is still in progress at `attempt`
    /// (the fencing check). `false` means a takeover fenced this holder out: roll back.
    async fn complete_key(
        &mut self,
        scope: &KeyScope,
        attempt: i64,
        response: &StoredResponse,
    ) -> Result<bool, StoreError>;

    async fn commit(self: Box<Self>) -> Result<(), StoreError>;

    /// The open SQLite transaction, for operations that keep their own SQL (the delivery
    /// pipeline's keyed writes). `None` on other backends.
    fn sqlite(&mut self) -> Option<&mut sqlx::SqliteConnection> {
        None
    }
}
