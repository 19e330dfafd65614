//! The outbox: enqueue (the optimistic cache change and the row in ONE `BEGIN IMMEDIATE`
//! transaction, the idempotency key minted once here), listing, and a person's decisions
//! (retry, retry as new, discard, the three-way conflict view).

use serde_json::Value;
use sqlx::sqlite::SqliteRow;
use sqlx::{Row, Sqlite, Transaction};
use switchyard_protocol::{Resource, ResourceKind};

use crate::Console;
use crate::error::{CoreError, Result};
use crate::local::{self, apply_op, prepare};
use crate::types::*;

pub(crate) const OP_COLUMNS: &str = "id, seq, profile, op, kind, name, body, base_json, base_version, if_match, \
    if_match_fixed, chained, after_keys, idempotency_key, state, attempts, failures, last_error, next_attempt_at, \
    created_at, updated_at, first_sent_at, result_version, replaced_by, lease_owner, lease_until, lease_epoch, origin";

pub(crate) fn op_from_row(r: &SqliteRow) -> Result<OutboxOp> {
    let corrupt = |what: &str| CoreError::Storage(format!("outbox row has an unknown {what}"));
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

/// An op already queued under `key`: the same write (replayed), or a refusal. When the
/// caller fingerprints its requests, the fingerprint must match too.
fn same_write(
    existing: OutboxOp,
    existing_fingerprint: Option<String>,
    profile: &str,
    prepared: &local::Prepared,
    key: &str,
    fingerprint: Option<&str>,
) -> Result<Enqueued> {
    let same = existing.profile == profile
        && existing.op == prepared.op
        && existing.kind == prepared.kind
        && existing.name == prepared.name
        && existing.body == prepared.body
        && fingerprint.is_none_or(|f| existing_fingerprint.as_deref() == Some(f));
    if !same {
        return Err(CoreError::KeyReused {
            key: key.to_owned(),
        });
    }
    Ok(Enqueued {
        op: existing,
        replayed: true,
    })
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
    let row =
        sqlx::query("SELECT server_json FROM cache WHERE profile = ? AND kind = ? AND name = ?")
            .bind(profile)
            .bind(kind.as_str())
            .bind(name)
            .fetch_optional(&mut **tx)
            .await?;
    Ok(match row {
        None => CacheRow { server: None },
        Some(r) => {
            let server: Option<String> = r.get("server_json");
            CacheRow {
                server: server.and_then(|s| serde_json::from_str(&s).ok()),
            }
        }
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
    .bind(kind.as_str())
    .bind(name)
    .bind(json)
    .bind(local.is_none() as i64)
    .execute(&mut **tx)
    .await?;
    Ok(())
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
            .bind(kind.as_str())
            .bind(name)
            .execute(&mut **tx)
            .await?;
        return Ok(());
    }
    write_local(tx, profile, kind, name, view.as_ref()).await
}

/// The op a retry-as-new replaces: its place in the order, and the If-Match the new op sends.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Replaces {
    pub seq: i64,
    pub old_id: i64,
    pub if_match: Option<i64>,
}

/// Refuses an agent's write through a profile an operator marked read-only for agents.
/// Read inside the write transaction, so a mark set a moment ago is honoured.
pub(crate) async fn check_agent_may_write(
    tx: &mut Transaction<'_, Sqlite>,
    profile: &str,
    origin: &Origin,
) -> Result<()> {
    if !matches!(origin, Origin::Mcp { .. }) {
        return Ok(());
    }
    let read_only: Option<i64> =
        sqlx::query_scalar("SELECT agents_read_only FROM profiles WHERE name = ?")
            .bind(profile)
            .fetch_optional(&mut **tx)
            .await?;
    match read_only {
        None => Err(CoreError::not_found(format!("profile {profile:?}"))),
        Some(0) => Ok(()),
        Some(_) => Err(CoreError::AgentsReadOnly {
            profile: profile.to_owned(),
        }),
    }
}

/// A caller-chosen key must be a valid `Idempotency-Key` (1–255 printable ASCII).
fn check_key(key: &str) -> Result<()> {
    if key.is_empty() || key.len() > 255 || !key.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return Err(CoreError::invalid(
            "idempotency_key",
            "must be 1-255 printable ASCII characters",
        ));
    }
    Ok(())
}

impl Console {
    /// Queues a write. Validates it, mints its idempotency key, and commits the optimistic
    /// cache change, the outbox row and the audit entry in one transaction. Works offline.
    pub async fn enqueue(&self, profile: &str, write: Write) -> Result<OutboxOp> {
        let done = self
            .enqueue_inner(profile, write, None, &EnqueueOptions::default())
            .await?;
        Ok(done.op)
    }

    /// [`Console::enqueue`] with a caller-chosen key, an explicit If-Match and an origin (see
    /// [`EnqueueOptions`]). With a key, queuing the same write twice queues it once.
    pub async fn enqueue_with(
        &self,
        profile: &str,
        write: Write,
        opts: EnqueueOptions,
    ) -> Result<Enqueued> {
        if let Some(key) = &opts.idempotency_key {
            check_key(key)?;
        }
        self.enqueue_inner(profile, write, None, &opts).await
    }

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

    pub(crate) async fn enqueue_inner(
        &self,
        profile: &str,
        write: Write,
        replaces: Option<Replaces>,
        opts: &EnqueueOptions,
    ) -> Result<Enqueued> {
        let prepared = prepare(&write)?;
        let now = self.now();
        let key = match &opts.idempotency_key {
            Some(key) => key.clone(),
            None => uuid::Uuid::new_v4().to_string(),
        };
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        let (kind, name) = (prepared.kind, prepared.name.as_str());
        // A caller's key may already name an op (a retried MCP call, a resumed GitOps apply).
        // Checked before validating against the cache: a replayed create of a resource that
        // now exists is still the same write. The write lock is held, and the INSERT below
        // is guarded by the UNIQUE key as well.
        if opts.idempotency_key.is_some() {
            let existing = sqlx::query(&format!(
                "SELECT {OP_COLUMNS}, request_fingerprint FROM outbox WHERE idempotency_key = ?"
            ))
            .bind(&key)
            .fetch_optional(&mut *tx)
            .await?;
            if let Some(row) = existing {
                return same_write(
                    op_from_row(&row)?,
                    row.get("request_fingerprint"),
                    profile,
                    &prepared,
                    &key,
                    opts.fingerprint.as_deref(),
                );
            }
            // One key names one write: a replay session started under it is another write.
            if crate::replay::key_names_replay(&mut tx, &key).await? {
                return Err(CoreError::KeyReused { key });
            }
        }
        check_agent_may_write(&mut tx, profile, &opts.origin).await?;
        // Every live op keeps a cache row, so the row tells whether writes are queued.
        let row = sqlx::query(
            "SELECT c.server_json, c.local_json, EXISTS (SELECT 1 FROM outbox o WHERE o.profile = c.profile \
             AND o.kind = c.kind AND o.name = c.name AND o.state IN ('pending', 'sending', 'needs_attention')) AS queued \
             FROM cache c WHERE c.profile = ? AND c.kind = ? AND c.name = ?",
        )
        .bind(profile)
        .bind(kind.as_str())
        .bind(name)
        .fetch_optional(&mut *tx)
        .await?;
        let server: Option<Resource> = row
            .as_ref()
            .and_then(|r| r.get::<Option<String>, _>("server_json"))
            .and_then(|s| serde_json::from_str(&s).ok());
        let current: Option<LocalView> = row
            .as_ref()
            .and_then(|r| r.get::<Option<String>, _>("local_json"))
            .and_then(|s| serde_json::from_str(&s).ok());
        let queued = row.as_ref().is_some_and(|r| r.get::<i64, _>("queued") != 0);
        let result = apply_op(kind, name, current.as_ref(), prepared.op, &prepared.body)?;
        let server_version = server.as_ref().map(|s| s.version);
        let carries_if_match = matches!(prepared.op, OpKind::Update | OpKind::Delete);
        // If-Match: the version the operator edited. When earlier writes to this resource are
        // still queued, it is the version the last of them produces, fixed at first send.
        let (if_match, fixed, chained) = match replaces {
            Some(r) => (if carries_if_match { r.if_match } else { None }, 1, 0),
            None if opts.if_match.is_some()
                && matches!(prepared.op, OpKind::Update | OpKind::Apply | OpKind::Delete) =>
            {
                (opts.if_match, 1, 0)
            }
            None if !carries_if_match => (None, 1, 0),
            None if !queued => (server_version, 1, 0),
            None => (None, 0, 1),
        };
        let after = local::after_keys(kind, prepared.op, result.as_ref());
        let body_text = (!prepared.body.is_null()).then(|| prepared.body.to_string());
        let inserted = sqlx::query(
            "INSERT INTO outbox (seq, profile, op, kind, name, body, base_json, base_version, if_match, if_match_fixed, \
             chained, after_keys, idempotency_key, state, next_attempt_at, created_at, updated_at, actor, local_after, origin, \
             request_fingerprint) \
             VALUES (COALESCE(?, (SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'outbox'), 0) + 1)), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, \
             'pending', ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (idempotency_key) DO NOTHING RETURNING id, seq",
        )
        .bind(replaces.map(|r| r.seq))
        .bind(profile)
        .bind(prepared.op.as_str())
        .bind(kind.as_str())
        .bind(name)
        .bind(&body_text)
        .bind(current.as_ref().map(|c| serde_json::to_string(c).expect("view serializes")))
        .bind(server_version)
        .bind(if_match)
        .bind(fixed)
        .bind(chained)
        .bind(serde_json::to_string(&after).expect("keys serialize"))
        .bind(&key)
        .bind(now)
        .bind(now)
        .bind(now)
        .bind(opts.origin.actor(&self.inner.opts.actor))
        .bind(serde_json::to_string(&result).expect("view serializes"))
        .bind(
            (opts.origin != Origin::Console)
                .then(|| serde_json::to_string(&opts.origin).expect("origin serializes")),
        )
        .bind(&opts.fingerprint)
        .fetch_optional(&mut *tx)
        .await
        .map_err(|e| match &e {
            sqlx::Error::Database(d) if d.message().contains("FOREIGN KEY") => {
                CoreError::not_found(format!("profile {profile:?}"))
            }
            _ => CoreError::from(e),
        })?
        .ok_or_else(|| CoreError::KeyReused { key: key.clone() })?;
        let id: i64 = inserted.get("id");
        // The cache change and the audit entry are written by triggers (migration 0002).
        if replaces.is_some() {
            crate::audit::record(
                &mut tx,
                now,
                &self.inner.opts.actor,
                Some(profile),
                "op.retry_as_new",
                Some(id),
                Some(&format!("{kind}/{name}")),
                "ok",
                Some(prepared.op.as_str()),
            )
            .await?;
        }
        if let Some(Replaces { old_id, .. }) = replaces {
            let changed = sqlx::query(
                "UPDATE outbox SET state = 'superseded', replaced_by = ?, updated_at = ? WHERE id = ? AND state = 'needs_attention'",
            )
            .bind(id)
            .bind(now)
            .bind(old_id)
            .execute(&mut *tx)
            .await?;
            if changed.rows_affected() != 1 {
                return Err(CoreError::WrongState {
                    id: old_id,
                    state: "no longer needs_attention".into(),
                    action: "retried as new",
                });
            }
        }
        tx.commit().await?;
        let op = OutboxOp {
            id,
            profile: profile.to_owned(),
            op: prepared.op,
            kind,
            name: name.to_owned(),
            body: prepared.body.clone(),
            base_version: server_version,
            if_match,
            idempotency_key: key,
            state: OpState::Pending,
            attempts: 0,
            last_error: None,
            next_attempt_at: Some(now),
            created_at: now,
            updated_at: now,
            first_sent_at: None,
            result_version: None,
            replaced_by: None,
            origin: opts.origin.clone(),
        };
        self.emit(Event::OpTransition {
            profile: profile.to_owned(),
            op_id: id,
            from: None,
            to: OpState::Pending,
        });
        self.emit_counts(profile).await;
        Ok(Enqueued {
            op,
            replayed: false,
        })
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

    /// Sends a needs-attention op again. When its last failure was never stored by the
    /// server (gave up on transient failures, 400, 401, 429) the same key is reused;
    /// otherwise the server would replay the stored failure, so this retries it as a new
    /// operation (see [`Console::retry_as_new`]).
    pub async fn retry(&self, id: i64) -> Result<OutboxOp> {
        let op = self.op(id).await?;
        if op.state != OpState::NeedsAttention {
            return Err(CoreError::WrongState {
                id,
                state: op.state.as_str().into(),
                action: "retried",
            });
        }
        let stored_by_server = op.last_error.as_ref().is_some_and(|e| {
            !e.transient
                && e.status
                    .is_some_and(|s| !matches!(s, 400 | 401 | 413 | 415 | 429))
        });
        if stored_by_server {
            return self.retry_as_new(id).await;
        }
        let now = self.now();
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        let changed = sqlx::query(
            "UPDATE outbox SET state = 'pending', failures = 0, next_attempt_at = ?, updated_at = ? WHERE id = ? AND state = 'needs_attention'",
        )
        .bind(now)
        .bind(now)
        .bind(id)
        .execute(&mut *tx)
        .await?;
        if changed.rows_affected() != 1 {
            return Err(CoreError::WrongState {
                id,
                state: "changed concurrently".into(),
                action: "retried",
            });
        }
        crate::audit::record(
            &mut tx,
            now,
            &self.inner.opts.actor,
            Some(&op.profile),
            "op.retry",
            Some(id),
            Some(&format!("{}/{}", op.kind, op.name)),
            "ok",
            Some("same idempotency key"),
        )
        .await?;
        tx.commit().await?;
        self.emit(Event::OpTransition {
            profile: op.profile.clone(),
            op_id: id,
            from: Some(OpState::NeedsAttention),
            to: OpState::Pending,
        });
        self.emit_counts(&op.profile).await;
        self.op(id).await
    }

    /// Replaces a needs-attention op with a new one: a new idempotency key, rebased on the
    /// server's current version (fetched live; needs the server), same place in the order.
    pub async fn retry_as_new(&self, id: i64) -> Result<OutboxOp> {
        let op = self.op(id).await?;
        if op.state != OpState::NeedsAttention {
            return Err(CoreError::WrongState {
                id,
                state: op.state.as_str().into(),
                action: "retried as new",
            });
        }
        let client = self.client(&op.profile).await?;
        let current = client.get(op.kind, &op.name).await?;
        let write = match op.op {
            OpKind::Create => Write::Create {
                kind: op.kind,
                name: op.name.clone(),
                spec: op.body["spec"].clone(),
            },
            OpKind::Update => Write::Update {
                kind: op.kind,
                name: op.name.clone(),
                patch: op.body["spec"].clone(),
            },
            OpKind::Apply => Write::Apply {
                kind: op.kind,
                name: op.name.clone(),
                spec: op.body["spec"].clone(),
            },
            OpKind::Delete => Write::Delete {
                kind: op.kind,
                name: op.name.clone(),
            },
            OpKind::Enable => Write::Enable {
                name: op.name.clone(),
            },
            OpKind::Disable => Write::Disable {
                name: op.name.clone(),
            },
        };
        // Rebase the cache on server truth first, so the new op's base is what the server has.
        self.store_server_state(&op.profile, op.kind, &op.name, current.as_ref())
            .await?;
        let seq: i64 = sqlx::query_scalar("SELECT seq FROM outbox WHERE id = ?")
            .bind(id)
            .fetch_one(&self.inner.pool)
            .await?;
        // The new op keeps the origin (an agent's or GitOps' write stays theirs) with a new key.
        let opts = EnqueueOptions {
            origin: op.origin.clone(),
            ..Default::default()
        };
        let replaces = Replaces {
            seq,
            old_id: id,
            if_match: current.as_ref().map(|c| c.version),
        };
        let result = self
            .enqueue_inner(&op.profile, write, Some(replaces), &opts)
            .await
            .map(|done| done.op);
        if result.is_err() {
            let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
            recompute_local(&mut tx, &op.profile, op.kind, &op.name).await?;
            tx.commit().await?;
        }
        let new = result?;
        self.emit(Event::OpTransition {
            profile: op.profile.clone(),
            op_id: id,
            from: Some(OpState::NeedsAttention),
            to: OpState::Superseded,
        });
        Ok(new)
    }

    /// Drops a pending or needs-attention op; the cache returns to server truth plus the
    /// remaining queued writes.
    pub async fn discard(&self, id: i64) -> Result<OutboxOp> {
        let op = self.op(id).await?;
        if !matches!(op.state, OpState::Pending | OpState::NeedsAttention) {
            return Err(CoreError::WrongState {
                id,
                state: op.state.as_str().into(),
                action: "discarded",
            });
        }
        let now = self.now();
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        // A pending op is only discarded if no sync claimed it meanwhile.
        let changed = sqlx::query(
            "UPDATE outbox SET state = 'discarded', updated_at = ? WHERE id = ? AND state IN ('pending', 'needs_attention') AND lease_epoch = ?",
        )
        .bind(now)
        .bind(id)
        .bind(self.lease_epoch(id).await?)
        .execute(&mut *tx)
        .await?;
        if changed.rows_affected() != 1 {
            return Err(CoreError::WrongState {
                id,
                state: "being sent".into(),
                action: "discarded",
            });
        }
        recompute_local(&mut tx, &op.profile, op.kind, &op.name).await?;
        crate::audit::record(
            &mut tx,
            now,
            &self.inner.opts.actor,
            Some(&op.profile),
            "op.discard",
            Some(id),
            Some(&format!("{}/{}", op.kind, op.name)),
            "ok",
            Some(op.op.as_str()),
        )
        .await?;
        tx.commit().await?;
        self.emit(Event::OpTransition {
            profile: op.profile.clone(),
            op_id: id,
            from: Some(op.state),
            to: OpState::Discarded,
        });
        self.emit(Event::CacheChanged {
            profile: op.profile.clone(),
        });
        self.emit_counts(&op.profile).await;
        self.op(id).await
    }

    async fn lease_epoch(&self, id: i64) -> Result<i64> {
        Ok(
            sqlx::query_scalar("SELECT lease_epoch FROM outbox WHERE id = ?")
                .bind(id)
                .fetch_one(&self.inner.pool)
                .await?,
        )
    }

    /// The three-way view of an op (meant for 412 `version_mismatch`): the spec the operator
    /// started from, what they want, and what the server has now (live; from the cache when
    /// the server cannot be reached).
    pub async fn conflict(&self, id: i64) -> Result<ConflictView> {
        let op = self.op(id).await?;
        let base_json: Option<String> =
            sqlx::query_scalar("SELECT base_json FROM outbox WHERE id = ?")
                .bind(id)
                .fetch_one(&self.inner.pool)
                .await?;
        let base: Option<LocalView> = base_json.and_then(|b| serde_json::from_str(&b).ok());
        let mine = apply_op(op.kind, &op.name, base.as_ref(), op.op, &op.body)
            .ok()
            .flatten()
            .map(|v| v.spec);
        let (theirs, from_cache) = match self.client(&op.profile).await {
            Ok(client) => match client.get(op.kind, &op.name).await {
                Ok(r) => (r, false),
                Err(_) => (
                    self.get_resource(&op.profile, op.kind, &op.name)
                        .await
                        .ok()
                        .and_then(|c| c.server),
                    true,
                ),
            },
            Err(_) => (
                self.get_resource(&op.profile, op.kind, &op.name)
                    .await
                    .ok()
                    .and_then(|c| c.server),
                true,
            ),
        };
        let base_spec = base.map(|b| b.spec);
        let conflicting_fields = conflicting_fields(
            base_spec.as_ref(),
            mine.as_ref(),
            theirs.as_ref().map(|t| &t.spec),
        );
        Ok(ConflictView {
            op_id: id,
            kind: op.kind,
            name: op.name,
            base: base_spec,
            base_version: op.base_version.or(op.if_match),
            mine,
            theirs,
            theirs_from_cache: from_cache,
            conflicting_fields,
        })
    }
}

/// Top-level fields both sides changed from base, to different values.
fn conflicting_fields(
    base: Option<&Value>,
    mine: Option<&Value>,
    theirs: Option<&Value>,
) -> Vec<String> {
    let field = |v: Option<&Value>, k: &str| v.and_then(|v| v.get(k)).cloned();
    let mut keys: Vec<String> = [base, mine, theirs]
        .iter()
        .flat_map(|v| {
            v.and_then(|v| v.as_object())
                .map(|o| o.keys().cloned().collect::<Vec<_>>())
                .unwrap_or_default()
        })
        .collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| {
            let (b, m, t) = (field(base, k), field(mine, k), field(theirs, k));
            m != b && t != b && m != t
        })
        .collect()
}
