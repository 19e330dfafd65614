//! SQL of replay sessions. Two copies of one session id meet on the primary key: the second
//! waits for the first's commit and finds its session; two sessions racing for one original
//! meet on its row: the second's guarded update finds it no longer dead.

use std::collections::HashSet;

use async_trait::async_trait;
use sqlx::QueryBuilder;
use switchyard_protocol::{FlowMode, ReplayRequest, ReplaySelection};

use super::deliveries::{NewDeliveryRow, insert};
use super::dlq::push_filter;
use super::{Backend, BackendTx, Conn, Db};
use crate::store::rows::{ItemRow, OriginalRow, SessionRow, mode_from_str};
use crate::store::{
    NewReplay, ReplayRow, ReplayStart, ReplayStore, ReplayTx, StoreError, corrupt, new_id,
};

/// The dead deliveries a selection names, oldest death first (ids: as given, once each).
async fn selected(
    conn: &mut Conn,
    tenant: &str,
    selection: &ReplaySelection,
    filter_limit: u32,
) -> Result<Vec<String>, StoreError> {
    match selection {
        ReplaySelection::DeliveryIds(ids) => {
            let mut seen = HashSet::new();
            Ok(ids.iter().filter(|id| seen.insert(*id)).cloned().collect())
        }
        ReplaySelection::Filter(filter) => {
            let mut q = QueryBuilder::<Db>::new("SELECT id FROM deliveries WHERE tenant = ");
            q.push_bind(tenant).push(" AND state = 'dead'");
            push_filter(&mut q, filter);
            q.push(" ORDER BY dead_at, id LIMIT ")
                .push_bind(i64::from(filter_limit));
            Ok(q.build_query_scalar().fetch_all(conn).await?)
        }
    }
}

const SELECT_SESSION: &str =
    "SELECT id, request, rate_per_s, created_at, cancelled_at FROM replay_sessions";

async fn load_items(conn: &mut Conn, tenant: &str, s: SessionRow) -> Result<ReplayRow, StoreError> {
    let items: Vec<ItemRow> = sqlx::query_as(
        "SELECT i.original_id, i.delivery_id, i.skip_reason, d.state FROM replay_items i \
         LEFT JOIN deliveries d ON d.id = i.delivery_id WHERE i.tenant = $1 AND i.session_id = $2 ORDER BY i.position",
    )
    .bind(tenant)
    .bind(&s.id)
    .fetch_all(&mut *conn)
    .await?;
    s.into_session(items)
}

async fn load(conn: &mut Conn, tenant: &str, id: &str) -> Result<Option<ReplayRow>, StoreError> {
    let row: Option<SessionRow> =
        sqlx::query_as(&format!("{SELECT_SESSION} WHERE tenant = $1 AND id = $2"))
            .bind(tenant)
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?;
    match row {
        Some(row) => Ok(Some(load_items(conn, tenant, row).await?)),
        None => Ok(None),
    }
}

/// Takes `original` out of the DLQ for `replacement` (one guarded update): its fields, or
/// `None` when it is not dead (not in the DLQ, already replayed, or no such delivery).
async fn take_from_dlq(
    conn: &mut Conn,
    tenant: &str,
    original: &str,
    replacement: &str,
    now: i64,
) -> Result<Option<OriginalRow>, StoreError> {
    Ok(sqlx::query_as(
        "UPDATE deliveries SET state = 'replayed', replayed_by = $1, updated_at = $2 \
         WHERE tenant = $3 AND id = $4 AND state = 'dead' \
         RETURNING event_id, event_type, endpoint, flow, target, mode, edge",
    )
    .bind(replacement)
    .bind(now)
    .bind(tenant)
    .bind(original)
    .fetch_optional(conn)
    .await?)
}

/// Why an original that could not be taken from the DLQ was skipped.
async fn skip_reason(conn: &mut Conn, tenant: &str, original: &str) -> Result<String, StoreError> {
    let state: Option<String> =
        sqlx::query_scalar("SELECT state FROM deliveries WHERE tenant = $1 AND id = $2")
            .bind(tenant)
            .bind(original)
            .fetch_optional(conn)
            .await?;
    Ok(match state {
        None => "no such delivery".to_owned(),
        Some(state) => format!("not in the DLQ (state {state})"),
    })
}

/// Creates one re-delivery per selected original; returns how many were replayed.
async fn replay_originals(
    conn: &mut Conn,
    new: &NewReplay<'_>,
    originals: &[String],
) -> Result<(), StoreError> {
    let mut replayed = 0u64;
    for (position, original) in originals.iter().enumerate() {
        let replacement = new_id("dlv");
        let taken = take_from_dlq(conn, new.tenant, original, &replacement, new.now).await?;
        let (delivery_id, reason) = match taken {
            None => (None, Some(skip_reason(conn, new.tenant, original).await?)),
            Some(o) => {
                let mode = match mode_from_str(&o.mode)? {
                    FlowMode::AsyncRelay => FlowMode::AsyncRelay,
                    // Nobody waits on a replay: sync deliveries replay through the worker.
                    _ => FlowMode::AsyncInline,
                };
                let row = NewDeliveryRow {
                    id: &replacement,
                    tenant: new.tenant,
                    event_id: &o.event_id,
                    event_type: &o.event_type,
                    endpoint: &o.endpoint,
                    flow: &o.flow,
                    target: &o.target,
                    mode,
                    edge: o.edge.as_deref(),
                    max_attempts: new.max_attempts,
                    next_attempt_at: new.due_at(replayed),
                    replay_session: Some(new.id),
                    replay_of: Some(original),
                };
                insert(conn, &row, new.now).await?;
                replayed += 1;
                (Some(replacement), None)
            }
        };
        sqlx::query(
            "INSERT INTO replay_items (tenant, session_id, original_id, delivery_id, skip_reason, position) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(new.tenant)
        .bind(new.id)
        .bind(original)
        .bind(delivery_id)
        .bind(reason)
        .bind(position as i64)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// Puts a replayed delivery back into the DLQ (its replay was withdrawn).
pub(in crate::store) async fn restore_original(
    conn: &mut Conn,
    original: &str,
    now: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE deliveries SET state = 'dead', replayed_by = NULL, updated_at = $1 WHERE id = $2 AND state = 'replayed'",
    )
    .bind(now)
    .bind(original)
    .execute(conn)
    .await?;
    Ok(())
}

/// The guarded creation of a session: `None` when the id is taken.
const CREATE_SESSION: &str = "INSERT INTO replay_sessions (tenant, id, fingerprint, request, rate_per_s, created_at) \
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (tenant, id) DO NOTHING RETURNING id";

/// The negative control's creation: over whatever session has the id.
#[cfg(feature = "fault-injection")]
const OVERWRITE_SESSION: &str = "INSERT INTO replay_sessions (tenant, id, fingerprint, request, rate_per_s, created_at) \
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (tenant, id) DO UPDATE SET fingerprint = excluded.fingerprint RETURNING id";

fn session_insert(new: &NewReplay<'_>) -> &'static str {
    #[cfg(feature = "fault-injection")]
    if new.overwrite {
        return OVERWRITE_SESSION;
    }
    let _ = new;
    CREATE_SESSION
}

#[async_trait]
impl ReplayStore for Backend {
    async fn start_replay(&self, new: &NewReplay<'_>) -> Result<ReplayStart, StoreError> {
        let mut tx = self.write().await?;
        let created: Option<String> = sqlx::query_scalar(session_insert(new))
            .bind(new.tenant)
            .bind(new.id)
            .bind(new.fingerprint)
            .bind(serde_json::to_string(new.request).map_err(corrupt)?)
            .bind(new.request.rate_per_s)
            .bind(new.now)
            .fetch_optional(&mut *tx)
            .await?;
        if created.is_none() {
            let fingerprint: Vec<u8> = sqlx::query_scalar(
                "SELECT fingerprint FROM replay_sessions WHERE tenant = $1 AND id = $2",
            )
            .bind(new.tenant)
            .bind(new.id)
            .fetch_one(&mut *tx)
            .await?;
            let session = load(&mut tx, new.tenant, new.id)
                .await?
                .ok_or_else(|| corrupt("a replay session vanished under the write lock"))?;
            return Ok(ReplayStart::Exists {
                fingerprint,
                session,
            });
        }
        let originals = selected(
            &mut tx,
            new.tenant,
            &new.request.selection,
            new.filter_limit,
        )
        .await?;
        replay_originals(&mut tx, new, &originals).await?;
        super::notify_work(&mut tx).await?;
        let session = load(&mut tx, new.tenant, new.id)
            .await?
            .ok_or_else(|| corrupt("a replay session vanished inside its own commit"))?;
        tx.commit().await?;
        Ok(ReplayStart::Created(session))
    }

    async fn replay(&self, tenant: &str, id: &str) -> Result<Option<ReplayRow>, StoreError> {
        load(&mut *self.read().await?, tenant, id).await
    }

    async fn list_replays(
        &self,
        tenant: &str,
        after: Option<(i64, String)>,
        limit: u32,
    ) -> Result<Vec<ReplayRow>, StoreError> {
        let mut conn = self.read().await?;
        let (at, after_id) = after.unwrap_or((i64::MAX, String::new()));
        let rows: Vec<SessionRow> = sqlx::query_as(&format!(
            "{SELECT_SESSION} WHERE tenant = $1 \
             AND (created_at < $2 OR (created_at = $3 AND ($4 = '' OR id < $5))) ORDER BY created_at DESC, id DESC LIMIT $6"
        ))
        .bind(tenant)
        .bind(at)
        .bind(at)
        .bind(&after_id)
        .bind(&after_id)
        .bind(i64::from(limit))
        .fetch_all(&mut *conn)
        .await?;
        let mut sessions = Vec::with_capacity(rows.len());
        for row in rows {
            sessions.push(load_items(&mut conn, tenant, row).await?);
        }
        Ok(sessions)
    }

    async fn count_replayable(
        &self,
        tenant: &str,
        request: &ReplayRequest,
        filter_limit: u32,
    ) -> Result<u64, StoreError> {
        let mut conn = self.read().await?;
        let ids = selected(&mut conn, tenant, &request.selection, filter_limit).await?;
        if matches!(request.selection, ReplaySelection::Filter(_)) {
            return Ok(ids.len() as u64);
        }
        let mut n = 0;
        for id in ids {
            let dead: Option<i64> = sqlx::query_scalar(
                "SELECT CAST(1 AS BIGINT) FROM deliveries WHERE tenant = $1 AND id = $2 AND state = 'dead'",
            )
            .bind(tenant)
            .bind(&id)
            .fetch_optional(&mut *conn)
            .await?;
            n += u64::from(dead.is_some());
        }
        Ok(n)
    }
}

#[async_trait]
impl ReplayTx for BackendTx {
    async fn cancel_replay(
        &mut self,
        tenant: &str,
        id: &str,
        now: i64,
    ) -> Result<Option<ReplayRow>, StoreError> {
        let cancelled: Option<Option<i64>> = sqlx::query_scalar(
            "UPDATE replay_sessions SET cancelled_at = COALESCE(cancelled_at, $1) WHERE tenant = $2 AND id = $3 \
             RETURNING cancelled_at",
        )
        .bind(now)
        .bind(tenant)
        .bind(id)
        .fetch_optional(&mut *self.tx)
        .await?;
        if cancelled.is_none() {
            return Ok(None);
        }
        let originals: Vec<Option<String>> = sqlx::query_scalar(
            "UPDATE deliveries SET state = 'cancelled', next_attempt_at = NULL, updated_at = $1 \
             WHERE tenant = $2 AND replay_session = $3 AND state = 'pending' RETURNING replay_of",
        )
        .bind(now)
        .bind(tenant)
        .bind(id)
        .fetch_all(&mut *self.tx)
        .await?;
        for original in originals.into_iter().flatten() {
            restore_original(&mut self.tx, &original, now).await?;
        }
        load(&mut self.tx, tenant, id).await
    }
}
