//! What `GET /v1/diagnostics` reads (src/diagnostics/), the edge contact it needs, and the
//! two fixes that are writes of their own: the requeue of a stuck delivery and the DLQ
//! recount. Every read goes through an index (`migrations/*/…_diagnostics.sql`) and is
//! bounded: samples by [`Bounds::sample`], counts by [`Bounds::count_cap`], subjects by
//! [`Bounds::subjects`], so a check costs the size of the problem it finds, never of the
//! delivery history.

use async_trait::async_trait;
use switchyard_protocol::{DeliveryState, DlqRecount, Hop};

use super::StoreError;
use crate::delivery::http::AttemptResult;

/// How much one check may read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// Delivery ids kept as evidence per finding.
    pub sample: u32,
    /// Counts stop here (the finding says "at least").
    pub count_cap: u32,
    /// Subjects (deliveries, edges, endpoints, sessions, targets, counter groups) one check
    /// reports at most.
    pub subjects: u32,
}

impl Default for Bounds {
    fn default() -> Self {
        Self {
            sample: 20,
            count_cap: 10_000,
            subjects: 20,
        }
    }
}

/// An in-flight delivery whose lease ran out.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct StuckRow {
    pub id: String,
    pub target: String,
    pub edge: Option<String>,
    pub lease_owner: Option<String>,
    pub lease_until: i64,
    /// The attempt in flight (what a requeue names).
    pub attempts_made: i64,
}

/// Open deliveries gathered under one subject (an edge, an endpoint, a replay session).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backlog {
    pub subject: String,
    /// At most [`Bounds::count_cap`].
    pub count: u64,
    /// The oldest one's time: created (edges, endpoints) or due (replay sessions).
    pub oldest_at: i64,
    /// Oldest first, at most [`Bounds::sample`].
    pub sample: Vec<String>,
    /// Edges only: when the edge last called lease (`None`: never, as far as kept).
    pub last_seen_at: Option<i64>,
}

/// A target's current run of failed attempts (the delivery-health row) and the dead
/// deliveries of the run.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct FailingRow {
    pub name: String,
    pub consecutive_failures: i64,
    pub failing_since: Option<i64>,
    pub last_failure_at: Option<i64>,
    pub last_error_class: Option<String>,
    pub last_error: Option<String>,
    /// Dead deliveries of the target since `failing_since` (at most the count cap).
    #[sqlx(default)]
    pub dead_in_run: i64,
    /// The replay sessions whose re-deliveries to the target are still open (pending or in
    /// flight), the most first: their originals left the DLQ, so they are not in
    /// `dead_in_run`, yet they go to the same failing target.
    #[sqlx(skip)]
    pub replaying: Vec<ReplayHold>,
}

/// Open re-deliveries of one replay session to one target.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ReplayHold {
    pub session_id: String,
    /// At most the count cap, over every session of the target.
    pub open_count: i64,
}

/// One DLQ counter group whose maintained figure is not the number of its rows.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct DriftRow {
    pub target: String,
    pub error_class: String,
    pub hour: i64,
    /// What `dlq_counts` holds.
    pub counted: i64,
    /// Dead deliveries of the group.
    pub rows: i64,
}

/// A target whose signing-secret overlap is open: older secrets still sign beside the new
/// one until `ends_at` (the latest expiry still ahead, as `status.rotation.ends_at` shows).
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct OverlapRow {
    pub target: String,
    pub ends_at: i64,
    /// Secrets with an expiry still ahead (the older ones of the rotation).
    pub expiring: i64,
}

/// A target's active client certificate and when it expires.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ExpiringCertRow {
    pub target: String,
    pub id: String,
    pub subject: String,
    pub not_after: i64,
}

#[async_trait]
pub trait DiagnosticsStore {
    /// The tenant's in-flight deliveries whose lease expired at or before `expired_before`,
    /// oldest lease first.
    async fn stuck_deliveries(
        &self,
        tenant: &str,
        expired_before: i64,
        limit: u32,
    ) -> Result<Vec<StuckRow>, StoreError>;

    /// Pending `async_relay` deliveries per edge, with when each edge last leased.
    async fn waiting_relays(
        &self,
        tenant: &str,
        bounds: Bounds,
    ) -> Result<Vec<Backlog>, StoreError>;

    /// Open (pending or in flight) deliveries of each disabled endpoint, except one a
    /// retirement disabled: its drain is the plan, and enabling it would fight the retirement.
    async fn disabled_backlogs(
        &self,
        tenant: &str,
        bounds: Bounds,
    ) -> Result<Vec<Backlog>, StoreError>;

    /// Per replay session not cancelled: its re-deliveries pending and due at or before
    /// `due_before` (oldest due first). Sessions with none are absent.
    async fn overdue_replays(
        &self,
        tenant: &str,
        due_before: i64,
        bounds: Bounds,
    ) -> Result<Vec<Backlog>, StoreError>;

    /// Existing targets whose run of consecutive failed attempts is at least `min_run`, the
    /// longest first, with the dead deliveries of the run and the replay sessions still
    /// re-delivering to them (at most 5 sessions each).
    async fn failing_targets(
        &self,
        tenant: &str,
        min_run: i64,
        bounds: Bounds,
    ) -> Result<Vec<FailingRow>, StoreError>;

    /// DLQ counter groups whose figure differs from their rows. The targets whose totals
    /// differ are found first, then their groups compared; each comparison is one statement
    /// (one snapshot: a delivery dying meanwhile is in both sides or in neither), and the
    /// counters change only in the transaction that changes a delivery's state, so every
    /// committed snapshot agrees unless something bypassed the trigger. Groups that drift in
    /// opposite directions within one target are not seen.
    async fn dlq_drift(&self, tenant: &str, limit: u32) -> Result<Vec<DriftRow>, StoreError>;

    /// Existing targets with a signing secret whose expiry is still ahead at `now`, the
    /// soonest end first. Reads the tenant's secrets by their key (at most 10 per target).
    async fn open_overlaps(
        &self,
        tenant: &str,
        now: i64,
        limit: u32,
    ) -> Result<Vec<OverlapRow>, StoreError>;

    /// Existing targets whose active client certificate's `not_after` is before `before`
    /// (expired ones included), the soonest first.
    async fn expiring_certificates(
        &self,
        tenant: &str,
        before: i64,
        limit: u32,
    ) -> Result<Vec<ExpiringCertRow>, StoreError>;

    /// Notes that edge `edge` of the tenant called lease at `now` (written at most once a
    /// second per edge).
    async fn edge_seen(&self, tenant: &str, edge: &str, now: i64) -> Result<(), StoreError>;
}

/// What a requeue did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requeue {
    /// The stuck attempt was recorded as failed and the delivery is `state` now: pending and
    /// due at once, or cancelled (a re-delivery of a cancelled replay session; its original
    /// went back to the DLQ).
    Requeued { hop: Hop, state: DeliveryState },
    /// The delivery exists but is not stuck on that attempt: not in flight, on another
    /// attempt, or its lease has not expired.
    NotStuck,
    /// No such delivery for the tenant.
    Absent,
}

/// The fixes that run in the idempotency pipeline's unit of work.
#[async_trait]
pub trait RecoveryTx {
    /// Takes back a stuck delivery: one guarded update moves it from `in_flight` on attempt
    /// `attempt` with its lease expired at or before `now` to pending due at `now`, and
    /// records that attempt's `result` (finished by the reaper), so it is counted once
    /// whoever else reaps or reports it.
    async fn requeue_stuck(
        &mut self,
        tenant: &str,
        id: &str,
        attempt: u32,
        result: &AttemptResult,
        now: i64,
    ) -> Result<Requeue, StoreError>;

    /// Negative control: [`Self::requeue_stuck`] without the lease-expiry guard, as a
    /// requeue that trusted a stale finding would.
    #[cfg(feature = "fault-injection")]
    async fn requeue_unguarded(
        &mut self,
        tenant: &str,
        id: &str,
        attempt: u32,
        result: &AttemptResult,
        now: i64,
    ) -> Result<Requeue, StoreError>;

    /// Recomputes the tenant's DLQ counters from its dead deliveries, replacing them, with
    /// deliveries entering or leaving the DLQ meanwhile counted exactly once.
    async fn recount_dlq(&mut self, tenant: &str) -> Result<DlqRecount, StoreError>;
}
