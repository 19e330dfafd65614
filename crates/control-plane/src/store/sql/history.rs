//! SQL of the history import (see `store/history.rs`). Two imports at once are serialised
//! ([`dialect::SERIALISE_HISTORY_IMPORT`]): the second waits for the first to commit, then
//! sees its events and imports nothing.

use async_trait::async_trait;

use super::{Backend, Conn, dialect};
use crate::store::StoreError;
use crate::store::history::{HISTORY_WORKER, HistoryStore, PastEvent, attempts_in_finish_order};

#[async_trait]
impl HistoryStore for Backend {
    async fn import_history(&self, tenant: &str, events: &[PastEvent]) -> Result<u64, StoreError> {
        let mut tx = self.write().await?;
        super::run(&mut tx, dialect::SERIALISE_HISTORY_IMPORT, &[tenant]).await?;
        let any: Option<i64> =
            sqlx::query_scalar("SELECT CAST(1 AS BIGINT) FROM events WHERE tenant = $1 LIMIT 1")
                .bind(tenant)
                .fetch_optional(&mut *tx)
                .await?;
        if any.is_some() {
            return Ok(0);
        }
        for e in events {
            sqlx::query(
                "INSERT INTO events (tenant, id, endpoint, event_type, event_key, payload, created_at) \
                 VALUES ($1, $2, $3, $4, NULL, $5, $6)",
            )
            .bind(tenant)
            .bind(&e.id)
            .bind(&e.endpoint)
            .bind(&e.event_type)
            .bind(e.payload.to_string())
            .bind(e.created_at)
            .execute(&mut *tx)
            .await?;
            insert_deliveries(&mut tx, tenant, e).await?;
        }
        for a in attempts_in_finish_order(events) {
            sqlx::query(
                "UPDATE attempts SET outcome = $1, duration_ms = $2, status_code = $3, error_class = $4, error = $5, \
                 finished_by = 'sender' WHERE id = $6 AND outcome = 'in_flight'",
            )
            .bind(if a.succeeded { "succeeded" } else { "failed" })
            .bind(a.duration_ms)
            .bind(a.status_code)
            .bind(a.error_class)
            .bind(&a.error)
            .bind(&a.id)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(events.len() as u64)
    }
}

/// An imported event's deliveries, each with its attempts (recorded as in flight; they
/// finish in order afterwards).
async fn insert_deliveries(conn: &mut Conn, tenant: &str, e: &PastEvent) -> Result<(), StoreError> {
    for d in &e.deliveries {
        let last = d.attempts.last();
        let dead = !d.succeeded();
        sqlx::query(
            "INSERT INTO deliveries (id, tenant, event_id, event_type, endpoint, flow, target, mode, state, \
             attempts_made, webhook_hop_attempts, max_attempts, created_at, updated_at, dead_at, \
             exhausted_hop, error_class, last_status) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, 'async_inline', $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)",
        )
        .bind(&d.id)
        .bind(tenant)
        .bind(&e.id)
        .bind(&e.event_type)
        .bind(&e.endpoint)
        .bind(&d.flow)
        .bind(&d.target)
        .bind(if dead { "dead" } else { "succeeded" })
        .bind(d.attempts.len() as i64)
        .bind(d.attempts.len() as i64)
        .bind(d.max_attempts)
        .bind(e.created_at)
        .bind(d.finished_at())
        .bind(dead.then(|| d.finished_at()))
        .bind(dead.then_some("control_plane_webhook"))
        .bind(last.and_then(|a| a.error_class))
        .bind(last.and_then(|a| a.status_code))
        .execute(&mut *conn)
        .await?;
        for a in &d.attempts {
            sqlx::query(
                "INSERT INTO attempts (id, delivery_id, number, hop, hop_number, started_at, outcome, performed_by) \
                 VALUES ($1, $2, $3, 'control_plane_webhook', $4, $5, 'in_flight', $6)",
            )
            .bind(&a.id)
            .bind(&d.id)
            .bind(a.number)
            .bind(a.number)
            .bind(a.started_at)
            .bind(HISTORY_WORKER)
            .execute(&mut *conn)
            .await?;
        }
    }
    Ok(())
}
