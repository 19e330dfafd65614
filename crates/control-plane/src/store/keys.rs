//! Idempotency keys: the atomic claim, lease takeover, fenced completion.

use async_trait::async_trait;

use super::{StoreError, corrupt};
use crate::sealing::{Sealer, response_aad};

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

impl StoredResponse {
    /// An `application/json` answer of `body`.
    pub fn json(status: u16, body: &impl serde::Serialize) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: serde_json::to_vec(body).expect("answers serialize"),
        }
    }
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

/// Key operations that commit on their own (the external-effect path and the sweeper).
#[async_trait]
pub trait KeyStore {
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

    /// Extends the lease of the in-progress claim at `attempt` to `locked_until` (never
    /// shortens it): the holder's heartbeat while its external call runs, so no copy takes
    /// over a live holder. `false`: it was fenced out (taken over) or completed.
    async fn renew_key(
        &self,
        scope: &KeyScope,
        attempt: i64,
        locked_until: i64,
    ) -> Result<bool, StoreError>;

    /// Deletes an in-progress claim at `attempt`, so a corrected request can reuse the key.
    async fn release_key(&self, scope: &KeyScope, attempt: i64) -> Result<(), StoreError>;

    /// Reads a key's record (for a request that lost a race).
    async fn get_key(&self, scope: &KeyScope) -> Result<Option<KeyRecord>, StoreError>;

    /// Deletes keys created before `created_before`; returns how many.
    async fn sweep_keys(&self, created_before: i64) -> Result<u64, StoreError>;
}

/// Key operations inside a unit of work: the claim commits (or rolls back) with the effect
/// and the stored response.
#[async_trait]
pub trait KeyTx {
    /// [`KeyStore::claim_key`] inside this unit of work. When the key exists, the record
    /// returned is the committed one (a concurrent claimer's insert is waited for).
    async fn claim_key(
        &mut self,
        scope: &KeyScope,
        fingerprint: &[u8],
        now: i64,
        locked_until: i64,
    ) -> Result<ClaimOutcome, StoreError>;

    /// [`KeyStore::take_over_key`] inside this unit of work.
    async fn take_over_key(
        &mut self,
        scope: &KeyScope,
        seen_attempt: i64,
        now: i64,
        locked_until: i64,
    ) -> Result<Option<i64>, StoreError>;

    /// Records the key as completed with `response` in one guarded statement (`INSERT …
    /// completed … ON CONFLICT DO NOTHING RETURNING`), for a local effect already written in
    /// this unit of work: `Claimed` — the key is this unit's and commits with the effect;
    /// `Existing` — a copy of the request (or another use of the key) got there first, and
    /// the caller rolls its effect back. An insert of the same key not yet committed elsewhere
    /// is waited for, so the record returned is a committed one.
    async fn record_completed_key(
        &mut self,
        scope: &KeyScope,
        fingerprint: &[u8],
        now: i64,
        response: &StoredResponse,
    ) -> Result<ClaimOutcome, StoreError>;

    /// Marks the key completed with `response`, only if it is still in progress at `attempt`
    /// (the fencing check). `false` means a takeover fenced this holder out: roll back.
    async fn complete_key(
        &mut self,
        scope: &KeyScope,
        attempt: i64,
        response: &StoredResponse,
    ) -> Result<bool, StoreError>;

    /// Writes an in-progress claim unconditionally, replacing any row: the race the atomic
    /// claim prevents. Only the negative control `ClaimStrategy::CheckThenInsert` uses it.
    #[cfg(feature = "fault-injection")]
    async fn overwrite_claim(
        &mut self,
        scope: &KeyScope,
        fingerprint: &[u8],
        now: i64,
        locked_until: i64,
    ) -> Result<(), StoreError>;
}

/// A stored response as both backends write it: status, headers (JSON) and the body sealed to
/// its key.
pub(super) fn response_columns(
    sealer: &Sealer,
    scope: &KeyScope,
    response: &StoredResponse,
) -> Result<(i64, String, Vec<u8>), StoreError> {
    let headers = serde_json::to_string(&response.headers).map_err(corrupt)?;
    let body = sealer
        .seal(&response.body, &response_aad(&scope.tenant, &scope.key))
        .into_bytes();
    Ok((i64::from(response.status), headers, body))
}
