//! Events: dedup by event key, acceptance with their deliveries, reads.

use async_trait::async_trait;
use serde_json::Value;
use switchyard_protocol::{Event, FlowMode};

use super::{Claimed, StoreError};

/// An event to insert.
#[derive(Debug, Clone, Copy)]
pub struct NewEvent<'a> {
    pub tenant: &'a str,
    pub id: &'a str,
    pub endpoint: &'a str,
    pub event_type: &'a str,
    pub event_key: Option<&'a str>,
    pub payload: &'a Value,
}

/// One delivery of a new event, as the caller planned it.
#[derive(Debug, Clone)]
pub struct PlannedDelivery {
    pub flow: String,
    pub target: String,
    pub mode: FlowMode,
    pub edge: Option<String>,
    pub max_attempts: u32,
    pub next_attempt_at: i64,
    /// Claim its first attempt in the same commit (a `sync` flow's, sent by the request).
    pub begin_now: bool,
}

/// Everything one accepted event writes, in one commit.
#[derive(Debug, Clone)]
pub struct Acceptance<'a> {
    pub event: NewEvent<'a>,
    /// An event key held by an event created before this instant no longer dedups.
    pub dedup_cutoff: i64,
    pub deliveries: Vec<PlannedDelivery>,
    /// The lease owner of attempts claimed with `begin_now`.
    pub owner: &'a str,
    pub lease_margin_ms: i64,
    pub now: i64,
}

/// What accepting an event did.
#[derive(Debug)]
pub enum Accepted {
    /// The event and its deliveries are committed; these first attempts are claimed.
    New { sync: Vec<Claimed> },
    /// Another event holds the event key inside the window: nothing was written.
    Duplicate(String),
    /// The endpoint was disabled (or deleted) after the caller planned the event: nothing
    /// was written. Checked under the write lock (PostgreSQL: `FOR SHARE` on the endpoint
    /// and its flows), so a retirement's drain never misses a delivery committed after it.
    EndpointClosed,
}

#[async_trait]
pub trait EventStore {
    /// Claims the event key (if any) with one guarded upsert, then inserts the event and
    /// its deliveries and claims the `begin_now` ones, all in one commit. A planned delivery
    /// whose flow stopped routing meanwhile (a retirement disabled it) is left out. A concurrent copy
    /// with the same key waits for this commit and finds it: [`Accepted::Duplicate`].
    async fn accept_event(&self, acceptance: &Acceptance<'_>) -> Result<Accepted, StoreError>;

    /// The event holding `(tenant, endpoint, key)`, if it was created at or after `cutoff`.
    async fn event_key_holder(
        &self,
        tenant: &str,
        endpoint: &str,
        key: &str,
        cutoff: i64,
    ) -> Result<Option<String>, StoreError>;

    /// An event with its deliveries and their attempts.
    async fn event(&self, tenant: &str, id: &str) -> Result<Option<Event>, StoreError>;

    /// The tenant's events with `key` (on `endpoint` when given), newest first, at most
    /// `limit`, each with its deliveries and attempts.
    async fn events_by_key(
        &self,
        tenant: &str,
        key: &str,
        endpoint: Option<&str>,
        limit: u32,
    ) -> Result<Vec<Event>, StoreError>;

    /// Deletes event keys created before `cutoff` (they no longer dedup); returns how many.
    async fn sweep_event_keys(&self, cutoff: i64) -> Result<u64, StoreError>;
}
