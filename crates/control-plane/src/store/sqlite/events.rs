//! SQL of events and their dedup keys.

use async_trait::async_trait;
use sqlx::SqliteConnection;
use switchyard_protocol::Event;

use super::SqliteStore;
use super::deliveries::{NewDeliveryRow, claim_one, insert, of_event};
use crate::store::rows::EventRow;
use crate::store::{Acceptance, Accepted, EventStore, StoreError, new_id};

/// Claims `(tenant, endpoint, key)` for `event_id` in one guarded upsert: `None` when
/// claimed (new, or the previous holder was created before `cutoff`), else the holder.
async fn claim_key(
    conn: &mut SqliteConnection,
    tenant: &str,
    endpoint: &str,
    key: &str,
    event_id: &str,
    now: i64,
    cutoff: i64,
) -> Result<Option<String>, StoreError> {
    let claimed: Option<String> = sqlx::query_scalar(
        "INSERT INTO event_keys (tenant, endpoint, event_key, event_id, created_at) VALUES (?, ?, ?, ?, ?) \
         ON CONFLICT (tenant, endpoint, event_key) DO UPDATE SET event_id = excluded.event_id, \
         created_at = excluded.created_at WHERE event_keys.created_at < ? RETURNING event_id",
    )
    .bind(tenant)
    .bind(endpoint)
    .bind(key)
    .bind(event_id)
    .bind(now)
    .bind(cutoff)
    .fetch_optional(&mut *conn)
    .await?;
    if claimed.is_some() {
        return Ok(None);
    }
    Ok(Some(
        sqlx::query_scalar(
            "SELECT event_id FROM event_keys WHERE tenant = ? AND endpoint = ? AND event_key = ?",
        )
        .bind(tenant)
        .bind(endpoint)
        .bind(key)
        .fetch_one(conn)
        .await?,
    ))
}

async fn load(conn: &mut SqliteConnection, row: EventRow) -> Result<Event, StoreError> {
    let deliveries = of_event(conn, &row.id).await?;
    row.into_event(deliveries)
}

const SELECT_EVENT: &str =
    "SELECT id, endpoint, event_type, event_key, payload, created_at FROM events";

#[async_trait]
impl EventStore for SqliteStore {
    async fn accept_event(&self, a: &Acceptance<'_>) -> Result<Accepted, StoreError> {
        let e = a.event;
        let mut tx = self.write().await?;
        if let Some(key) = e.event_key
            && let Some(existing) = claim_key(
                &mut tx,
                e.tenant,
                e.endpoint,
                key,
                e.id,
                a.now,
                a.dedup_cutoff,
            )
            .await?
        {
            return Ok(Accepted::Duplicate(existing));
        }
        let Some(routing) = routing(&mut tx, e.tenant, e.endpoint).await? else {
            return Ok(Accepted::EndpointClosed);
        };
        sqlx::query(
            "INSERT INTO events (tenant, id, endpoint, event_type, event_key, payload, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(e.tenant)
        .bind(e.id)
        .bind(e.endpoint)
        .bind(e.event_type)
        .bind(e.event_key)
        .bind(e.payload.to_string())
        .bind(a.now)
        .execute(&mut *tx)
        .await?;
        let mut sync = Vec::new();
        for d in a.deliveries.iter().filter(|d| routing.contains(&d.flow)) {
            let id = new_id("dlv");
            let row = NewDeliveryRow {
                id: &id,
                tenant: e.tenant,
                event_id: e.id,
                event_type: e.event_type,
                endpoint: e.endpoint,
                flow: &d.flow,
                target: &d.target,
                mode: d.mode,
                edge: d.edge.as_deref(),
                max_attempts: d.max_attempts,
                next_attempt_at: d.next_attempt_at,
                replay_session: None,
                replay_of: None,
            };
            insert(&mut tx, &row, a.now).await?;
            if d.begin_now {
                sync.extend(
                    claim_one(
                        &mut tx,
                        &self.sealer,
                        &id,
                        a.now,
                        a.owner,
                        a.lease_margin_ms,
                    )
                    .await?,
                );
            }
        }
        tx.commit().await?;
        Ok(Accepted::New { sync })
    }

    async fn event_key_holder(
        &self,
        tenant: &str,
        endpoint: &str,
        key: &str,
        cutoff: i64,
    ) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT event_id FROM event_keys WHERE tenant = ? AND endpoint = ? AND event_key = ? AND created_at >= ?",
        )
        .bind(tenant)
        .bind(endpoint)
        .bind(key)
        .bind(cutoff)
        .fetch_optional(&self.readers)
        .await?)
    }

    async fn event(&self, tenant: &str, id: &str) -> Result<Option<Event>, StoreError> {
        let mut conn = self.read().await?;
        let row: Option<EventRow> =
            sqlx::query_as(&format!("{SELECT_EVENT} WHERE tenant = ? AND id = ?"))
                .bind(tenant)
                .bind(id)
                .fetch_optional(&mut *conn)
                .await?;
        match row {
            Some(row) => Ok(Some(load(&mut conn, row).await?)),
            None => Ok(None),
        }
    }

    async fn events_by_key(
        &self,
        tenant: &str,
        key: &str,
        endpoint: Option<&str>,
        limit: u32,
    ) -> Result<Vec<Event>, StoreError> {
        let mut conn = self.read().await?;
        let rows: Vec<EventRow> = sqlx::query_as(&format!(
            "{SELECT_EVENT} WHERE tenant = ? AND event_key = ? AND (? IS NULL OR endpoint = ?) \
             ORDER BY created_at DESC, id DESC LIMIT ?"
        ))
        .bind(tenant)
        .bind(key)
        .bind(endpoint)
        .bind(endpoint)
        .bind(limit)
        .fetch_all(&mut *conn)
        .await?;
        let mut events = Vec::with_capacity(rows.len());
        for row in rows {
            events.push(load(&mut conn, row).await?);
        }
        Ok(events)
    }

    async fn sweep_event_keys(&self, cutoff: i64) -> Result<u64, StoreError> {
        let done = sqlx::query("DELETE FROM event_keys WHERE created_at < ?")
            .bind(cutoff)
            .execute(&self.writer)
            .await?;
        Ok(done.rows_affected())
    }
}

/// The flows of `endpoint` still routing, read under the write lock; `None` when the
/// endpoint is disabled or gone (a disable or a retirement committed since the caller
/// planned the event).
async fn routing(
    conn: &mut SqliteConnection,
    tenant: &str,
    endpoint: &str,
) -> Result<Option<std::collections::HashSet<String>>, StoreError> {
    let status: Option<String> = sqlx::query_scalar(
        "SELECT status FROM resources WHERE tenant = ? AND kind = 'endpoint' AND name = ?",
    )
    .bind(tenant)
    .bind(endpoint)
    .fetch_optional(&mut *conn)
    .await?;
    match status {
        Some(status) if crate::store::rows::enabled(&status)? => {}
        _ => return Ok(None),
    }
    let flows: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM resources WHERE tenant = ? AND kind = 'flow' AND ref_endpoint = ? \
         AND COALESCE(json_extract(status, '$.enabled'), 1) <> 0",
    )
    .bind(tenant)
    .bind(endpoint)
    .fetch_all(conn)
    .await?;
    Ok(Some(flows.into_iter().collect()))
}
