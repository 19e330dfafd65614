//! The outbox: its rows and how they are read (here), queuing a write (`enqueue`: the
//! optimistic cache change and the row in ONE `BEGIN IMMEDIATE` transaction, the idempotency
//! key minted once), and a person's decisions (`decisions`: retry, retry as new, discard, the
//! three-way conflict view), and the newest write per resource that a list shows beside it
//! (`latest`).

mod decisions;
pub(crate) mod enqueue;
mod latest;

pub(crate) use enqueue::Replaces;

use serde_json::Value;
use sqlx::{QueryBuilder, Sqlite, Transaction};
use switchyard_protocol::ResourceKind;

use crate::Console;
use crate::error::{CoreError, Result};
use crate::types::*;

/// The columns of [`OpRow`], for `SELECT {OP_COLUMNS} FROM outbox` and `RETURNING`.
pub(crate) const OP_COLUMNS: &str = "id, profile, op, kind, name, body, base_version, if_match, idempotency_key, \
    state, attempts, last_error, next_attempt_at, created_at, updated_at, first_sent_at, result_version, replaced_by, \
    lease_epoch, origin";

/// An outbox row as stored. JSON columns stay text here: a body or an error that no longer
/// parses is shown as absent rather than failing the whole list.
#[derive(Debug, sqlx::FromRow)]
pub(crate) struct OpRow {
    id: i64,
    profile: String,
    op: OpKind,
    kind: ResourceKind,
    name: String,
    body: Option<String>,
    base_version: Option<i64>,
    if_match: Option<i64>,
    idempotency_key: String,
    state: OpState,
    attempts: i64,
    last_error: Option<String>,
    next_attempt_at: i64,
    created_at: i64,
    updated_at: i64,
    first_sent_at: Option<i64>,
    result_version: Option<i64>,
    replaced_by: Option<i64>,
    pub lease_epoch: i64,
    origin: Option<String>,
}

impl TryFrom<OpRow> for OutboxOp {
    type Error = CoreError;

    fn try_from(r: OpRow) -> Result<Self> {
        let origin = match r.origin {
            None => Origin::Console,
            Some(text) => serde_json::from_str(&text)
                .map_err(|_| CoreError::storage("outbox row has an unknown origin"))?,
        };
        Ok(OutboxOp {
            id: r.id,
            profile: r.profile,
            op: r.op,
            kind: r.kind,
            name: r.name,
            body: r
                .body
                .and_then(|b| serde_json::from_str(&b).ok())
                .unwrap_or(Value::Null),
            base_version: r.base_version,
            if_match: r.if_match,
            idempotency_key: r.idempotency_key,
            state: r.state,
            attempts: r.attempts as u32,
            last_error: r.last_error.and_then(|e| serde_json::from_str(&e).ok()),
            next_attempt_at: (r.state == OpState::Pending).then_some(r.next_attempt_at),
            created_at: r.created_at,
            updated_at: r.updated_at,
            first_sent_at: r.first_sent_at,
            result_version: r.result_version,
            replaced_by: r.replaced_by,
            origin,
        })
    }
}

/// Rows to ops (a row that cannot be read is an error, not a panic).
pub(crate) fn ops_from_rows(rows: Vec<OpRow>) -> Result<Vec<OutboxOp>> {
    rows.into_iter().map(OutboxOp::try_from).collect()
}

/// The live states, as stored.
pub(crate) const LIVE_STATES: [OpState; 3] =
    [OpState::Pending, OpState::Sending, OpState::NeedsAttention];

/// Live ops of one resource, in order.
pub(crate) async fn live_ops_of(
    tx: &mut Transaction<'_, Sqlite>,
    profile: &str,
    kind: ResourceKind,
    name: &str,
) -> Result<Vec<OutboxOp>> {
    let rows: Vec<OpRow> = sqlx::query_as(&format!(
        "SELECT {OP_COLUMNS} FROM outbox WHERE profile = ? AND kind = ? AND name = ? \
         AND state IN ('pending', 'sending', 'needs_attention') ORDER BY seq, id"
    ))
    .bind(profile)
    .bind(kind)
    .bind(name)
    .fetch_all(&mut **tx)
    .await?;
    ops_from_rows(rows)
}

impl Console {
    /// The op queued under `key`, if any.
    pub async fn op_by_key(&self, key: &str) -> Result<Option<OutboxOp>> {
        let row: Option<OpRow> = sqlx::query_as(&format!(
            "SELECT {OP_COLUMNS} FROM outbox WHERE idempotency_key = ?"
        ))
        .bind(key)
        .fetch_optional(&self.inner.pool)
        .await?;
        row.map(OutboxOp::try_from).transpose()
    }

    /// One outbox operation.
    pub async fn op(&self, id: i64) -> Result<OutboxOp> {
        let row: OpRow = sqlx::query_as(&format!("SELECT {OP_COLUMNS} FROM outbox WHERE id = ?"))
            .bind(id)
            .fetch_optional(&self.inner.pool)
            .await?
            .ok_or_else(|| CoreError::not_found(format!("outbox operation {id}")))?;
        row.try_into()
    }

    /// The local view the operator edited when queuing op `id` (for the three-way view and
    /// the retention check).
    pub(crate) async fn op_base(&self, id: i64) -> Result<Option<LocalView>> {
        let base_json: Option<String> =
            sqlx::query_scalar("SELECT base_json FROM outbox WHERE id = ?")
                .bind(id)
                .fetch_one(&self.inner.pool)
                .await?;
        Ok(base_json.and_then(|b| serde_json::from_str(&b).ok()))
    }

    /// Lists outbox operations.
    pub async fn list_outbox(&self, filter: OutboxFilter) -> Result<Vec<OutboxOp>> {
        let states: &[OpState] = if filter.states.is_empty() {
            &LIVE_STATES
        } else {
            &filter.states
        };
        let mut sql = QueryBuilder::<Sqlite>::new(format!(
            "SELECT {OP_COLUMNS} FROM outbox WHERE state IN ("
        ));
        let mut each = sql.separated(", ");
        for state in states {
            each.push_bind(*state);
        }
        sql.push(")");
        if let Some(profile) = &filter.profile {
            sql.push(" AND profile = ").push_bind(profile);
        }
        if let Some(kind) = filter.kind {
            sql.push(" AND kind = ").push_bind(kind);
        }
        if let Some(name) = &filter.name {
            sql.push(" AND name = ").push_bind(name);
        }
        let order = if filter.newest_first { "DESC" } else { "ASC" };
        sql.push(format!(" ORDER BY seq {order}, id {order} LIMIT "))
            .push_bind(filter.limit.map(i64::from).unwrap_or(-1));
        let rows: Vec<OpRow> = sql.build_query_as().fetch_all(&self.inner.pool).await?;
        ops_from_rows(rows)
    }

    /// Live-operation counts of a profile.
    pub async fn pending_counts(&self, profile: &str) -> Result<PendingCounts> {
        let rows: Vec<(OpState, i64)> = sqlx::query_as(
            "SELECT state, COUNT(*) FROM outbox WHERE profile = ? AND state IN ('pending','sending','needs_attention') GROUP BY state",
        )
        .bind(profile)
        .fetch_all(&self.inner.pool)
        .await?;
        let mut c = PendingCounts::default();
        for (state, n) in rows {
            let n = n as u64;
            match state {
                OpState::Pending => c.pending = n,
                OpState::Sending => c.sending = n,
                _ => c.needs_attention = n,
            }
        }
        Ok(c)
    }

    /// Writes this process has on the wire right now (leased by it and sending), across
    /// profiles: what a graceful stop waits for. Leases of other or dead processes are not
    /// counted.
    pub async fn sending_here(&self) -> Result<u64> {
        let n: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM outbox WHERE state = 'sending' AND lease_owner = ?",
        )
        .bind(&self.inner.owner)
        .fetch_one(&self.inner.pool)
        .await?;
        Ok(n as u64)
    }

    pub(crate) async fn emit_counts(&self, profile: &str) {
        if self.inner.events.receiver_count() == 0 {
            return;
        }
        if let Ok(counts) = self.pending_counts(profile).await {
            self.emit(Event::PendingCount {
                profile: profile.to_owned(),
                counts,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Enums are stored as their snake_case names, and a value the code does not know is an
    /// error the caller sees, not a panic.
    #[tokio::test]
    async fn enums_round_trip_through_sqlite_and_unknown_text_is_an_error() {
        let pool = sqlx::SqlitePool::connect("sqlite::memory:").await.unwrap();
        for state in [
            OpState::Pending,
            OpState::NeedsAttention,
            OpState::Superseded,
        ] {
            let (text, back): (String, OpState) = sqlx::query_as("SELECT ?1, ?1")
                .bind(state)
                .fetch_one(&pool)
                .await
                .unwrap();
            assert_eq!((text.as_str(), back), (state.as_str(), state));
        }
        let kind: ResourceKind = sqlx::query_scalar("SELECT 'flow'")
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!(kind, ResourceKind::Flow);
        let bad = sqlx::query_scalar::<_, OpState>("SELECT 'lost'")
            .fetch_one(&pool)
            .await
            .map_err(CoreError::from)
            .unwrap_err();
        assert_eq!(bad.code(), "storage");
        let missing = sqlx::query_as::<_, OpRow>("SELECT 1 AS id")
            .fetch_one(&pool)
            .await
            .map_err(CoreError::from)
            .unwrap_err();
        assert!(missing.to_string().contains("profile"), "{missing}");
    }
}
