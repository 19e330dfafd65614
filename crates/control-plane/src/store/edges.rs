//! The edge protocol's own reads (its leases are [`super::DeliveryStore::claim_due`] with
//! [`super::DueScope::Relay`], its reports [`super::DeliveryStore::finish_attempt`]).

use async_trait::async_trait;
use switchyard_protocol::{AttemptOutcome, Hop};

use super::{FinishedBy, StoreError};

/// An attempt an edge plane reports on, as the store has it.
#[derive(Debug, Clone)]
pub struct RelayedAttemptRow {
    pub delivery_id: String,
    pub hop: Hop,
    /// The attempt's number within its hop.
    pub hop_number: u32,
    pub max_attempts: u32,
    pub outcome: AttemptOutcome,
    /// Who recorded the outcome, once it is recorded.
    pub finished_by: Option<FinishedBy>,
}

#[async_trait]
pub trait EdgeStore {
    /// The attempt `attempt_id` of the tenant, if `performer` (`edge:<name>`) performs it.
    async fn relayed_attempt(
        &self,
        tenant: &str,
        attempt_id: &str,
        performer: &str,
    ) -> Result<Option<RelayedAttemptRow>, StoreError>;
}
