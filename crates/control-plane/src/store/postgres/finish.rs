//! SQL of an attempt's outcome on PostgreSQL: the fenced update of its delivery and its
//! attempt row, one at a time or a batch in one transaction (the worker's group commit).

use sqlx::PgConnection;
use switchyard_protocol::ErrorClass;

use super::PostgresStore;
use super::sql::deliveries::replay_cancelled;
use super::sql::notify_work;
use crate::store::{Finish, StoreError, Transition};

/// The update of a retried attempt's delivery, given the condition that fences it.
macro_rules! finish_update {
    ($fence:literal) => {
        concat!(
            "UPDATE deliveries SET state = $1, next_attempt_at = $2, \
             dead_at = COALESCE($3, dead_at), \
             exhausted_hop = CASE WHEN $1 = 'dead' THEN (SELECT hop FROM attempts WHERE id = $4) ELSE exhausted_hop END, \
             lease_owner = NULL, lease_until = NULL, current_attempt = NULL, last_status = $5, error_class = $6, \
             updated_at = $7 WHERE id = $8 AND ",
            $fence,
            " RETURNING replay_of"
        )
    };
}

/// Fenced: only while the lease that sent the attempt still holds it.
const FINISH: &str =
    finish_update!("state = 'in_flight' AND lease_token = $9 AND current_attempt = $4");

/// The negative control's finish: the same update without the fence (the binds kept).
#[cfg(feature = "fault-injection")]
const FINISH_UNFENCED: &str = finish_update!("$9::bigint IS NOT NULL AND $4 IS NOT NULL");

/// Succeeded or dead: the fenced update and the attempt's outcome in one statement (it
/// commits on its own; nothing else needs to be read first).
const FINISH_FINAL: &str = "WITH d AS (UPDATE deliveries SET state = $1, dead_at = COALESCE($2, dead_at), \
     exhausted_hop = CASE WHEN $1 = 'dead' THEN (SELECT hop FROM attempts WHERE id = $3) ELSE exhausted_hop END, \
     lease_owner = NULL, lease_until = NULL, current_attempt = NULL, last_status = $4, error_class = $5, \
     updated_at = $6 WHERE id = $7 AND state = 'in_flight' AND lease_token = $8 AND current_attempt = $3 \
     RETURNING id) \
     UPDATE attempts SET outcome = $9, duration_ms = $10, status_code = $4, error_class = $5, error = $11, \
     finished_by = $12 WHERE id = $3 AND EXISTS (SELECT 1 FROM d) RETURNING id";

/// [`FINISH_FINAL`]: `false` when fenced out.
async fn finish_final(
    conn: &mut PgConnection,
    f: &Finish<'_>,
    dead: bool,
    now: i64,
) -> Result<bool, StoreError> {
    let (fence, result) = (f.fence, f.result);
    let (state, dead_at) = if dead {
        ("dead", Some(now))
    } else {
        ("succeeded", None)
    };
    let done: Option<String> = sqlx::query_scalar(FINISH_FINAL)
        .bind(state)
        .bind(dead_at)
        .bind(fence.attempt_id)
        .bind(result.status_code.map(i64::from))
        .bind(result.error_class.map(ErrorClass::as_str))
        .bind(now)
        .bind(fence.delivery_id)
        .bind(fence.lease_token)
        .bind(if result.succeeded() {
            "succeeded"
        } else {
            "failed"
        })
        .bind(i64::try_from(result.duration_ms).unwrap_or(i64::MAX))
        .bind(result.error.as_deref())
        .bind(f.finished_by.as_str())
        .fetch_optional(conn)
        .await?;
    Ok(done.is_some())
}

/// Records one outcome on `conn` (a transaction when the delivery is retried: the
/// cancelled-replay check and the attempt row go with the delivery's update).
async fn finish_one(conn: &mut PgConnection, f: &Finish<'_>, now: i64) -> Result<bool, StoreError> {
    match f.next {
        Transition::RetryAt(_) => finish(FINISH, conn, f, now).await,
        Transition::Succeeded => finish_final(conn, f, false, now).await,
        Transition::Dead => finish_final(conn, f, true, now).await,
    }
}

/// Records a batch in one transaction, each item its own fenced statement: one commit (one
/// WAL flush) for the batch instead of one per outcome.
pub(super) async fn finish_together(
    store: &PostgresStore,
    items: &[Finish<'_>],
    now: i64,
) -> Result<Vec<bool>, StoreError> {
    let mut tx = store.write().await?;
    let mut recorded = Vec::with_capacity(items.len());
    for f in items {
        recorded.push(finish_one(&mut tx, f, now).await?);
    }
    tx.commit().await?;
    Ok(recorded)
}

/// The fenced update of the delivery with `sql` ([`FINISH`] or the negative control's), then
/// its attempt row; a retry of a cancelled session's re-delivery is withdrawn instead and
/// gives its original back.
async fn finish(
    sql: &str,
    conn: &mut PgConnection,
    f: &Finish<'_>,
    now: i64,
) -> Result<bool, StoreError> {
    let (fence, result) = (f.fence, f.result);
    let (mut state, mut next_at, dead_at, class) = match f.next {
        Transition::Succeeded => ("succeeded", None, None, None),
        Transition::RetryAt(at) => ("pending", Some(at), None, result.error_class),
        Transition::Dead => ("dead", None, Some(now), result.error_class),
    };
    if state == "pending" && replay_cancelled(conn, fence.delivery_id).await? {
        (state, next_at) = ("cancelled", None);
    }
    let Some(replay_of) = sqlx::query_scalar::<_, Option<String>>(sql)
        .bind(state)
        .bind(next_at)
        .bind(dead_at)
        .bind(fence.attempt_id)
        .bind(result.status_code.map(i64::from))
        .bind(class.map(ErrorClass::as_str))
        .bind(now)
        .bind(fence.delivery_id)
        .bind(fence.lease_token)
        .fetch_optional(&mut *conn)
        .await?
    else {
        return Ok(false);
    };
    sqlx::query(
        "UPDATE attempts SET outcome = $1, duration_ms = $2, status_code = $3, error_class = $4, error = $5, \
         finished_by = $6 WHERE id = $7",
    )
    .bind(if result.succeeded() { "succeeded" } else { "failed" })
    .bind(i64::try_from(result.duration_ms).unwrap_or(i64::MAX))
    .bind(result.status_code.map(i64::from))
    .bind(result.error_class.map(ErrorClass::as_str))
    .bind(result.error.as_deref())
    .bind(f.finished_by.as_str())
    .bind(fence.attempt_id)
    .execute(&mut *conn)
    .await?;
    if state == "cancelled"
        && let Some(original) = replay_of
    {
        super::sql::replays::restore_original(conn, &original, now).await?;
    }
    if state == "pending" {
        notify_work(conn).await?;
    }
    Ok(true)
}

/// One outcome: succeeded or dead in one statement on a plain connection (it commits on its
/// own), a retry in a transaction with its cancelled-replay check and attempt row.
pub(super) async fn finish_attempt(
    store: &PostgresStore,
    f: &Finish<'_>,
    now: i64,
) -> Result<bool, StoreError> {
    if !matches!(f.next, Transition::RetryAt(_)) {
        return finish_one(&mut *store.read().await?, f, now).await;
    }
    let mut tx = store.write().await?;
    let recorded = finish_one(&mut tx, f, now).await?;
    tx.commit().await?;
    Ok(recorded)
}

/// The negative control's fenced update: the same without the fence.
#[cfg(feature = "fault-injection")]
pub(super) async fn finish_unfenced(
    conn: &mut PgConnection,
    f: &Finish<'_>,
    now: i64,
) -> Result<bool, StoreError> {
    finish(FINISH_UNFENCED, conn, f, now).await
}
