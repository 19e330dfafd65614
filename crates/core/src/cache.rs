//! The local cache: last confirmed server state per resource, with versions, browsable
//! offline; refreshed on demand and after sync.

use std::collections::{HashMap, HashSet};

use sqlx::{QueryBuilder, Sqlite, Transaction};
use switchyard_protocol::{Resource, ResourceKind};

use crate::Console;
use crate::audit::Audit;
use crate::error::{CoreError, Result};
use crate::local::{self, apply_op};
use crate::outbox::live_ops_of;
use crate::types::*;

impl Console {
    /// Cached resources whose name contains `query` (case-insensitive), by name, at most
    /// `limit` — for a command palette that must not load every resource to search.
    pub async fn search_resources(
        &self,
        profile: &str,
        query: &str,
        limit: u32,
    ) -> Result<Vec<(ResourceKind, String)>> {
        let pattern = format!(
            "%{}%",
            query
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_")
        );
        let rows: Vec<(ResourceKind, String)> = sqlx::query_as(
            "SELECT kind, name FROM cache WHERE profile = ? AND name LIKE ? ESCAPE '\\' \
             ORDER BY name, kind LIMIT ?",
        )
        .bind(profile)
        .bind(pattern)
        .bind(limit)
        .fetch_all(&self.inner.pool)
        .await?;
        Ok(rows)
    }

    /// How many resources of each kind the cache holds (including local creations and
    /// deletions, as the lists show them), and how many endpoints are disabled.
    pub async fn resource_counts(&self, profile: &str) -> Result<ResourceCounts> {
        let rows: Vec<(ResourceKind, i64, i64)> = sqlx::query_as(
            "SELECT kind, COUNT(*), SUM(CASE WHEN COALESCE(json_extract(local_json, '$.enabled'), \
             json_extract(server_json, '$.status.enabled')) = 0 THEN 1 ELSE 0 END) \
             FROM cache WHERE profile = ? GROUP BY kind",
        )
        .bind(profile)
        .fetch_all(&self.inner.pool)
        .await?;
        let mut counts = ResourceCounts::default();
        for (kind, n, disabled) in rows {
            let n = u32::try_from(n).unwrap_or(u32::MAX);
            match kind {
                ResourceKind::Endpoint => {
                    counts.endpoints = n;
                    counts.disabled_endpoints = u32::try_from(disabled).unwrap_or(0);
                }
                ResourceKind::Target => counts.targets = n,
                ResourceKind::Flow => counts.flows = n,
            }
        }
        Ok(counts)
    }

    /// Every cached resource of a kind (including ones created or deleted locally), by name.
    pub async fn list_resources(
        &self,
        profile: &str,
        kind: ResourceKind,
    ) -> Result<Vec<CachedResource>> {
        self.profile(profile).await?;
        self.read_cache(profile, kind, None).await
    }

    /// One cached resource.
    pub async fn get_resource(
        &self,
        profile: &str,
        kind: ResourceKind,
        name: &str,
    ) -> Result<CachedResource> {
        self.read_cache(profile, kind, Some(name))
            .await?
            .pop()
            .ok_or_else(|| CoreError::not_found(format!("{kind} {name:?} in profile {profile:?}")))
    }

    async fn read_cache(
        &self,
        profile: &str,
        kind: ResourceKind,
        name: Option<&str>,
    ) -> Result<Vec<CachedResource>> {
        let mut sql = QueryBuilder::<Sqlite>::new(
            "SELECT name, server_json, local_json, refreshed_at FROM cache WHERE profile = ",
        );
        sql.push_bind(profile).push(" AND kind = ").push_bind(kind);
        if let Some(name) = name {
            sql.push(" AND name = ").push_bind(name);
        }
        sql.push(" ORDER BY name");
        let rows: Vec<CacheView> = sql.build_query_as().fetch_all(&self.inner.pool).await?;
        let mut sql =
            QueryBuilder::<Sqlite>::new("SELECT id, name, state FROM outbox WHERE profile = ");
        sql.push_bind(profile).push(" AND kind = ").push_bind(kind);
        if let Some(name) = name {
            sql.push(" AND name = ").push_bind(name);
        }
        sql.push(" AND state IN ('pending','sending','needs_attention') ORDER BY seq, id");
        let ops: Vec<(i64, String, OpState)> =
            sql.build_query_as().fetch_all(&self.inner.pool).await?;
        let mut by_name: HashMap<String, (Vec<i64>, SyncState)> = HashMap::new();
        for (id, name, state) in ops {
            let entry = by_name
                .entry(name)
                .or_insert((Vec::new(), SyncState::Synced));
            entry.0.push(id);
            let state = match state {
                OpState::NeedsAttention => SyncState::NeedsAttention,
                OpState::Sending => SyncState::Sending,
                _ => SyncState::Pending,
            };
            entry.1 = worst(entry.1, state);
        }
        Ok(rows
            .into_iter()
            .map(|r| {
                let (pending_ops, sync_state) = by_name
                    .remove(&r.name)
                    .unwrap_or((Vec::new(), SyncState::Synced));
                CachedResource {
                    profile: profile.to_owned(),
                    kind,
                    name: r.name,
                    server: r.server_json.and_then(|s| serde_json::from_str(&s).ok()),
                    local: r.local_json.and_then(|s| serde_json::from_str(&s).ok()),
                    sync_state,
                    pending_ops,
                    refreshed_at: r.refreshed_at,
                }
            })
            .collect())
    }

    /// Fetches every resource of the profile from the server and replaces the cache's
    /// server state; queued writes stay folded into the local views. Each page (500) is
    /// stored in its own short transaction as it arrives, so a refresh never holds the
    /// writer across a network call and never holds every resource in memory at once;
    /// resources gone from the server are marked once every page has arrived.
    pub async fn refresh(&self, profile: &str) -> Result<RefreshReport> {
        let client = self.client(profile).await?;
        let now = self.now();
        let mut seen: HashSet<(ResourceKind, String)> = HashSet::new();
        for kind in ResourceKind::ALL {
            let mut cursor: Option<String> = None;
            loop {
                let page = match client.list_page(kind, cursor.as_deref()).await {
                    Ok(page) => page,
                    Err(e) => {
                        if matches!(e, CoreError::Offline { .. }) {
                            self.emit(Event::Connectivity {
                                profile: profile.to_owned(),
                                online: false,
                                detail: Some(e.to_string()),
                            });
                        }
                        return Err(e);
                    }
                };
                let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
                for r in &page.items {
                    seen.insert((r.kind, r.name.clone()));
                    upsert_server(&mut tx, profile, r.kind, &r.name, Some(r), now).await?;
                }
                tx.commit().await?;
                match page.next_cursor {
                    Some(c) => cursor = Some(c),
                    None => break,
                }
            }
        }
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        let existing: Vec<(ResourceKind, String)> =
            sqlx::query_as("SELECT kind, name FROM cache WHERE profile = ?")
                .bind(profile)
                .fetch_all(&mut *tx)
                .await?;
        for (kind, name) in existing {
            if !seen.contains(&(kind, name.clone())) {
                upsert_server(&mut tx, profile, kind, &name, None, now).await?;
            }
        }
        let total = seen.len();
        Audit::new(now, &self.inner.opts.actor, "cache.refresh", "ok")
            .profile(profile)
            .detail(format!("{total} resources"))
            .record(&mut tx)
            .await?;
        tx.commit().await?;
        self.emit(Event::Connectivity {
            profile: profile.to_owned(),
            online: true,
            detail: None,
        });
        self.emit(Event::CacheChanged {
            profile: profile.to_owned(),
        });
        Ok(RefreshReport {
            profile: profile.to_owned(),
            resources: total as u64,
            at: now,
        })
    }

    /// Stores one resource's live server state (or its absence) and rebuilds its local view.
    pub(crate) async fn store_server_state(
        &self,
        profile: &str,
        kind: ResourceKind,
        name: &str,
        server: Option<&Resource>,
    ) -> Result<()> {
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        upsert_server(&mut tx, profile, kind, name, server, self.now()).await?;
        tx.commit().await?;
        Ok(())
    }
}

/// A cache row as listed.
#[derive(sqlx::FromRow)]
struct CacheView {
    name: String,
    server_json: Option<String>,
    local_json: Option<String>,
    refreshed_at: Option<i64>,
}

fn worst(a: SyncState, b: SyncState) -> SyncState {
    let rank = |s| match s {
        SyncState::Synced => 0,
        SyncState::Pending => 1,
        SyncState::Sending => 2,
        SyncState::NeedsAttention => 3,
    };
    if rank(b) > rank(a) { b } else { a }
}

/// Sets a resource's server state (None = absent on the server) and rebuilds its local view.
pub(crate) async fn upsert_server(
    tx: &mut Transaction<'_, Sqlite>,
    profile: &str,
    kind: ResourceKind,
    name: &str,
    server: Option<&Resource>,
    now: i64,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO cache (profile, kind, name, server_json, server_version, refreshed_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
         ON CONFLICT (profile, kind, name) DO UPDATE SET server_json = ?4, server_version = ?5, refreshed_at = ?6",
    )
    .bind(profile)
    .bind(kind)
    .bind(name)
    .bind(server.map(|s| serde_json::to_string(s).expect("resource serializes")))
    .bind(server.map(|s| s.version))
    .bind(now)
    .execute(&mut **tx)
    .await?;
    recompute_local(tx, profile, kind, name).await
}

/// A cache row as stored.
pub(crate) struct CacheRow {
    pub server: Option<Resource>,
}

pub(crate) async fn cache_row(
    tx: &mut Transaction<'_, Sqlite>,
    profile: &str,
    kind: ResourceKind,
    name: &str,
) -> Result<CacheRow> {
    let server: Option<Option<String>> = sqlx::query_scalar(
        "SELECT server_json FROM cache WHERE profile = ? AND kind = ? AND name = ?",
    )
    .bind(profile)
    .bind(kind)
    .bind(name)
    .fetch_optional(&mut **tx)
    .await?;
    Ok(CacheRow {
        server: server.flatten().and_then(|s| serde_json::from_str(&s).ok()),
    })
}

/// Writes the local view of a resource (keeping its server state).
pub(crate) async fn write_local(
    tx: &mut Transaction<'_, Sqlite>,
    profile: &str,
    kind: ResourceKind,
    name: &str,
    local: Option<&LocalView>,
) -> Result<()> {
    let json = local.map(|l| serde_json::to_string(l).expect("view serializes"));
    sqlx::query(
        "INSERT INTO cache (profile, kind, name, local_json, local_deleted) VALUES (?1, ?2, ?3, ?4, ?5) \
         ON CONFLICT (profile, kind, name) DO UPDATE SET local_json = ?4, local_deleted = ?5",
    )
    .bind(profile)
    .bind(kind)
    .bind(name)
    .bind(json)
    .bind(local.is_none() as i64)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Rebuilds a resource's local view: its server state with the live ops folded in.
/// An op that no longer applies (e.g. its target vanished) is skipped in the view.
pub(crate) async fn recompute_local(
    tx: &mut Transaction<'_, Sqlite>,
    profile: &str,
    kind: ResourceKind,
    name: &str,
) -> Result<()> {
    let row = cache_row(tx, profile, kind, name).await?;
    let ops = live_ops_of(tx, profile, kind, name).await?;
    let mut view = row.server.as_ref().map(local::view_of);
    for op in &ops {
        if let Ok(next) = apply_op(kind, name, view.as_ref(), op.op, &op.body) {
            view = next;
        }
    }
    if row.server.is_none() && ops.is_empty() {
        sqlx::query("DELETE FROM cache WHERE profile = ? AND kind = ? AND name = ?")
            .bind(profile)
            .bind(kind)
            .bind(name)
            .execute(&mut **tx)
            .await?;
        return Ok(());
    }
    write_local(tx, profile, kind, name, view.as_ref()).await
}

/// The cache change of a confirmed op (`resource`: the server's answer, `None` for a
/// delete): the server's answer is the newest truth for this resource, unless a refresh
/// already brought something newer.
pub(crate) async fn settle(
    tx: &mut Transaction<'_, Sqlite>,
    op: &OutboxOp,
    resource: Option<&Resource>,
    now: i64,
) -> Result<()> {
    let state: Option<(Option<i64>, bool)> = sqlx::query_as(
        "SELECT c.server_version, EXISTS (SELECT 1 FROM outbox o WHERE o.profile = c.profile AND o.kind = c.kind \
         AND o.name = c.name AND o.state IN ('pending', 'sending', 'needs_attention')) \
         FROM cache c WHERE c.profile = ? AND c.kind = ? AND c.name = ?",
    )
    .bind(&op.profile)
    .bind(op.kind)
    .bind(&op.name)
    .fetch_optional(&mut **tx)
    .await?;
    let cached = state.and_then(|(version, _)| version);
    let more_queued = state.is_some_and(|(_, more)| more);
    match (resource, op.op) {
        // The common case: nothing else queued for this resource, so the local view is
        // the server's answer. One statement.
        (Some(r), _) if !more_queued && cached.is_none_or(|v| r.version >= v) => {
            sqlx::query(
                "INSERT INTO cache (profile, kind, name, server_json, server_version, refreshed_at, local_json, local_deleted) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 0) ON CONFLICT (profile, kind, name) DO UPDATE SET \
                 server_json = ?4, server_version = ?5, refreshed_at = ?6, local_json = ?7, local_deleted = 0",
            )
            .bind(&op.profile)
            .bind(op.kind)
            .bind(&op.name)
            .bind(serde_json::to_string(r).expect("resource serializes"))
            .bind(r.version)
            .bind(now)
            .bind(serde_json::to_string(&local::view_of(r)).expect("view serializes"))
            .execute(&mut **tx)
            .await?;
            Ok(())
        }
        (Some(r), _) if cached.is_none_or(|v| r.version >= v) => {
            upsert_server(tx, &op.profile, op.kind, &op.name, Some(r), now).await
        }
        (None, OpKind::Delete) => {
            upsert_server(tx, &op.profile, op.kind, &op.name, None, now).await
        }
        _ => recompute_local(tx, &op.profile, op.kind, &op.name).await,
    }
}
