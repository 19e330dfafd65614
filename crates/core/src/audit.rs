//! The local audit log: every operator action and its outcome.

use sqlx::{QueryBuilder, Sqlite, SqlitePool, Transaction};

use crate::error::Result;
use crate::types::{AuditEntry, AuditQuery};

/// One entry to write. `at`, `actor`, `action` and `outcome` are always known; the rest is
/// set with the builder methods when the action concerns a profile, an op or a resource.
#[derive(Debug, Clone)]
pub struct Audit<'a> {
    pub at: i64,
    pub actor: &'a str,
    pub action: &'a str,
    pub outcome: &'a str,
    pub profile: Option<&'a str>,
    pub op_id: Option<i64>,
    /// `kind/name` (or `replay/<session>`).
    pub resource: Option<String>,
    pub detail: Option<String>,
}

impl<'a> Audit<'a> {
    pub fn new(at: i64, actor: &'a str, action: &'a str, outcome: &'a str) -> Self {
        Self {
            at,
            actor,
            action,
            outcome,
            profile: None,
            op_id: None,
            resource: None,
            detail: None,
        }
    }

    pub fn profile(mut self, profile: &'a str) -> Self {
        self.profile = Some(profile);
        self
    }

    pub fn op(mut self, id: i64) -> Self {
        self.op_id = Some(id);
        self
    }

    pub fn resource(mut self, resource: impl Into<String>) -> Self {
        self.resource = Some(resource.into());
        self
    }

    pub fn detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    /// Writes the entry inside the caller's transaction.
    pub async fn record(&self, tx: &mut Transaction<'_, Sqlite>) -> Result<()> {
        sqlx::query(
            "INSERT INTO audit (at, actor, profile, action, op_id, resource, outcome, detail) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(self.at)
        .bind(self.actor)
        .bind(self.profile)
        .bind(self.action)
        .bind(self.op_id)
        .bind(&self.resource)
        .bind(self.outcome)
        .bind(&self.detail)
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    /// Writes the entry in a transaction of its own.
    pub async fn insert(&self, pool: &SqlitePool) -> Result<()> {
        let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
        self.record(&mut tx).await?;
        tx.commit().await?;
        Ok(())
    }
}

/// A row of the `audit` table.
#[derive(sqlx::FromRow)]
struct AuditRow {
    id: i64,
    at: i64,
    actor: String,
    profile: Option<String>,
    action: String,
    op_id: Option<i64>,
    resource: Option<String>,
    outcome: String,
    detail: Option<String>,
}

impl From<AuditRow> for AuditEntry {
    fn from(r: AuditRow) -> Self {
        AuditEntry {
            id: r.id,
            at: r.at,
            actor: r.actor,
            profile: r.profile,
            action: r.action,
            op_id: r.op_id,
            resource: r.resource,
            outcome: r.outcome,
            detail: r.detail,
        }
    }
}

/// Newest first; only the filters that are set become conditions.
pub async fn query(pool: &SqlitePool, q: &AuditQuery) -> Result<Vec<AuditEntry>> {
    let mut sql = QueryBuilder::<Sqlite>::new(
        "SELECT id, at, actor, profile, action, op_id, resource, outcome, detail FROM audit WHERE 1 = 1",
    );
    if let Some(profile) = &q.profile {
        sql.push(" AND profile = ").push_bind(profile);
    }
    if let Some(op_id) = q.op_id {
        sql.push(" AND op_id = ").push_bind(op_id);
    }
    if let Some(prefix) = &q.action_prefix {
        sql.push(" AND substr(action, 1, length(")
            .push_bind(prefix)
            .push(")) = ")
            .push_bind(prefix);
    }
    if let Some(since) = q.since {
        sql.push(" AND at >= ").push_bind(since);
    }
    if let Some(until) = q.until {
        sql.push(" AND at <= ").push_bind(until);
    }
    sql.push(" ORDER BY id DESC LIMIT ")
        .push_bind(q.limit.unwrap_or(100).min(10_000) as i64);
    let rows: Vec<AuditRow> = sql.build_query_as().fetch_all(pool).await?;
    Ok(rows.into_iter().map(AuditEntry::from).collect())
}

/// The newest write queued on `resource` (`kind/name`) since `since` by anyone but GitOps:
/// `(actor, at)`. Tells who made a drift, when the change went through this console.
pub async fn last_manual_write(
    pool: &SqlitePool,
    profile: &str,
    resource: &str,
    since: i64,
) -> Result<Option<(String, i64)>> {
    let row: Option<(String, i64)> = sqlx::query_as(
        "SELECT actor, at FROM audit WHERE profile = ? AND resource = ? AND action = 'write.enqueue' \
         AND at >= ? AND actor NOT LIKE 'gitops%' ORDER BY id DESC LIMIT 1",
    )
    .bind(profile)
    .bind(resource)
    .bind(since)
    .fetch_optional(pool)
    .await?;
    Ok(row)
}
