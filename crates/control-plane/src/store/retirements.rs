//! Retirement sessions: one per id, walked one guarded transition at a time.
//!
//! The reads ([`RetirementStore`]) serve the API and the advancer's look at what to do next;
//! the writes ([`RetirementTx`]) run inside a unit of work ([`super::Store::begin`]) that the
//! caller (`crate::retirement::advance`, or the idempotency pipeline for a cancel) commits
//! together with the transition's effect on the resource (`ResourceTx`).

use async_trait::async_trait;
use switchyard_protocol::{
    Blocker, DlqDisposition, ResourceKind, RetirementImpact, RetirementRequest, RetirementState,
};

use super::{ResourceRow, StoreError};

/// A retirement as stored. Times are unix milliseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct RetirementRow {
    pub id: String,
    pub kind: ResourceKind,
    pub name: String,
    pub state: RetirementState,
    pub grace_seconds: u64,
    pub cascade_flows: bool,
    pub dlq: DlqDisposition,
    pub blockers: Vec<Blocker>,
    pub impact: RetirementImpact,
    pub cascaded_flows: Vec<String>,
    /// An endpoint's `enabled` before the drain disabled it: what a cancel restores.
    pub enabled_before: Option<bool>,
    pub drain_eta: Option<i64>,
    pub delete_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
    /// Every state entered, oldest first.
    pub history: Vec<(RetirementState, i64)>,
    /// SHA-256 of the canonical request body it was created with.
    pub fingerprint: Vec<u8>,
}

/// A retirement to create, in the state it starts in.
#[derive(Debug, Clone, Copy)]
pub struct NewRetirement<'a> {
    pub tenant: &'a str,
    pub id: &'a str,
    pub fingerprint: &'a [u8],
    pub request: &'a RetirementRequest,
    pub state: RetirementState,
    pub blockers: &'a [Blocker],
    pub impact: &'a RetirementImpact,
    pub now: i64,
}

/// What inserting a retirement found.
#[derive(Debug, Clone, PartialEq)]
pub enum Inserted {
    /// The guarded insert won.
    Created,
    /// The id is taken (by this request's earlier copy, or another request).
    IdTaken,
    /// Another retirement of the same resource is still open.
    ResourceRetiring,
}

/// Open deliveries of the resource that share an attempt count, budget, and the latest
/// instant one of them is due again (a pending one's next attempt, an in-flight one's lease).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PendingGroup {
    pub attempts_made: u32,
    pub max_attempts: u32,
    pub latest_due: i64,
    pub count: u64,
}

/// What the retirement's decisions look at, counted in one read.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RetirementFacts {
    /// Whether the resource still exists.
    pub exists: bool,
    /// Flows that reference it (an endpoint's or a target's), by name.
    pub flows: Vec<String>,
    pub pending: Vec<PendingGroup>,
    pub dlq_depth: u64,
    /// Replay sessions with re-deliveries through it still open.
    pub open_replays: Vec<String>,
}

impl RetirementFacts {
    pub fn pending_count(&self) -> u64 {
        self.pending.iter().map(|g| g.count).sum()
    }
}

/// One guarded transition (or, when `to == from`, a refresh of what is shown, without a
/// history entry): applied only while the retirement is still in `from`.
#[derive(Debug, Clone)]
pub struct RetirementChange<'a> {
    pub tenant: &'a str,
    pub id: &'a str,
    pub from: RetirementState,
    pub to: RetirementState,
    pub blockers: &'a [Blocker],
    pub impact: &'a RetirementImpact,
    pub cascaded_flows: &'a [String],
    pub enabled_before: Option<bool>,
    pub drain_eta: Option<i64>,
    pub delete_at: Option<i64>,
    /// The guard also requires that no delivery of the resource is pending or in flight
    /// (checked by the same statement).
    pub require_drained: bool,
    pub now: i64,
    /// Negative control for tests only: drop the `state = from` guard.
    #[cfg(feature = "fault-injection")]
    pub unguarded: bool,
}

/// A deleted resource's tombstone.
#[derive(Debug, Clone, PartialEq)]
pub struct Tombstone {
    pub kind: ResourceKind,
    pub name: String,
    pub version: i64,
    pub deleted_at: i64,
    pub retirement_id: String,
}

#[async_trait]
pub trait RetirementStore {
    async fn retirement(&self, tenant: &str, id: &str)
    -> Result<Option<RetirementRow>, StoreError>;

    /// The tenant's retirements newest first (in `state` when given), at most `limit`.
    async fn list_retirements(
        &self,
        tenant: &str,
        state: Option<RetirementState>,
        limit: u32,
    ) -> Result<Vec<RetirementRow>, StoreError>;

    /// Retirements not yet deleted or cancelled, of every tenant, least recently changed
    /// first: (tenant, id).
    async fn open_retirements(&self, limit: u32) -> Result<Vec<(String, String)>, StoreError>;

    async fn retirement_facts(
        &self,
        tenant: &str,
        kind: ResourceKind,
        name: &str,
    ) -> Result<RetirementFacts, StoreError>;

    /// The tombstones of a tenant's deleted resources of `kind` named `name`, oldest first.
    async fn tombstones(
        &self,
        tenant: &str,
        kind: ResourceKind,
        name: &str,
    ) -> Result<Vec<Tombstone>, StoreError>;
}

#[async_trait]
pub trait RetirementTx {
    /// `INSERT … ON CONFLICT DO NOTHING` of the retirement (with its first history entry):
    /// the id is claimed, and the one-open-retirement-per-resource index holds, in one
    /// statement.
    async fn insert_retirement(&mut self, new: &NewRetirement<'_>) -> Result<Inserted, StoreError>;

    /// The retirement, read inside the unit of work.
    async fn retirement_in_tx(
        &mut self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<RetirementRow>, StoreError>;

    /// Applies `change` with one guarded `UPDATE … WHERE state = from … RETURNING`, and
    /// records the state entered when it changed. `false`: the guard failed (another
    /// advancer or a cancel moved it first) and nothing was written.
    async fn change_retirement(
        &mut self,
        change: &RetirementChange<'_>,
    ) -> Result<bool, StoreError>;

    /// Whether any delivery of the resource is pending or in flight.
    async fn retirement_pending(
        &mut self,
        tenant: &str,
        kind: ResourceKind,
        name: &str,
    ) -> Result<bool, StoreError>;

    /// Removes the resource's dead deliveries (and their attempts); returns how many.
    async fn purge_dead(
        &mut self,
        tenant: &str,
        kind: ResourceKind,
        name: &str,
    ) -> Result<u64, StoreError>;

    /// Keeps `row` as it was when `retirement_id` deleted it.
    async fn insert_tombstone(
        &mut self,
        tenant: &str,
        row: &ResourceRow,
        retirement_id: &str,
        now: i64,
    ) -> Result<(), StoreError>;
}

/// The column of `deliveries` that names a resource of `kind`.
pub(crate) fn delivery_column(kind: ResourceKind) -> &'static str {
    match kind {
        ResourceKind::Endpoint => "endpoint",
        ResourceKind::Target => "target",
        ResourceKind::Flow => "flow",
    }
}
