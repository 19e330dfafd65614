//! The local audit log: every operator action and its outcome.

use sqlx::{Row, Sqlite, SqlitePool, Transaction};

use crate::error::Result;
use crate::types::{AuditEntry, AuditQuery};

#[allow(clippy::too_many_arguments)]
pub async fn record(
    tx: &mut Transaction<'_, Sqlite>,
    at: i64,
    actor: &str,
    profile: Option<&str>,
    action: &str,
    op_id: Option<i64>,
    resource: Option<&str>,
    outcome: &str,
    detail: Option<&str>,
) -> Result<()> {
    sqlx::query("INSERT INTO audit (at, actor, profile, action, op_id, resource, outcome, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
        .bind(at).bind(actor).bind(profile).bind(action).bind(op_id).bind(resource).bind(outcome).bind(detail)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
pub async fn insert(
    pool: &SqlitePool,
    at: i64,
    actor: &str,
    profile: Option<&str>,
    action: &str,
    op_id: Option<i64>,
    resource: Option<&str>,
    outcome: &str,
    detail: Option<&str>,
) -> Result<()> {
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
    record(
        &mut tx, at, actor, profile, action, op_id, resource, outcome, detail,
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

pub async fn query(pool: &SqlitePool, q: &AuditQuery) -> Result<Vec<AuditEntry>> {
    let rows = sqlx::query(
        "SELECT id, at, actor, profile, action, op_id, resource, outcome, detail FROM audit \
         WHERE (?1 IS NULL OR profile = ?1) AND (?2 IS NULL OR op_id = ?2) \
           AND (?3 IS NULL OR substr(action, 1, length(?3)) = ?3) \
           AND (?4 IS NULL OR at >= ?4) AND (?5 IS NULL OR at <= ?5) \
         ORDER BY id DESC LIMIT ?6",
    )
    .bind(&q.profile)
    .bind(q.op_id)
    .bind(&q.action_prefix)
    .bind(q.since)
    .bind(q.until)
    .bind(q.limit.unwrap_or(100).min(10_000) as i64)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .iter()
        .map(|r| AuditEntry {
            id: r.get("id"),
            at: r.get("at"),
            actor: r.get("actor"),
            profile: r.get("profile"),
            action: r.get("action"),
            op_id: r.get("op_id"),
            resource: r.get("resource"),
            outcome: r.get("outcome"),
            detail: r.get("detail"),
        })
        .collect())
}

/// The newest write queued on `resource` (`kind/name`) since `since` by anyone but GitOps:
/// `(actor, at)`. Tells who made a drift, when the change went through this console.
pub async fn last_manual_write(
    pool: &SqlitePool,
    profile: &str,
    resource: &str,
    since: i64,
) -> Result<Option<(String, i64)>> {
    let row = sqlx::query(
        "SELECT actor, at FROM audit WHERE profile = ? AND resource = ? AND action = 'write.enqueue' \
         AND at >= ? AND actor NOT LIKE 'gitops%' ORDER BY id DESC LIMIT 1",
    )
    .bind(profile)
    .bind(resource)
    .bind(since)
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|r| (r.get("actor"), r.get("at"))))
}
