//! SQL of the edge protocol's attempt lookup.

use async_trait::async_trait;
use sqlx::FromRow;

use super::SqliteStore;
use super::rows::{count, hop_from, outcome_from};
use crate::store::{EdgeStore, FinishedBy, RelayedAttemptRow, StoreError, corrupt};

#[derive(FromRow)]
struct Row {
    delivery_id: String,
    hop: String,
    hop_number: i64,
    max_attempts: i64,
    outcome: String,
    finished_by: Option<String>,
}

#[async_trait]
impl EdgeStore for SqliteStore {
    async fn relayed_attempt(
        &self,
        tenant: &str,
        attempt_id: &str,
        performer: &str,
    ) -> Result<Option<RelayedAttemptRow>, StoreError> {
        let row: Option<Row> = sqlx::query_as(
            "SELECT a.delivery_id, a.hop, a.hop_number, d.max_attempts, a.outcome, a.finished_by \
             FROM attempts a JOIN deliveries d ON d.id = a.delivery_id \
             WHERE a.id = ? AND d.tenant = ? AND a.performed_by = ?",
        )
        .bind(attempt_id)
        .bind(tenant)
        .bind(performer)
        .fetch_optional(&self.readers)
        .await?;
        row.map(|r| {
            Ok(RelayedAttemptRow {
                delivery_id: r.delivery_id,
                hop: hop_from(&r.hop)?,
                hop_number: count(r.hop_number)?,
                max_attempts: count(r.max_attempts)?,
                outcome: outcome_from(&r.outcome)?,
                finished_by: r
                    .finished_by
                    .as_deref()
                    .map(|f| {
                        FinishedBy::parse(f).ok_or_else(|| corrupt(format!("finished_by {f:?}")))
                    })
                    .transpose()?,
            })
        })
        .transpose()
    }
}
