//! Replay sessions: re-deliveries of dead deliveries, created once per session id.

use async_trait::async_trait;
use switchyard_protocol::{DeliveryState, ReplayRequest};

use super::StoreError;

/// A session to create.
#[derive(Debug, Clone, Copy)]
pub struct NewReplay<'a> {
    pub tenant: &'a str,
    pub id: &'a str,
    /// SHA-256 of the canonical request body: the same id with another body is refused.
    pub fingerprint: &'a [u8],
    pub request: &'a ReplayRequest,
    /// Most dead deliveries a filter selects.
    pub filter_limit: u32,
    /// The attempt budget of each re-delivery.
    pub max_attempts: u32,
    pub now: i64,
    /// Negative control for tests only: write the session over any with the same id instead
    /// of claiming the id.
    #[cfg(feature = "fault-injection")]
    pub overwrite: bool,
}

impl NewReplay<'_> {
    /// When the `n`th re-delivery (0-based) is due: all at once, or spaced by the rate.
    pub fn due_at(&self, n: u64) -> i64 {
        let delay = self
            .request
            .rate_per_s
            .map_or(0, |rate| ((n as f64) * 1000.0 / rate).floor() as i64);
        // `as` saturates; the request's rate is bounded, so this only guards the arithmetic.
        self.now.saturating_add(delay)
    }
}

/// A session as stored, with every item and the state of its re-delivery.
#[derive(Debug, Clone)]
pub struct ReplayRow {
    pub id: String,
    pub request: ReplayRequest,
    pub rate_per_s: Option<f64>,
    pub created_at: i64,
    pub cancelled_at: Option<i64>,
    pub items: Vec<ReplayItemRow>,
}

#[derive(Debug, Clone)]
pub struct ReplayItemRow {
    pub original_id: String,
    /// `None` when the original was skipped.
    pub delivery_id: Option<String>,
    pub skip_reason: Option<String>,
    /// The re-delivery's state.
    pub state: Option<DeliveryState>,
}

/// What creating a session found.
#[derive(Debug, Clone)]
pub enum ReplayStart {
    /// Created now (`INSERT … ON CONFLICT DO NOTHING RETURNING` won), with its items.
    Created(ReplayRow),
    /// The id was taken: this is that session, and the fingerprint it was created with.
    Exists {
        fingerprint: Vec<u8>,
        session: ReplayRow,
    },
}

#[async_trait]
pub trait ReplayStore {
    /// Creates the session and, in the same commit, one re-delivery per selected dead
    /// delivery: each original leaves the DLQ through a guarded update (`… AND state =
    /// 'dead' RETURNING`), so two sessions never re-deliver the same one; the rest are
    /// recorded as skipped with the reason.
    async fn start_replay(&self, new: &NewReplay<'_>) -> Result<ReplayStart, StoreError>;

    async fn replay(&self, tenant: &str, id: &str) -> Result<Option<ReplayRow>, StoreError>;

    /// Sessions newest first, after the `(created_at, id)` position `after`.
    async fn list_replays(
        &self,
        tenant: &str,
        after: Option<(i64, String)>,
        limit: u32,
    ) -> Result<Vec<ReplayRow>, StoreError>;

    /// How many dead deliveries a session with `request`'s selection would replay now.
    async fn count_replayable(
        &self,
        tenant: &str,
        request: &ReplayRequest,
        filter_limit: u32,
    ) -> Result<u64, StoreError>;
}

/// Cancelling is a keyed operation: it runs in the idempotency pipeline's unit of work.
#[async_trait]
pub trait ReplayTx {
    /// Marks the session cancelled (once) and withdraws its re-deliveries not yet sent
    /// (`cancelled`; their originals go back to the DLQ). `None`: no such session.
    async fn cancel_replay(
        &mut self,
        tenant: &str,
        id: &str,
        now: i64,
    ) -> Result<Option<ReplayRow>, StoreError>;
}
