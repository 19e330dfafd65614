//! SQL of events and their dedup keys.

use async_trait::async_trait;
use switchyard_protocol::Event;

use super::deliveries::{NewDeliveryRow, claim_one, insert, of_event};
use super::{Backend, Conn, dialect};
use crate::store::rows::EventRow;
use crate::store::{Acceptance, Accepted, EventStore, StoreError, new_id};

/// Claims `(tenant, endpoint, key)` for `event_id` in one guarded upsert: `None` when
/// claimed (new, or the previous holder was created before `cutoff`), else the holder. A
/// concurrent claim of the same key waits on the primary key for this one's commit.
async fn claim_key(
    conn: &mut Conn,
    a: &Acceptance<'_>,
    key: &str,
) -> Result<Option<String>, StoreError> {
    let e = a.event;
    let claimed: Option<String> = sqlx::query_scalar(
        "INSERT INTO event_keys (tenant, endpoint, event_key, event_id, created_at) VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (tenant, endpoint, event_key) DO UPDATE SET event_id = excluded.event_id, \
         created_at = excluded.created_at WHERE event_keys.created_at < $6 RETURNING event_id",
    )
    .bind(e.tenant)
    .bind(e.endpoint)
    .bind(key)
    .bind(e.id)
    .bind(a.now)
    .bind(a.dedup_cutoff)
    .fetch_optional(&mut *conn)
    .await?;
    if claimed.is_some() {
        return Ok(None);
    }
    Ok(Some(
        sqlx::query_scalar(
            "SELECT event_id FROM event_keys WHERE tenant = $1 AND endpoint = $2 AND event_key = $3",
        )
        .bind(e.tenant)
        .bind(e.endpoint)
        .bind(key)
        .fetch_one(conn)
        .await?,
    ))
}

async fn load(conn: &mut Conn, row: EventRow) -> Result<Event, StoreError> {
    let deliveries = of_event(conn, &row.id).await?;
    row.into_event(deliveries)
}

const SELECT_EVENT: &str =
    "SELECT id, endpoint, event_type, event_key, payload, created_at FROM events";

#[async_trait]
impl EventStore for Backend {
    async fn accept_event(&self, a: &Acceptance<'_>) -> Result<Accepted, StoreError> {
        let e = a.event;
        let mut tx = self.write().await?;
        if let Some(key) = e.event_key
            && let Some(existing) = claim_key(&mut tx, a, key).await?
        {
            return Ok(Accepted::Duplicate(existing));
        }
        let Some(routing) = routing(&mut tx, e.tenant, e.endpoint).await? else {
            return Ok(Accepted::EndpointClosed);
        };
        sqlx::query(
            "INSERT INTO events (tenant, id, endpoint, event_type, event_key, payload, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
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
        if !a.deliveries.is_empty() {
            super::notify_work(&mut tx).await?;
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
            "SELECT event_id FROM event_keys WHERE tenant = $1 AND endpoint = $2 AND event_key = $3 \
             AND created_at >= $4",
        )
        .bind(tenant)
        .bind(endpoint)
        .bind(key)
        .bind(cutoff)
        .fetch_optional(self.reads())
        .await?)
    }

    async fn event(&self, tenant: &str, id: &str) -> Result<Option<Event>, StoreError> {
        let mut conn = self.read().await?;
        let row: Option<EventRow> =
            sqlx::query_as(&format!("{SELECT_EVENT} WHERE tenant = $1 AND id = $2"))
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
            "{SELECT_EVENT} WHERE tenant = $1 AND event_key = $2 AND (CAST($3 AS TEXT) IS NULL OR endpoint = $3) \
             ORDER BY created_at DESC, id DESC LIMIT $4"
        ))
        .bind(tenant)
        .bind(key)
        .bind(endpoint)
        .bind(i64::from(limit))
        .fetch_all(&mut *conn)
        .await?;
        let mut events = Vec::with_capacity(rows.len());
        for row in rows {
            events.push(load(&mut conn, row).await?);
        }
        Ok(events)
    }

    async fn sweep_event_keys(&self, cutoff: i64) -> Result<u64, StoreError> {
        let done = sqlx::query("DELETE FROM event_keys WHERE created_at < $1")
            .bind(cutoff)
            .execute(self.writes())
            .await?;
        Ok(done.rows_affected())
    }
}

/// The flows of `endpoint` still routing; `None` when the endpoint is disabled or gone.
/// [`dialect::FOR_SHARE`] holds the endpoint and flow rows until this commit (on SQLite the
/// write lock does): a retirement's disable (an `UPDATE` of those rows) waits for it, so its
/// drain then sees these deliveries; one that committed first is what this read sees.
async fn routing(
    conn: &mut Conn,
    tenant: &str,
    endpoint: &str,
) -> Result<Option<std::collections::HashSet<String>>, StoreError> {
    let status: Option<String> = sqlx::query_scalar(&format!(
        "SELECT status FROM resources WHERE tenant = $1 AND kind = 'endpoint' AND name = $2{}",
        dialect::FOR_SHARE
    ))
    .bind(tenant)
    .bind(endpoint)
    .fetch_optional(&mut *conn)
    .await?;
    match status {
        Some(status) if crate::store::rows::enabled(&status)? => {}
        _ => return Ok(None),
    }
    let flows: Vec<(String, String)> = sqlx::query_as(&format!(
        "SELECT name, status FROM resources WHERE tenant = $1 AND kind = 'flow' \
         AND ref_endpoint = $2{}",
        dialect::FOR_SHARE
    ))
    .bind(tenant)
    .bind(endpoint)
    .fetch_all(conn)
    .await?;
    let mut routing = std::collections::HashSet::new();
    for (name, status) in flows {
        if crate::store::rows::enabled(&status)? {
            routing.insert(name);
        }
    }
    Ok(Some(routing))
}
