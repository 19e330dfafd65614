//! SQL of an attempt's outcome: the fenced update of its delivery and its attempt row, one
//! at a time or a batch in one transaction (the worker's group commit).

use sqlx::{QueryBuilder, Sqlite, SqliteConnection};
use switchyard_protocol::ErrorClass;

use super::SqliteStore;
use crate::delivery::http::AttemptResult;
use crate::store::{Fence, Finish, StoreError, Transition};

/// The update of an attempt's delivery, given the condition that fences it: `state` after
/// the transition, with a retry of a cancelled session's re-delivery withdrawn.
macro_rules! finish_update {
    ($fence:literal) => {
        concat!(
            "UPDATE deliveries SET \
             state = CASE WHEN ? = 'pending' AND replay_session IS NOT NULL AND EXISTS (SELECT 1 FROM replay_sessions s \
               WHERE s.tenant = deliveries.tenant AND s.id = deliveries.replay_session AND s.cancelled_at IS NOT NULL) \
               THEN 'cancelled' ELSE ? END, \
             next_attempt_at = ?, dead_at = COALESCE(?, dead_at), \
             exhausted_hop = CASE WHEN ? = 'dead' THEN (SELECT hop FROM attempts WHERE id = ?) ELSE exhausted_hop END, \
             lease_owner = NULL, lease_until = NULL, \
             current_attempt = NULL, last_status = ?, error_class = ?, updated_at = ? \
             WHERE id = ? AND ",
            $fence,
            " RETURNING state, replay_of"
        )
    };
}

/// Fenced: only while the lease that sent the attempt still holds it.
const FINISH: &str =
    finish_update!("state = 'in_flight' AND lease_token = ? AND current_attempt = ?");

/// The negative control's finish: the same update without the fence (the two binds kept).
#[cfg(feature = "fault-injection")]
const FINISH_UNFENCED: &str = finish_update!("? IS NOT NULL AND ? IS NOT NULL");

/// The fenced update of the delivery (`sql`: [`FINISH`] or the negative control's); `true`
/// when it matched. A re-delivery withdrawn by its cancelled session gives its original
/// back.
async fn finish_delivery(
    sql: &str,
    conn: &mut SqliteConnection,
    fence: Fence<'_>,
    result: &AttemptResult,
    next: Transition,
    now: i64,
) -> Result<bool, StoreError> {
    let (state, next_at, dead_at, class) = match next {
        Transition::Succeeded => ("succeeded", None, None, None),
        Transition::RetryAt(at) => ("pending", Some(at), None, result.error_class),
        Transition::Dead => ("dead", None, Some(now), result.error_class),
    };
    let Some((state, replay_of)) = sqlx::query_as::<_, (String, Option<String>)>(sql)
        .bind(state)
        .bind(state)
        .bind(next_at)
        .bind(dead_at)
        .bind(state)
        .bind(fence.attempt_id)
        .bind(result.status_code.map(i64::from))
        .bind(class.map(ErrorClass::as_str))
        .bind(now)
        .bind(fence.delivery_id)
        .bind(fence.lease_token)
        .bind(fence.attempt_id)
        .fetch_optional(&mut *conn)
        .await?
    else {
        return Ok(false);
    };
    if state == "cancelled"
        && let Some(original) = replay_of
    {
        super::sql::replays::restore_original(conn, &original, now).await?;
    }
    Ok(true)
}

/// The outcome columns of the attempt rows of `items`, in one statement (the rollups'
/// trigger runs for each row).
async fn finish_attempt_rows(
    conn: &mut SqliteConnection,
    items: &[&Finish<'_>],
) -> Result<(), StoreError> {
    if items.is_empty() {
        return Ok(());
    }
    let mut q = QueryBuilder::<Sqlite>::new(
        "WITH v (id, outcome, duration_ms, status_code, error_class, error, finished_by) AS (",
    );
    q.push_values(items, |mut row, f| {
        let r = f.result;
        row.push_bind(f.fence.attempt_id)
            .push_bind(if r.succeeded() { "succeeded" } else { "failed" })
            .push_bind(i64::try_from(r.duration_ms).unwrap_or(i64::MAX))
            .push_bind(r.status_code.map(i64::from))
            .push_bind(r.error_class.map(ErrorClass::as_str))
            .push_bind(r.error.as_deref())
            .push_bind(f.finished_by.as_str());
    });
    q.push(
        ") UPDATE attempts SET outcome = v.outcome, duration_ms = v.duration_ms, \
         status_code = v.status_code, error_class = v.error_class, error = v.error, \
         finished_by = v.finished_by FROM v WHERE attempts.id = v.id",
    );
    q.build().execute(conn).await?;
    Ok(())
}

async fn finish(
    sql: &str,
    conn: &mut SqliteConnection,
    item: &Finish<'_>,
    now: i64,
) -> Result<bool, StoreError> {
    let recorded = finish_delivery(sql, conn, item.fence, item.result, item.next, now).await?;
    if recorded {
        finish_attempt_rows(conn, &[item]).await?;
    }
    Ok(recorded)
}

/// Every item's fenced update in one write transaction, the attempt rows of the ones that
/// matched in one statement, and one commit for the lot.
pub(super) async fn finish_together(
    store: &SqliteStore,
    items: &[Finish<'_>],
    now: i64,
) -> Result<Vec<bool>, StoreError> {
    let mut tx = store.write().await?;
    let mut recorded = Vec::with_capacity(items.len());
    for f in items {
        recorded.push(finish_delivery(FINISH, &mut tx, f.fence, f.result, f.next, now).await?);
    }
    let matched: Vec<&Finish<'_>> = items
        .iter()
        .zip(&recorded)
        .filter_map(|(f, &r)| r.then_some(f))
        .collect();
    finish_attempt_rows(&mut tx, &matched).await?;
    tx.commit().await?;
    Ok(recorded)
}

/// One outcome in its own write transaction.
pub(super) async fn finish_attempt(
    store: &SqliteStore,
    f: &Finish<'_>,
    now: i64,
) -> Result<bool, StoreError> {
    let mut tx = store.write().await?;
    let recorded = finish(FINISH, &mut tx, f, now).await?;
    tx.commit().await?;
    Ok(recorded)
}

/// The negative control's fenced update: the same without the fence.
#[cfg(feature = "fault-injection")]
pub(super) async fn finish_unfenced(
    conn: &mut SqliteConnection,
    f: &Finish<'_>,
    now: i64,
) -> Result<bool, StoreError> {
    finish(FINISH_UNFENCED, conn, f, now).await
}
