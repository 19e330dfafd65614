//! SQL of the edge protocol's attempt lookup.

use async_trait::async_trait;

use super::Backend;
use crate::store::rows::RelayedRow;
use crate::store::{EdgeStore, RelayedAttemptRow, StoreError};

#[async_trait]
impl EdgeStore for Backend {
    async fn relayed_attempt(
        &self,
        tenant: &str,
        attempt_id: &str,
        performer: &str,
    ) -> Result<Option<RelayedAttemptRow>, StoreError> {
        let row: Option<RelayedRow> = sqlx::query_as(
            "SELECT a.delivery_id, a.hop, a.hop_number, d.max_attempts, a.outcome, a.finished_by \
             FROM attempts a JOIN deliveries d ON d.id = a.delivery_id \
             WHERE a.id = $1 AND d.tenant = $2 AND a.performed_by = $3",
        )
        .bind(attempt_id)
        .bind(tenant)
        .bind(performer)
        .fetch_optional(self.reads())
        .await?;
        row.map(RelayedRow::into_attempt).transpose()
    }
}
