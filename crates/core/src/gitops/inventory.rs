//! The GitOps tables of `console.db`: sources, the inventory (what each source manages, and
//! whether it created it), and the writes applies queued. Folding reads the outcome of those
//! writes from the outbox, so it is right whichever process (CLI, desktop) sent them.

use serde_json::Value;
use sqlx::{FromRow, Sqlite, Transaction};
use switchyard_protocol::ResourceKind;

use crate::Console;
use crate::audit::Audit;
use crate::error::{CoreError, Result};
use crate::gitops::repo::Resolved;
use crate::gitops::types::*;

/// One inventory row.
#[derive(Debug, Clone, PartialEq)]
pub struct InventoryEntry {
    pub kind: ResourceKind,
    pub name: String,
    pub source: String,
    /// A GitOps create of it was confirmed: a prune may delete it.
    pub created: bool,
    /// What Git last applied (canonical).
    pub spec: Value,
    pub commit: String,
    pub path: String,
    pub version: Option<i64>,
    pub updated_at: i64,
}

#[derive(FromRow)]
struct InventoryRow {
    kind: String,
    name: String,
    source: String,
    created: i64,
    spec: String,
    commit_id: String,
    path: String,
    version: Option<i64>,
    updated_at: i64,
}

impl TryFrom<InventoryRow> for InventoryEntry {
    type Error = CoreError;

    fn try_from(r: InventoryRow) -> Result<Self> {
        Ok(Self {
            kind: ResourceKind::parse(&r.kind)
                .ok_or_else(|| CoreError::storage("gitops inventory: unknown kind"))?,
            name: r.name,
            source: r.source,
            created: r.created != 0,
            spec: serde_json::from_str(&r.spec)
                .map_err(|_| CoreError::storage("gitops inventory: unreadable spec"))?,
            commit: r.commit_id,
            path: r.path,
            version: r.version,
            updated_at: r.updated_at,
        })
    }
}

#[derive(FromRow)]
struct SourceRow {
    source: String,
    repo: String,
    git_ref: String,
    path: String,
    queued_commit: Option<String>,
    queued_at: Option<i64>,
    applied_commit: Option<String>,
    applied_at: Option<i64>,
    managed: i64,
}

/// An unfolded GitOps write with its outbox state.
#[derive(FromRow)]
struct PendingWrite {
    op_id: i64,
    source: String,
    commit_id: String,
    path: String,
    kind: String,
    name: String,
    op: String,
    state: String,
    body: Option<String>,
    result_version: Option<i64>,
    /// When the outbox settled it.
    settled_at: i64,
}

/// The state of every write an apply of `commit` queued, per wave.
#[derive(FromRow)]
struct WaveRow {
    kind: String,
    op: String,
    state: String,
    n: i64,
}

const SOURCE_SELECT: &str = "SELECT s.source, s.repo, s.git_ref, s.path, s.queued_commit, s.queued_at, \
    s.applied_commit, s.applied_at, (SELECT COUNT(*) FROM gitops_inventory i WHERE i.profile = s.profile \
    AND i.source = s.source) AS managed FROM gitops_sources s WHERE s.profile = ?1";

fn source_from_row(profile: &str, r: SourceRow) -> GitopsSource {
    GitopsSource {
        profile: profile.to_owned(),
        id: r.source,
        spec: SourceSpec {
            repo: r.repo,
            git_ref: r.git_ref,
            path: r.path,
        },
        queued_commit: r.queued_commit,
        queued_at: r.queued_at,
        applied_commit: r.applied_commit,
        applied_at: r.applied_at,
        managed: u32::try_from(r.managed).unwrap_or(u32::MAX),
    }
}

impl Console {
    /// Records a source for a profile (or updates its ref), keeping its history.
    pub(crate) async fn gitops_save_source(&self, profile: &str, src: &Resolved) -> Result<()> {
        sqlx::query(
            "INSERT INTO gitops_sources (profile, source, repo, git_ref, path, created_at) VALUES (?, ?, ?, ?, ?, ?) \
             ON CONFLICT (profile, source) DO UPDATE SET git_ref = excluded.git_ref",
        )
        .bind(profile)
        .bind(&src.id)
        .bind(&src.spec.repo)
        .bind(&src.spec.git_ref)
        .bind(&src.spec.path)
        .bind(self.now())
        .execute(&self.inner.writer)
        .await
        .map_err(|e| CoreError::from_profile_write(e, profile))?;
        Ok(())
    }

    /// The sources of a profile, with what each last queued and applied.
    pub async fn gitops_sources(&self, profile: &str) -> Result<Vec<GitopsSource>> {
        self.profile(profile).await?;
        self.gitops_fold(profile).await?;
        let rows: Vec<SourceRow> = sqlx::query_as(&format!("{SOURCE_SELECT} ORDER BY s.source"))
            .bind(profile)
            .fetch_all(&self.inner.pool)
            .await?;
        Ok(rows
            .into_iter()
            .map(|r| source_from_row(profile, r))
            .collect())
    }

    pub(crate) async fn gitops_source(&self, profile: &str, id: &str) -> Result<GitopsSource> {
        let row: Option<SourceRow> = sqlx::query_as(&format!("{SOURCE_SELECT} AND s.source = ?2"))
            .bind(profile)
            .bind(id)
            .fetch_optional(&self.inner.pool)
            .await?;
        row.map(|r| source_from_row(profile, r)).ok_or_else(|| {
            CoreError::not_found(format!("GitOps source {id:?} of profile {profile:?}"))
        })
    }

    /// Forgets a source and its inventory. Its resources stay on the control plane, no longer
    /// managed (nothing is deleted).
    pub async fn gitops_remove_source(&self, profile: &str, id: &str) -> Result<()> {
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        let gone = sqlx::query("DELETE FROM gitops_sources WHERE profile = ? AND source = ?")
            .bind(profile)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        if gone.rows_affected() == 0 {
            return Err(CoreError::not_found(format!("GitOps source {id:?}")));
        }
        sqlx::query("DELETE FROM gitops_inventory WHERE profile = ? AND source = ?")
            .bind(profile)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        Audit::new(
            self.now(),
            &self.inner.opts.actor,
            "gitops.source_remove",
            "ok",
        )
        .profile(profile)
        .detail(id)
        .record(&mut tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// The profile's whole inventory (every source).
    pub(crate) async fn gitops_inventory(&self, profile: &str) -> Result<Vec<InventoryEntry>> {
        let rows: Vec<InventoryRow> = sqlx::query_as(
            "SELECT kind, name, source, created, spec, commit_id, path, version, updated_at \
             FROM gitops_inventory WHERE profile = ? ORDER BY kind, name",
        )
        .bind(profile)
        .fetch_all(&self.inner.pool)
        .await?;
        rows.into_iter().map(InventoryEntry::try_from).collect()
    }

    /// Folds the outcome of settled GitOps writes into the inventory: a confirmed create
    /// makes a member GitOps created, a confirmed update records what Git applied (adopting
    /// the resource if needed), a confirmed delete removes it; discarded and superseded writes
    /// change nothing (a retry-as-new write is recorded in its own right). Then marks a
    /// source's queued commit applied once every write of it is confirmed.
    pub(crate) async fn gitops_fold(&self, profile: &str) -> Result<()> {
        let unsettled: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM gitops_ops g JOIN outbox o ON o.id = g.op_id \
             WHERE g.profile = ? AND g.folded = 0 AND o.state IN ('done', 'discarded', 'superseded')",
        )
        .bind(profile)
        .fetch_one(&self.inner.pool)
        .await?;
        let unmarked: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM gitops_sources WHERE profile = ? AND queued_commit IS NOT NULL \
             AND applied_commit IS NOT queued_commit",
        )
        .bind(profile)
        .fetch_one(&self.inner.pool)
        .await?;
        // Nothing settled and nothing to mark: no write transaction (this runs on every read).
        if unsettled == 0 && unmarked == 0 {
            return Ok(());
        }
        let now = self.now();
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        if unsettled > 0 {
            let writes: Vec<PendingWrite> = sqlx::query_as(
                "SELECT g.op_id, g.source, g.commit_id, g.path, g.kind, g.name, g.op, o.state, o.body, o.result_version, \
                 o.updated_at AS settled_at \
                 FROM gitops_ops g JOIN outbox o ON o.id = g.op_id \
                 WHERE g.profile = ? AND g.folded = 0 AND o.state IN ('done', 'discarded', 'superseded') \
                 ORDER BY o.seq, o.id",
            )
            .bind(profile)
            .fetch_all(&mut *tx)
            .await?;
            for w in writes {
                if w.state == "done" {
                    fold_done(&mut tx, profile, &w).await?;
                }
                sqlx::query("UPDATE gitops_ops SET folded = 1 WHERE op_id = ?")
                    .bind(w.op_id)
                    .execute(&mut *tx)
                    .await?;
            }
        }
        // A queued commit is applied once none of its writes is live or was dropped.
        sqlx::query(
            "UPDATE gitops_sources SET applied_commit = queued_commit, applied_at = ?1 \
             WHERE profile = ?2 AND queued_commit IS NOT NULL \
             AND applied_commit IS NOT queued_commit AND NOT EXISTS ( \
               SELECT 1 FROM gitops_ops g JOIN outbox o ON o.id = g.op_id \
               WHERE g.profile = gitops_sources.profile AND g.source = gitops_sources.source \
               AND g.commit_id = gitops_sources.queued_commit \
               AND o.state IN ('pending', 'sending', 'needs_attention', 'discarded'))",
        )
        .bind(now)
        .bind(profile)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Turns each write's content key into the key it is queued under: the content key while
    /// no write under it has settled, else `<content key>.<n>`, n counting the settled ones
    /// (confirmed, discarded, superseded). A settled write already had its effect (or was
    /// dropped by a person); if the plan still needs the same write, the world changed since
    /// (the resource was deleted and re-created, a revert to an old commit), so it is a new
    /// write. A write still live (queued, being sent, needing attention) keeps its key.
    pub(crate) async fn gitops_settle_keys(&self, items: &mut [PlanItem]) -> Result<()> {
        let mut conn = self.inner.pool.acquire().await?;
        for item in items.iter_mut() {
            let Some(base) = item.key.take() else {
                continue;
            };
            let settled: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM outbox WHERE idempotency_key >= ?1 AND idempotency_key < ?2 \
                 AND state IN ('done', 'discarded', 'superseded')",
            )
            .bind(&base)
            .bind(format!("{base}/"))
            .fetch_one(&mut *conn)
            .await?;
            item.key = Some(if settled == 0 {
                base
            } else {
                format!("{base}.{settled}")
            });
        }
        Ok(())
    }

    /// Per-wave progress of every write applies of `commit` queued (the source's status).
    pub async fn gitops_progress(
        &self,
        profile: &str,
        source: &str,
        commit: &str,
    ) -> Result<ApplyProgress> {
        self.progress_of(profile, source, commit, None).await
    }

    /// Per-wave progress of only the writes `op_ids` (what one apply queued or resumed): a
    /// repeated or no-op apply of the same commit must not report an earlier apply's writes.
    pub async fn gitops_apply_progress(
        &self,
        profile: &str,
        source: &str,
        commit: &str,
        op_ids: &[i64],
    ) -> Result<ApplyProgress> {
        self.progress_of(profile, source, commit, Some(op_ids))
            .await
    }

    async fn progress_of(
        &self,
        profile: &str,
        source: &str,
        commit: &str,
        op_ids: Option<&[i64]>,
    ) -> Result<ApplyProgress> {
        // `?4` is NULL for every write of the commit, else a JSON array of the op ids.
        let ids = op_ids.map(|ids| Value::from(ids.to_vec()).to_string());
        let rows: Vec<WaveRow> = sqlx::query_as(
            "SELECT g.kind, g.op, o.state, COUNT(*) AS n FROM gitops_ops g JOIN outbox o ON o.id = g.op_id \
             WHERE g.profile = ?1 AND g.source = ?2 AND g.commit_id = ?3 AND o.state != 'superseded' \
             AND (?4 IS NULL OR g.op_id IN (SELECT value FROM json_each(?4))) \
             GROUP BY g.kind, g.op, o.state",
        )
        .bind(profile)
        .bind(source)
        .bind(commit)
        .bind(ids)
        .fetch_all(&self.inner.pool)
        .await?;
        let mut waves: Vec<WaveProgress> = (1..=4)
            .map(|wave| WaveProgress {
                wave,
                ..Default::default()
            })
            .collect();
        for r in rows {
            let kind = ResourceKind::parse(&r.kind)
                .ok_or_else(|| CoreError::storage("gitops op: unknown kind"))?;
            let action = if r.op == "delete" {
                PlanAction::Delete
            } else {
                PlanAction::Create
            };
            let w = &mut waves[usize::from(crate::gitops::plan::wave(kind, action)) - 1];
            let n = u32::try_from(r.n).unwrap_or(u32::MAX);
            w.total += n;
            match r.state.as_str() {
                "done" => w.done += n,
                "needs_attention" => w.needs_attention += n,
                "discarded" => w.discarded += n,
                _ => w.pending += n,
            }
        }
        let complete = waves.iter().all(|w| w.done == w.total);
        Ok(ApplyProgress {
            profile: profile.to_owned(),
            source: source.to_owned(),
            commit: commit.to_owned(),
            waves,
            complete,
        })
    }

    /// Records what an apply observed without writing: resources the commit declares that
    /// already match (adopted if new to the inventory), members released or gone.
    pub(crate) async fn gitops_record_plan(&self, plan: &GitopsPlan) -> Result<()> {
        let now = self.now();
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        for item in &plan.items {
            match item.action {
                PlanAction::Unchanged => {
                    let Some(spec) = plan_spec(item) else {
                        continue;
                    };
                    sqlx::query(
                        "INSERT INTO gitops_inventory (profile, kind, name, source, created, spec, commit_id, path, version, updated_at) \
                         VALUES (?1, ?2, ?3, ?4, 0, ?5, ?6, ?7, ?8, ?9) ON CONFLICT (profile, kind, name) DO UPDATE SET \
                         spec = ?5, commit_id = ?6, path = ?7, updated_at = ?9 WHERE source = ?4",
                    )
                    .bind(&plan.profile)
                    .bind(item.kind.as_str())
                    .bind(&item.name)
                    .bind(&plan.source)
                    .bind(spec)
                    .bind(&plan.commit)
                    .bind(item.path.as_deref().unwrap_or_default())
                    .bind(item.base_version)
                    .bind(now)
                    .execute(&mut *tx)
                    .await?;
                }
                PlanAction::Release => {
                    forget(&mut tx, plan, item.kind, &item.name).await?;
                }
                _ => {}
            }
        }
        // Members absent from both the commit and the control plane: nothing left to manage.
        let declared_or_live: std::collections::HashSet<(ResourceKind, &str)> = plan
            .items
            .iter()
            .map(|i| (i.kind, i.name.as_str()))
            .collect();
        let members: Vec<(String, String)> = sqlx::query_as(
            "SELECT kind, name FROM gitops_inventory WHERE profile = ? AND source = ?",
        )
        .bind(&plan.profile)
        .bind(&plan.source)
        .fetch_all(&mut *tx)
        .await?;
        for (kind, name) in members {
            let Some(kind) = ResourceKind::parse(&kind) else {
                continue;
            };
            if !declared_or_live.contains(&(kind, name.as_str())) {
                forget(&mut tx, plan, kind, &name).await?;
            }
        }
        sqlx::query(
            "UPDATE gitops_sources SET queued_commit = ?, queued_at = ? WHERE profile = ? AND source = ?",
        )
        .bind(&plan.commit)
        .bind(now)
        .bind(&plan.profile)
        .bind(&plan.source)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }
}

/// The canonical spec an item declares.
fn plan_spec(item: &PlanItem) -> Option<String> {
    item.desired
        .as_ref()
        .map(|v| serde_json::to_string(v).expect("specs serialize"))
}

async fn forget(
    tx: &mut Transaction<'_, Sqlite>,
    plan: &GitopsPlan,
    kind: ResourceKind,
    name: &str,
) -> Result<()> {
    sqlx::query(
        "DELETE FROM gitops_inventory WHERE profile = ? AND source = ? AND kind = ? AND name = ?",
    )
    .bind(&plan.profile)
    .bind(&plan.source)
    .bind(kind.as_str())
    .bind(name)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

async fn fold_done(
    tx: &mut Transaction<'_, Sqlite>,
    profile: &str,
    w: &PendingWrite,
) -> Result<()> {
    if w.op == "delete" {
        sqlx::query(
            "DELETE FROM gitops_inventory WHERE profile = ? AND kind = ? AND name = ? AND source = ?",
        )
        .bind(profile)
        .bind(&w.kind)
        .bind(&w.name)
        .bind(&w.source)
        .execute(&mut **tx)
        .await?;
        return Ok(());
    }
    let body: Value = w
        .body
        .as_deref()
        .and_then(|b| serde_json::from_str(b).ok())
        .unwrap_or(Value::Null);
    let spec = serde_json::to_string(&body["spec"]).expect("specs serialize");
    let created = i64::from(w.op == "create");
    // A confirmed create marks the member created whatever an earlier fold recorded.
    sqlx::query(
        "INSERT INTO gitops_inventory (profile, kind, name, source, created, spec, commit_id, path, version, updated_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) ON CONFLICT (profile, kind, name) DO UPDATE SET \
         source = ?4, created = MAX(created, ?5), spec = ?6, commit_id = ?7, path = ?8, version = ?9, updated_at = ?10",
    )
    .bind(profile)
    .bind(&w.kind)
    .bind(&w.name)
    .bind(&w.source)
    .bind(created)
    .bind(spec)
    .bind(&w.commit_id)
    .bind(&w.path)
    .bind(w.result_version)
    .bind(w.settled_at)
    .execute(&mut **tx)
    .await?;
    Ok(())
}
