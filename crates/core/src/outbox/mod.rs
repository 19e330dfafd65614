//! The outbox: its rows and how they are read (here), queuing a write (`enqueue`: the
//! optimistic cache change and the row in ONE `BEGIN IMMEDIATE` transaction, the idempotency
//! key minted once), and a person's decisions (`decisions`: retry, retry as new, discard, the
//! three-way conflict view).

mod decisions;
mod enqueue;

pub(crate) use enqueue::Replaces;

use serde_json::Value;
use sqlx::sqlite::SqliteRow;
use sqlx::{Row, Sqlite, Transaction};
use switchyard_protocol::ResourceKind;

use crate::Console;
use crate::error::{CoreError, Result};
use crate::types::*;

pub(crate) const OP_COLUMNS: &str = "id, seq, profile, op, kind, name, body, base_json, base_version, if_match, \
    if_match_fixed, chained, after_keys, idempotency_key, state, attempts, failures, last_error, next_attempt_at, \
    created_at, updated_at, first_sent_at, result_version, replaced_by, lease_owner, lease_until, lease_epoch, origin";

pub(crate) fn op_from_row(r: &SqliteRow) -> Result<OutboxOp> {
    let corrupt = |what: &str| CoreError::storage(format!("outbox row has an unknown {what}"));
    let body: Option<String> = r.get("body");
    let last_error: Option<String> = r.get("last_error");
    let origin: Option<String> = r.get("origin");
    let origin = match origin {
        None => Origin::Console,
        Some(text) => serde_json::from_str(&text).map_err(|_| corrupt("origin"))?,
    };
    let state = OpState::parse(r.get("state")).ok_or_else(|| corrupt("state"))?;
    Ok(OutboxOp {
        id: r.get("id"),
        profile: r.get("profile"),
        op: OpKind::parse(r.get("op")).ok_or_else(|| corrupt("op"))?,
        kind: ResourceKind::parse(r.get("kind")).ok_or_else(|| corrupt("kind"))?,
        name: r.get("name"),
        body: body
            .and_then(|b| serde_json::from_str(&b).ok())
            .unwrap_or(Value::Null),
        base_version: r.get("base_version"),
        if_match: r.get("if_match"),
        idempotency_key: r.get("idempotency_key"),
        state,
        attempts: r.get::<i64, _>("attempts") as u32,
        last_error: last_error.and_then(|e| serde_json::from_str(&e).ok()),
        next_attempt_at: (state == OpState::Pending).then(|| r.get("next_attempt_at")),
        created_at: r.get("created_at"),
        updated_at: r.get("updated_at"),
        first_sent_at: r.get("first_sent_at"),
        result_version: r.get("result_version"),
        replaced_by: r.get("replaced_by"),
        origin,
    })
}

/// Live ops of one resource, in order.
pub(crate) async fn live_ops_of(
    tx: &mut Transaction<'_, Sqlite>,
    profile: &str,
    kind: ResourceKind,
    name: &str,
) -> Result<Vec<OutboxOp>> {
    let rows = sqlx::query(&format!(
        "SELECT {OP_COLUMNS} FROM outbox WHERE profile = ? AND kind = ? AND name = ? \
         AND state IN ('pending', 'sending', 'needs_attention') ORDER BY seq, id"
    ))
    .bind(profile)
    .bind(kind.as_str())
    .bind(name)
    .fetch_all(&mut **tx)
    .await?;
    rows.iter().map(op_from_row).collect()
}

impl Console {
    /// The op queued under `key`, if any.
    pub async fn op_by_key(&self, key: &str) -> Result<Option<OutboxOp>> {
        let row = sqlx::query(&format!(
            "SELECT {OP_COLUMNS} FROM outbox WHERE idempotency_key = ?"
        ))
        .bind(key)
        .fetch_optional(&self.inner.pool)
        .await?;
        row.as_ref().map(op_from_row).transpose()
    }

    /// One outbox operation.
    pub async fn op(&self, id: i64) -> Result<OutboxOp> {
        let row = sqlx::query(&format!("SELECT {OP_COLUMNS} FROM outbox WHERE id = ?"))
            .bind(id)
            .fetch_optional(&self.inner.pool)
            .await?
            .ok_or_else(|| CoreError::not_found(format!("outbox operation {id}")))?;
        op_from_row(&row)
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
        let states: Vec<&str> = if filter.states.is_empty() {
            vec!["pending", "sending", "needs_attention"]
        } else {
            filter.states.iter().map(|s| s.as_str()).collect()
        };
        let states_json = serde_json::to_string(&states).expect("states serialize");
        let order = if filter.newest_first { "DESC" } else { "ASC" };
        let rows = sqlx::query(&format!(
            "SELECT {OP_COLUMNS} FROM outbox WHERE (?1 IS NULL OR profile = ?1) \
             AND state IN (SELECT value FROM json_each(?2)) AND (?3 IS NULL OR kind = ?3) AND (?4 IS NULL OR name = ?4) \
             ORDER BY seq {order}, id {order} LIMIT ?5"
        ))
        .bind(&filter.profile)
        .bind(states_json)
        .bind(filter.kind.map(|k| k.as_str()))
        .bind(&filter.name)
        .bind(filter.limit.map(i64::from).unwrap_or(-1))
        .fetch_all(&self.inner.pool)
        .await?;
        rows.iter().map(op_from_row).collect()
    }

    /// Live-operation counts of a profile.
    pub async fn pending_counts(&self, profile: &str) -> Result<PendingCounts> {
        let rows = sqlx::query(
            "SELECT state, COUNT(*) AS n FROM outbox WHERE profile = ? AND state IN ('pending','sending','needs_attention') GROUP BY state",
        )
        .bind(profile)
        .fetch_all(&self.inner.pool)
        .await?;
        let mut c = PendingCounts::default();
        for r in rows {
            let n = r.get::<i64, _>("n") as u64;
            match r.get::<String, _>("state").as_str() {
                "pending" => c.pending = n,
                "sending" => c.sending = n,
                _ => c.needs_attention = n,
            }
        }
        Ok(c)
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
