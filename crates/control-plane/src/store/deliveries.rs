//! Deliveries and their attempts: claims under a lease, fenced outcomes, reads.

use async_trait::async_trait;
use switchyard_protocol::{Delivery, Hop, TargetSpec};

use super::StoreError;
use crate::delivery::http::AttemptResult;

/// An attempt claimed under a lease, with everything needed to send it.
#[derive(Debug, Clone)]
pub struct Claimed {
    pub tenant: String,
    pub delivery_id: String,
    pub attempt_id: String,
    /// 1-based over the delivery's hops.
    pub number: u32,
    /// The hop this attempt covers, and its number within that hop (1-based; what the
    /// receiver sees as `switchyard-attempt`).
    pub hop: Hop,
    pub hop_number: u32,
    /// The delivery's attempt budget per hop: the decision after a failure needs it.
    pub max_attempts: u32,
    pub lease_token: i64,
    pub lease_until: i64,
    pub event_id: String,
    pub target_name: String,
    /// `None` when the target was deleted since the delivery was created.
    pub target: Option<TargetSpec>,
    /// The target's secrets valid at claim time; the signer drops any expired by send time.
    pub secrets: Vec<super::SigningKey>,
    pub body: String,
    pub edge: Option<String>,
}

impl Claimed {
    pub fn fence(&self) -> Fence<'_> {
        Fence {
            delivery_id: &self.delivery_id,
            attempt_id: &self.attempt_id,
            lease_token: self.lease_token,
        }
    }
}

/// Names an attempt and the lease it was claimed under: its outcome is recorded only while
/// the delivery is still in flight under that lease token.
#[derive(Debug, Clone, Copy)]
pub struct Fence<'a> {
    pub delivery_id: &'a str,
    pub attempt_id: &'a str,
    pub lease_token: i64,
}

/// One outcome to record with [`DeliveryStore::finish_attempts`]: what
/// [`DeliveryStore::finish_attempt`] takes.
#[derive(Debug, Clone, Copy)]
pub struct Finish<'a> {
    pub fence: Fence<'a>,
    pub result: &'a AttemptResult,
    pub finished_by: FinishedBy,
    pub next: Transition,
}

/// Who records an attempt's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishedBy {
    /// The worker, sync request or edge that sent it.
    Sender,
    /// The reaper, after the lease expired unreported.
    Reaper,
}

impl FinishedBy {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sender => "sender",
            Self::Reaper => "reaper",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "sender" => Some(Self::Sender),
            "reaper" => Some(Self::Reaper),
            _ => None,
        }
    }
}

/// Where a delivery goes after an attempt: decided by `crate::delivery::decide`, applied by
/// [`DeliveryStore::finish_attempt`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    Succeeded,
    /// Pending again, due at this time (unix ms). A replay re-delivery whose session was
    /// cancelled meanwhile is withdrawn instead (`cancelled`, its original back in the DLQ).
    RetryAt(i64),
    /// Into the DLQ.
    Dead,
}

/// Which due deliveries a claim takes, and so which hop the attempts cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DueScope<'a> {
    /// The control plane's own: `sync` and `async_inline`.
    Direct,
    /// The `async_relay` deliveries of one edge plane.
    Relay { tenant: &'a str, edge: &'a str },
    /// `async_relay` deliveries due at or before `due_before` that no edge plane leased:
    /// claimed by the control plane to be counted as a failed hop.
    UnpickedRelays { due_before: i64 },
}

impl DueScope<'_> {
    /// The hop an attempt claimed in this scope covers.
    pub fn hop(self) -> Hop {
        match self {
            Self::Direct => Hop::ControlPlaneWebhook,
            Self::Relay { .. } => Hop::EdgeWebhook,
            Self::UnpickedRelays { .. } => Hop::ControlPlaneEdge,
        }
    }
}

/// An in-flight attempt whose lease ran out.
#[derive(Debug, Clone)]
pub struct ExpiredLease {
    pub delivery_id: String,
    pub attempt_id: String,
    pub lease_token: i64,
    pub owner: Option<String>,
    pub hop: Hop,
    /// The attempt's number within its hop.
    pub hop_number: u32,
    pub max_attempts: u32,
}

impl ExpiredLease {
    pub fn fence(&self) -> Fence<'_> {
        Fence {
            delivery_id: &self.delivery_id,
            attempt_id: &self.attempt_id,
            lease_token: self.lease_token,
        }
    }
}

#[async_trait]
pub trait DeliveryStore {
    /// Claims up to `limit` due deliveries of `scope` for `owner`. Each claim is one guarded
    /// update (`… WHERE id = ? AND state = 'pending' RETURNING`) that moves the delivery to
    /// `in_flight` under a lease (target timeout + `lease_margin_ms`) and bumps its fencing
    /// token, with its attempt row recorded as in flight in the same commit: the recovery
    /// point before the external call.
    async fn claim_due(
        &self,
        scope: DueScope<'_>,
        now: i64,
        limit: u32,
        owner: &str,
        lease_margin_ms: i64,
    ) -> Result<Vec<Claimed>, StoreError>;

    /// Records the outcome of the fenced attempt and applies `next`, only if the delivery is
    /// still in flight under the fence's lease token and attempt. `false`: fenced out,
    /// nothing written. A delivery that dies records the attempt's hop as the one whose
    /// budget ran out.
    async fn finish_attempt(
        &self,
        fence: Fence<'_>,
        result: &AttemptResult,
        finished_by: FinishedBy,
        next: Transition,
        now: i64,
    ) -> Result<bool, StoreError>;

    /// Records several outcomes, each exactly as [`Self::finish_attempt`] would: its own
    /// fenced update, `false` when fenced out. One answer per item, in order. A backend may
    /// commit them together (SQLite: one transaction, so a worker whose attempts finish at
    /// once pays one commit, not one each); an error in one item then fails only that item.
    async fn finish_attempts(
        &self,
        items: &[Finish<'_>],
        now: i64,
    ) -> Vec<Result<bool, StoreError>> {
        finish_each(self, items, now).await
    }

    /// In-flight attempts whose lease expired at or before `now`, oldest first.
    async fn expired_leases(&self, now: i64, limit: u32) -> Result<Vec<ExpiredLease>, StoreError>;

    /// When a worker should look again: the earliest due attempt (a relay one `pickup_ms`
    /// later, when it would count as unpicked) or lease expiry.
    async fn next_wakeup(&self, pickup_ms: i64) -> Result<Option<i64>, StoreError>;

    /// A delivery with its attempts.
    async fn delivery(&self, tenant: &str, id: &str) -> Result<Option<Delivery>, StoreError>;

    /// Deliveries of `endpoint` still pending or in flight.
    async fn pending_count(&self, tenant: &str, endpoint: &str) -> Result<u64, StoreError>;

    /// Negative control: records an outcome and applies `next` without the fence (no
    /// state, lease token or attempt check), as a reaper acting on a stale read would.
    #[cfg(feature = "fault-injection")]
    async fn finish_attempt_unfenced(
        &self,
        fence: Fence<'_>,
        result: &AttemptResult,
        finished_by: FinishedBy,
        next: Transition,
        now: i64,
    ) -> Result<bool, StoreError>;

    /// Negative control: the ids a claim would take, read outside any write.
    #[cfg(feature = "fault-injection")]
    async fn due_ids(&self, now: i64, limit: u32) -> Result<Vec<String>, StoreError>;

    /// Negative control: claims these deliveries whatever their state, the way a worker
    /// that decided from a stale read would (no `state = 'pending'` guard).
    #[cfg(feature = "fault-injection")]
    async fn claim_unguarded(
        &self,
        ids: &[String],
        now: i64,
        owner: &str,
        lease_margin_ms: i64,
    ) -> Result<Vec<Claimed>, StoreError>;
}

/// Records each item on its own with [`DeliveryStore::finish_attempt`].
pub(crate) async fn finish_each<S: DeliveryStore + ?Sized>(
    store: &S,
    items: &[Finish<'_>],
    now: i64,
) -> Vec<Result<bool, StoreError>> {
    let mut answers = Vec::with_capacity(items.len());
    for f in items {
        answers.push(
            store
                .finish_attempt(f.fence, f.result, f.finished_by, f.next, now)
                .await,
        );
    }
    answers
}

/// What a backend that records a batch in one transaction answers: each item's outcome,
/// or, when that transaction failed (it rolled back, so nothing of it is recorded), each
/// item recorded on its own, so that only the one at fault fails.
pub(crate) async fn together_or_each<S: DeliveryStore + ?Sized>(
    store: &S,
    together: Result<Vec<bool>, StoreError>,
    items: &[Finish<'_>],
    now: i64,
) -> Vec<Result<bool, StoreError>> {
    match together {
        Ok(recorded) => recorded.into_iter().map(Ok).collect(),
        Err(e) => {
            tracing::warn!(error = %e, items = items.len(),
                "recording attempts together failed; recording each on its own");
            finish_each(store, items, now).await
        }
    }
}
