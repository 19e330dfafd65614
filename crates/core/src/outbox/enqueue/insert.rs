//! The INSERT of a new op, built as one statement: the row's values, and the guard that
//! keeps the one-statement path from committing over a cache row it did not read.

use sqlx::{QueryBuilder, Sqlite};

use super::{Current, Draft};
use crate::Console;
use crate::error::{CoreError, Result};
use crate::local;
use crate::types::*;

impl Console {
    /// The INSERT of a new op: one statement; triggers write the cache change and the audit
    /// entry. `guarded`: only while the cache row is still the one `current` was read from
    /// (`None`: another write got in between). Without the guard, `None` means the key is
    /// taken.
    pub(super) async fn insert_op<'e, E>(
        &self,
        executor: E,
        draft: &Draft,
        current: &Current,
        guarded: bool,
    ) -> Result<Option<i64>>
    where
        E: sqlx::Executor<'e, Database = Sqlite>,
    {
        let op = &draft.op;
        let mut sql = QueryBuilder::<Sqlite>::new(
            "INSERT INTO outbox (seq, profile, op, kind, name, body, base_json, base_version, if_match, if_match_fixed, \
             chained, after_keys, idempotency_key, state, next_attempt_at, created_at, updated_at, actor, local_after, origin, \
             request_fingerprint) \
             SELECT COALESCE(",
        );
        sql.push_bind(draft.seq).push(
            ", (SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'outbox'), 0) + 1))",
        );
        push_values(
            &mut sql,
            draft,
            current,
            op.origin.actor(&self.inner.opts.actor),
        );
        sql.push(" WHERE ");
        push_guard(&mut sql, guarded, current, op);
        sql.push(" ON CONFLICT (idempotency_key) DO NOTHING RETURNING id");
        sql.build_query_scalar()
            .fetch_optional(executor)
            .await
            .map_err(|e| CoreError::from_profile_write(e, &op.profile))
    }
}

/// The new row's values after its `seq`, in the order of the INSERT's columns (`actor`: who
/// queued it, as the audit names them).
fn push_values<'a>(
    sql: &mut QueryBuilder<'a, Sqlite>,
    draft: &'a Draft,
    current: &'a Current,
    actor: String,
) {
    let op = &draft.op;
    let after = local::after_keys(
        op.kind,
        &op.name,
        op.op,
        current.local.as_ref(),
        draft.result.as_ref(),
    );
    let mut values = sql.separated(", ");
    values.push_unseparated(", ");
    values
        .push_bind(&op.profile)
        .push_bind(op.op)
        .push_bind(op.kind)
        .push_bind(&op.name)
        .push_bind((!op.body.is_null()).then(|| op.body.to_string()))
        .push_bind(current.snapshot.as_ref().and_then(|s| s.local_json.clone()))
        .push_bind(op.base_version)
        .push_bind(draft.if_match.version)
        .push_bind(draft.if_match.fixed)
        .push_bind(draft.if_match.chained)
        .push_bind(serde_json::to_string(&after).expect("keys serialize"))
        .push_bind(&op.idempotency_key)
        .push("'pending'")
        .push_bind(op.created_at)
        .push_bind(op.created_at)
        .push_bind(op.created_at)
        .push_bind(actor)
        .push_bind(serde_json::to_string(&draft.result).expect("view serializes"))
        .push_bind(
            (op.origin != Origin::Console)
                .then(|| serde_json::to_string(&op.origin).expect("origin serializes")),
        )
        .push_bind(draft.fingerprint.clone());
}

/// The INSERT's condition. Unguarded: always. Guarded: the cache row is still absent, or
/// still the one `current` was read from (compared whole, with whether writes are queued).
fn push_guard<'a>(
    sql: &mut QueryBuilder<'a, Sqlite>,
    guarded: bool,
    current: &'a Current,
    op: &'a OutboxOp,
) {
    match (guarded, &current.snapshot) {
        (false, _) => sql.push("1"),
        (true, None) => {
            sql.push("NOT EXISTS (SELECT 1 FROM cache c WHERE ");
            push_cache_row(sql, op).push(")")
        }
        (true, Some(snap)) => {
            sql.push("(SELECT (c.server_version, c.server_json, c.local_json, EXISTS (SELECT 1 FROM outbox o \
                   WHERE o.profile = c.profile AND o.kind = c.kind AND o.name = c.name \
                   AND o.state IN ('pending', 'sending', 'needs_attention'))) IS (")
            .push_bind(snap.server_version)
            .push(", ")
            .push_bind(&snap.server_json)
            .push(", ")
            .push_bind(&snap.local_json)
            .push(", ")
            .push_bind(snap.queued)
            .push(") FROM cache c WHERE ");
            push_cache_row(sql, op).push(")")
        }
    };
}

/// `c.profile = … AND c.kind = … AND c.name = …`: the cache row `op` writes.
fn push_cache_row<'q, 'a>(
    sql: &'q mut QueryBuilder<'a, Sqlite>,
    op: &'a OutboxOp,
) -> &'q mut QueryBuilder<'a, Sqlite> {
    sql.push("c.profile = ")
        .push_bind(&op.profile)
        .push(" AND c.kind = ")
        .push_bind(op.kind)
        .push(" AND c.name = ")
        .push_bind(&op.name)
}
