//! Queuing a write: validate it, fix its idempotency key (minted here once, or the caller's),
//! and commit the outbox row with the optimistic cache change and the audit entry in one
//! `BEGIN IMMEDIATE` transaction. Works offline.

use sqlx::{Sqlite, Transaction};
use switchyard_protocol::{Resource, ResourceKind};

use super::{OP_COLUMNS, OpRow};
use crate::Console;
use crate::audit::Audit;
use crate::error::{CoreError, Result};
use crate::local::{self, Prepared, apply_op, prepare};
use crate::types::*;

/// The op a retry-as-new replaces: its place in the order, and the If-Match the new op sends.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Replaces {
    pub seq: i64,
    pub old_id: i64,
    pub if_match: Option<i64>,
}

/// What the cache says about a resource when a write to it is queued.
struct Current {
    server: Option<Resource>,
    local: Option<LocalView>,
    /// Earlier writes to it are still queued.
    queued: bool,
}

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

/// An op already queued under `key`: the same write (replayed), or a refusal.
fn same_write(
    existing: OutboxOp,
    profile: &str,
    prepared: &Prepared,
    key: &str,
) -> Result<Enqueued> {
    let same = existing.profile == profile
        && existing.op == prepared.op
        && existing.kind == prepared.kind
        && existing.name == prepared.name
        && existing.body == prepared.body;
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
async fn current(
    tx: &mut Transaction<'_, Sqlite>,
    profile: &str,
    kind: ResourceKind,
    name: &str,
) -> Result<Current> {
    let row: Option<(Option<String>, Option<String>, bool)> = sqlx::query_as(
        "SELECT c.server_json, c.local_json, EXISTS (SELECT 1 FROM outbox o WHERE o.profile = c.profile \
         AND o.kind = c.kind AND o.name = c.name AND o.state IN ('pending', 'sending', 'needs_attention')) \
         FROM cache c WHERE c.profile = ? AND c.kind = ? AND c.name = ?",
    )
    .bind(profile)
    .bind(kind)
    .bind(name)
    .fetch_optional(&mut **tx)
    .await?;
    let (server, local, queued) = row.unwrap_or_default();
    Ok(Current {
        server: server.and_then(|s| serde_json::from_str(&s).ok()),
        local: local.and_then(|s| serde_json::from_str(&s).ok()),
        queued,
    })
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
            let existing: Option<OpRow> = sqlx::query_as(&format!(
                "SELECT {OP_COLUMNS} FROM outbox WHERE idempotency_key = ?"
            ))
            .bind(&key)
            .fetch_optional(&mut *tx)
            .await?;
            if let Some(row) = existing {
                return same_write(row.try_into()?, profile, &prepared, &key);
            }
        }
        let current = current(&mut tx, profile, kind, name).await?;
        let result = apply_op(
            kind,
            name,
            current.local.as_ref(),
            prepared.op,
            &prepared.body,
        )?;
        let if_match = if_match_for(prepared.op, replaces, opts.if_match, &current);
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
        let id = self
            .insert_op(&mut tx, &op, &current, &if_match, replaces, result.as_ref())
            .await?;
        // The cache change and the audit entry are written by triggers (migration 0002).
        if let Some(Replaces { old_id, .. }) = replaces {
            Audit::new(now, &self.inner.opts.actor, "op.retry_as_new", "ok")
                .profile(profile)
                .op(id)
                .resource(format!("{kind}/{name}"))
                .detail(prepared.op.as_str())
                .record(&mut tx)
                .await?;
            supersede(&mut tx, old_id, id, now).await?;
        }
        tx.commit().await?;
        let op = OutboxOp { id, ..op };
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

    /// The INSERT of a new op (one statement; triggers write the cache change and the audit
    /// entry). Returns its id.
    async fn insert_op(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        op: &OutboxOp,
        current: &Current,
        if_match: &IfMatch,
        replaces: Option<Replaces>,
        result: Option<&LocalView>,
    ) -> Result<i64> {
        let after = local::after_keys(op.kind, op.op, result);
        let body_text = (!op.body.is_null()).then(|| op.body.to_string());
        let inserted: Option<i64> = sqlx::query_scalar(
            "INSERT INTO outbox (seq, profile, op, kind, name, body, base_json, base_version, if_match, if_match_fixed, \
             chained, after_keys, idempotency_key, state, next_attempt_at, created_at, updated_at, actor, local_after, origin) \
             VALUES (COALESCE(?, (SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'outbox'), 0) + 1)), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, \
             'pending', ?, ?, ?, ?, ?, ?) ON CONFLICT (idempotency_key) DO NOTHING RETURNING id",
        )
        .bind(replaces.map(|r| r.seq))
        .bind(&op.profile)
        .bind(op.op)
        .bind(op.kind)
        .bind(&op.name)
        .bind(&body_text)
        .bind(current.local.as_ref().map(|c| serde_json::to_string(c).expect("view serializes")))
        .bind(op.base_version)
        .bind(if_match.version)
        .bind(if_match.fixed as i64)
        .bind(if_match.chained as i64)
        .bind(serde_json::to_string(&after).expect("keys serialize"))
        .bind(&op.idempotency_key)
        .bind(op.created_at)
        .bind(op.created_at)
        .bind(op.created_at)
        .bind(op.origin.actor(&self.inner.opts.actor))
        .bind(serde_json::to_string(&result).expect("view serializes"))
        .bind(
            (op.origin != Origin::Console)
                .then(|| serde_json::to_string(&op.origin).expect("origin serializes")),
        )
        .fetch_optional(&mut **tx)
        .await
        .map_err(|e| match &e {
            sqlx::Error::Database(d) if d.message().contains("FOREIGN KEY") => {
                CoreError::not_found(format!("profile {:?}", op.profile))
            }
            _ => CoreError::from(e),
        })?;
        inserted.ok_or_else(|| CoreError::KeyReused {
            key: op.idempotency_key.clone(),
        })
    }
}
