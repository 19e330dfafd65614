//! Queuing a write: validate it, fix its idempotency key (minted here once, or the caller's),
//! and commit the outbox row with the optimistic cache change and the audit entry in one
//! transaction. Works offline.
//!
//! The row is one INSERT; triggers write the cache change and the audit entry in the same
//! statement (migrations 0002 and 0004). A plain write (fresh key, no op replaced) reads
//! the cache row first, outside any transaction, and then commits that INSERT on its own,
//! guarded by the cache row it read: if another write got in between, the guard stops it
//! and the write takes the transactional path (read and insert under `BEGIN IMMEDIATE`).
//!
//! Here: the key, the cache read, the draft and the transaction; `insert`: that INSERT;
//! `references`: a flow's endpoint and target must be known.

mod insert;
mod references;

use sqlx::{Sqlite, Transaction};
use switchyard_protocol::{Resource, ResourceKind};

use super::{OP_COLUMNS, OpRow};
use crate::Console;
use crate::audit::Audit;
use crate::error::{CoreError, Result};
use crate::local::{Prepared, apply_op, prepare};
use crate::types::*;
use references::check_references;

/// The op a retry-as-new replaces: its place in the order, and the If-Match the new op sends.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Replaces {
    pub seq: i64,
    pub old_id: i64,
    pub if_match: Option<i64>,
}

/// A cache row as read (absent: `None`), kept verbatim to guard the INSERT with.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
struct Snapshot {
    server_version: Option<i64>,
    server_json: Option<String>,
    local_json: Option<String>,
    /// Earlier writes to the resource are still queued.
    queued: bool,
}

/// What the cache says about a resource when a write to it is queued.
struct Current {
    server: Option<Resource>,
    local: Option<LocalView>,
    queued: bool,
    /// The row it was read from.
    snapshot: Option<Snapshot>,
}

impl Current {
    fn of(snapshot: Option<Snapshot>) -> Self {
        fn parse<T: serde::de::DeserializeOwned>(text: &Option<String>) -> Option<T> {
            text.as_deref().and_then(|s| serde_json::from_str(s).ok())
        }
        Self {
            server: snapshot.as_ref().and_then(|s| parse(&s.server_json)),
            local: snapshot.as_ref().and_then(|s| parse(&s.local_json)),
            queued: snapshot.as_ref().is_some_and(|s| s.queued),
            snapshot,
        }
    }
}

const SNAPSHOT: &str = "SELECT c.server_version, c.server_json, c.local_json, EXISTS (SELECT 1 FROM outbox o \
    WHERE o.profile = c.profile AND o.kind = c.kind AND o.name = c.name \
    AND o.state IN ('pending', 'sending', 'needs_attention')) AS queued \
    FROM cache c WHERE c.profile = ? AND c.kind = ? AND c.name = ?";

/// The `If-Match` a new op carries, and whether it is already fixed or chained to the
/// version its predecessor will produce (fixed at first send).
struct IfMatch {
    version: Option<i64>,
    fixed: bool,
    chained: bool,
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

/// An op already queued under `key`: the same write (replayed), or a refusal. When the
/// caller fingerprints its requests, the fingerprint must match too.
fn same_write(
    existing: OutboxOp,
    existing_fingerprint: Option<String>,
    profile: &str,
    prepared: &Prepared,
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

/// If-Match: the version the operator edited. When earlier writes to this resource are still
/// queued, it is the version the last of them produces, fixed at first send.
fn if_match_for(
    op: OpKind,
    replaces: Option<Replaces>,
    explicit: Option<i64>,
    current: &Current,
) -> IfMatch {
    let carries_if_match = matches!(op, OpKind::Update | OpKind::Delete);
    let fixed = |version| IfMatch {
        version,
        fixed: true,
        chained: false,
    };
    match replaces {
        Some(r) => fixed(if carries_if_match { r.if_match } else { None }),
        None if explicit.is_some()
            && matches!(op, OpKind::Update | OpKind::Apply | OpKind::Delete) =>
        {
            fixed(explicit)
        }
        None if !carries_if_match => fixed(None),
        None if !current.queued => fixed(current.server.as_ref().map(|s| s.version)),
        None => IfMatch {
            version: None,
            fixed: false,
            chained: true,
        },
    }
}

/// The cache row of a resource (every live op keeps one, so it also tells whether writes
/// are queued).
async fn current<'e, E>(
    executor: E,
    profile: &str,
    kind: ResourceKind,
    name: &str,
) -> Result<Current>
where
    E: sqlx::Executor<'e, Database = Sqlite>,
{
    let snapshot: Option<Snapshot> = sqlx::query_as(SNAPSHOT)
        .bind(profile)
        .bind(kind)
        .bind(name)
        .fetch_optional(executor)
        .await?;
    Ok(Current::of(snapshot))
}

/// Marks the op a retry-as-new replaces as superseded (only while it still needs attention).
async fn supersede(
    tx: &mut Transaction<'_, Sqlite>,
    old_id: i64,
    new_id: i64,
    now: i64,
) -> Result<()> {
    let changed = sqlx::query(
        "UPDATE outbox SET state = 'superseded', replaced_by = ?, updated_at = ? WHERE id = ? AND state = 'needs_attention'",
    )
    .bind(new_id)
    .bind(now)
    .bind(old_id)
    .execute(&mut **tx)
    .await?;
    if changed.rows_affected() != 1 {
        return Err(CoreError::WrongState {
            id: old_id,
            state: "no longer needs_attention".into(),
            action: "retried as new",
        });
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

    pub(crate) async fn enqueue_inner(
        &self,
        profile: &str,
        write: Write,
        replaces: Option<Replaces>,
        opts: &EnqueueOptions,
    ) -> Result<Enqueued> {
        let prepared = prepare(&write)?;
        // The one-statement path is for a person's plain write; a keyed write, a retry as new
        // and an agent's write (whose profile may refuse it) take the transactional path.
        if replaces.is_none() && opts.idempotency_key.is_none() && opts.origin == Origin::Console {
            let current = current(&self.inner.pool, profile, prepared.kind, &prepared.name).await?;
            let key = uuid::Uuid::new_v4().to_string();
            let draft = self.draft(profile, &prepared, key, None, opts, &current)?;
            check_references(&self.inner.pool, profile, &draft, &current).await?;
            if let Some(id) = self
                .insert_op(&self.inner.writer, &draft, &current, true)
                .await?
            {
                return Ok(self.queued(draft.op, id).await);
            }
            // Another write to this resource got in between: read again under the lock.
        }
        self.enqueue_locked(profile, &prepared, replaces, opts)
            .await
    }

    /// The transactional path: the key check, the cache read and the INSERT under
    /// `BEGIN IMMEDIATE`.
    async fn enqueue_locked(
        &self,
        profile: &str,
        prepared: &Prepared,
        replaces: Option<Replaces>,
        opts: &EnqueueOptions,
    ) -> Result<Enqueued> {
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
            let existing: Option<OpRow> = sqlx::query_as(&format!(
                "SELECT {OP_COLUMNS} FROM outbox WHERE idempotency_key = ?"
            ))
            .bind(&key)
            .fetch_optional(&mut *tx)
            .await?;
            if let Some(row) = existing {
                let fingerprint: Option<String> = sqlx::query_scalar(
                    "SELECT request_fingerprint FROM outbox WHERE idempotency_key = ?",
                )
                .bind(&key)
                .fetch_one(&mut *tx)
                .await?;
                return same_write(
                    row.try_into()?,
                    fingerprint,
                    profile,
                    prepared,
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
        let current = current(&mut *tx, profile, kind, name).await?;
        let draft = self.draft(profile, prepared, key, replaces, opts, &current)?;
        check_references(&mut *tx, profile, &draft, &current).await?;
        let id = self
            .insert_op(&mut *tx, &draft, &current, false)
            .await?
            .ok_or_else(|| CoreError::KeyReused {
                key: draft.op.idempotency_key.clone(),
            })?;
        if let Some(Replaces { old_id, .. }) = replaces {
            Audit::new(
                draft.op.created_at,
                &self.inner.opts.actor,
                "op.retry_as_new",
                "ok",
            )
            .profile(profile)
            .op(id)
            .resource(format!("{kind}/{name}"))
            .detail(prepared.op.as_str())
            .record(&mut tx)
            .await?;
            supersede(&mut tx, old_id, id, draft.op.created_at).await?;
        }
        tx.commit().await?;
        Ok(self.queued(draft.op, id).await)
    }

    /// The op a write becomes against the cache's current state (validated by applying it
    /// to the local view).
    fn draft(
        &self,
        profile: &str,
        prepared: &Prepared,
        key: String,
        replaces: Option<Replaces>,
        opts: &EnqueueOptions,
        current: &Current,
    ) -> Result<Draft> {
        let (kind, name) = (prepared.kind, prepared.name.as_str());
        let result = apply_op(
            kind,
            name,
            current.local.as_ref(),
            prepared.op,
            &prepared.body,
        )?;
        let if_match = if_match_for(prepared.op, replaces, opts.if_match, current);
        let now = self.now();
        let op = OutboxOp {
            id: 0,
            profile: profile.to_owned(),
            op: prepared.op,
            kind,
            name: name.to_owned(),
            body: prepared.body.clone(),
            base_version: current.server.as_ref().map(|s| s.version),
            if_match: if_match.version,
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
        Ok(Draft {
            op,
            fingerprint: opts.fingerprint.clone(),
            if_match,
            seq: replaces.map(|r| r.seq),
            result,
        })
    }

    /// A queued op, announced.
    async fn queued(&self, op: OutboxOp, id: i64) -> Enqueued {
        let op = OutboxOp { id, ..op };
        self.emit(Event::OpTransition {
            profile: op.profile.clone(),
            op_id: id,
            from: None,
            to: OpState::Pending,
        });
        self.emit_counts(&op.profile).await;
        Enqueued {
            op,
            replayed: false,
        }
    }
}

/// A write ready to insert.
struct Draft {
    op: OutboxOp,
    /// The caller's request fingerprint, compared when its key is used again.
    fingerprint: Option<String>,
    if_match: IfMatch,
    /// The place in the order (a retry-as-new keeps the one of the op it replaces).
    seq: Option<i64>,
    /// The local view after this op (`None`: deleted locally).
    result: Option<LocalView>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::ConsoleOptions;

    async fn guarded_insert(c: &Console, write: Write, current: &Current) -> Option<i64> {
        let prepared = prepare(&write).unwrap();
        let key = uuid::Uuid::new_v4().to_string();
        let draft = c
            .draft(
                "p",
                &prepared,
                key,
                None,
                &EnqueueOptions::default(),
                current,
            )
            .unwrap();
        c.insert_op(&c.inner.writer, &draft, current, true)
            .await
            .unwrap()
    }

    /// The single-statement enqueue commits only while the cache row is the one it read.
    #[tokio::test]
    async fn the_guarded_insert_passes_an_unchanged_row_and_stops_a_changed_one() {
        let dir = tempfile::tempdir().unwrap();
        let c = Console::open(ConsoleOptions::new(dir.path(), "test"))
            .await
            .unwrap();
        c.register_sandbox("http://127.0.0.1:9", "t").await.unwrap();
        sqlx::query("UPDATE profiles SET name = 'p'")
            .execute(&c.inner.writer)
            .await
            .unwrap();
        let kind = ResourceKind::Target;
        let create = Write::Create {
            kind,
            name: "t".into(),
            spec: json!({"url": "http://127.0.0.1:9/a"}),
        };
        let update = |h: &str| Write::Update {
            kind,
            name: "t".into(),
            patch: json!({"headers": {h: "v"}}),
        };
        let absent = current(&c.inner.pool, "p", kind, "t").await.unwrap();
        assert!(guarded_insert(&c, create.clone(), &absent).await.is_some());
        // The row now exists: a write planned against its absence is stopped.
        assert!(guarded_insert(&c, create, &absent).await.is_none());
        let read = current(&c.inner.pool, "p", kind, "t").await.unwrap();
        assert!(guarded_insert(&c, update("x-a"), &read).await.is_some());
        // `read` is stale now (the first update changed the local view).
        assert!(guarded_insert(&c, update("x-b"), &read).await.is_none());
        let fresh = current(&c.inner.pool, "p", kind, "t").await.unwrap();
        assert!(guarded_insert(&c, update("x-b"), &fresh).await.is_some());
    }
}
