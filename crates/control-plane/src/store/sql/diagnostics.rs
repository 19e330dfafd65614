//! SQL of the diagnostics (`crate::store::diagnostics`): bounded reads through the indexes
//! of `migrations/sqlite/0006_diagnostics.sql` and `migrations/postgres/0003_diagnostics.sql`,
//! the edge contact, the requeue and the DLQ recount.

use async_trait::async_trait;
use switchyard_protocol::{DeliveryState, DlqRecount, ErrorClass};

use super::{Backend, BackendTx, Conn, dialect};
use crate::delivery::http::AttemptResult;
use crate::store::rows::hop_from;
use crate::store::{
    Backlog, Bounds, DiagnosticsStore, DriftRow, ExpiringCertRow, FailingRow, OverlapRow,
    RecoveryTx, Requeue, StoreError, StuckRow,
};

/// The counter groups of a tenant whose figure is not the number of their dead rows: both
/// sides in one statement, so one snapshot.
const DRIFT: &str = "SELECT target, error_class, hour, CAST(SUM(counted) AS BIGINT) AS counted, \
     CAST(SUM(rows) AS BIGINT) AS rows FROM ( \
     SELECT target, error_class, hour, count AS counted, CAST(0 AS BIGINT) AS rows FROM dlq_counts WHERE tenant = $1 \
     UNION ALL \
     SELECT target, COALESCE(error_class, ''), dead_at / 3600000, CAST(0 AS BIGINT), COUNT(*) FROM deliveries \
     WHERE tenant = $1 AND state = 'dead' GROUP BY target, COALESCE(error_class, ''), dead_at / 3600000 \
     ) AS g GROUP BY target, error_class, hour HAVING SUM(counted) <> SUM(rows) \
     ORDER BY target, error_class, hour";

/// The tenant's targets whose counters do not sum to their dead rows: one pass over the
/// DLQ's by-target index, far cheaper than comparing every group; the groups of a drifted
/// target are compared after ([`DRIFT_OF_TARGET`]).
const DRIFTED_TARGETS: &str = "SELECT target FROM ( \
     SELECT target, SUM(count) AS counted, CAST(0 AS NUMERIC) AS rows FROM dlq_counts WHERE tenant = $1 GROUP BY target \
     UNION ALL \
     SELECT target, CAST(0 AS NUMERIC), CAST(COUNT(*) AS NUMERIC) FROM deliveries WHERE tenant = $1 AND state = 'dead' GROUP BY target \
     ) AS g GROUP BY target HAVING SUM(counted) <> SUM(rows) ORDER BY target LIMIT $2";

/// [`DRIFT`] for one target ($2).
const DRIFT_OF_TARGET: &str = "SELECT target, error_class, hour, CAST(SUM(counted) AS BIGINT) AS counted, \
     CAST(SUM(rows) AS BIGINT) AS rows FROM ( \
     SELECT target, error_class, hour, count AS counted, CAST(0 AS BIGINT) AS rows FROM dlq_counts \
     WHERE tenant = $1 AND target = $2 \
     UNION ALL \
     SELECT target, COALESCE(error_class, ''), dead_at / 3600000, CAST(0 AS BIGINT), COUNT(*) FROM deliveries \
     WHERE tenant = $1 AND state = 'dead' AND target = $2 GROUP BY target, COALESCE(error_class, ''), dead_at / 3600000 \
     ) AS g GROUP BY target, error_class, hour HAVING SUM(counted) <> SUM(rows) \
     ORDER BY target, error_class, hour";

/// A value bound into one of the shared statement shapes below.
#[derive(Clone, Copy)]
enum Arg<'a> {
    Text(&'a str),
    Int(i64),
}

/// Counts what `from_where` (placeholders `$1`…`$n` for `binds`) selects, stopping at `cap`.
async fn capped_count(
    conn: &mut Conn,
    from_where: &str,
    binds: &[Arg<'_>],
    cap: u32,
) -> Result<u64, StoreError> {
    let limit = binds.len() + 1;
    let sql = format!("SELECT COUNT(*) FROM (SELECT 1 {from_where} LIMIT ${limit}) AS c");
    let mut q = sqlx::query_scalar::<_, i64>(&sql);
    for b in binds {
        q = match *b {
            Arg::Text(t) => q.bind(t),
            Arg::Int(n) => q.bind(n),
        };
    }
    let n = q.bind(i64::from(cap)).fetch_one(conn).await?;
    Ok(u64::try_from(n).unwrap_or(0))
}

/// The oldest `sample` ids and times of what `from_where` selects, ordered by `time_column`.
async fn oldest(
    conn: &mut Conn,
    from_where: &str,
    time_column: &str,
    binds: &[Arg<'_>],
    sample: u32,
) -> Result<Vec<(String, i64)>, StoreError> {
    let limit = binds.len() + 1;
    let sql =
        format!("SELECT id, {time_column} {from_where} ORDER BY {time_column}, id LIMIT ${limit}");
    let mut q = sqlx::query_as::<_, (String, i64)>(&sql);
    for b in binds {
        q = match *b {
            Arg::Text(t) => q.bind(t),
            Arg::Int(n) => q.bind(n),
        };
    }
    Ok(q.bind(i64::from(sample)).fetch_all(conn).await?)
}

/// A backlog of what `from_where` selects, `None` when empty.
async fn backlog(
    conn: &mut Conn,
    subject: &str,
    from_where: &str,
    time_column: &str,
    binds: &[Arg<'_>],
    bounds: Bounds,
) -> Result<Option<Backlog>, StoreError> {
    let sample = oldest(conn, from_where, time_column, binds, bounds.sample).await?;
    let Some(&(_, oldest_at)) = sample.first() else {
        return Ok(None);
    };
    let count = capped_count(conn, from_where, binds, bounds.count_cap).await?;
    Ok(Some(Backlog {
        subject: subject.to_owned(),
        count,
        oldest_at,
        sample: sample.into_iter().map(|(id, _)| id).collect(),
        last_seen_at: None,
    }))
}

/// The distinct values of `column` among what `from_where` (one placeholder, `$1`: the
/// tenant) selects, in order, one index seek each (a skip scan: the cost is the number of
/// values, not of rows).
async fn distinct(
    conn: &mut Conn,
    column: &str,
    from_where: &str,
    tenant: &str,
    limit: u32,
) -> Result<Vec<String>, StoreError> {
    let sql = format!("SELECT {column} {from_where} AND {column} > $2 ORDER BY {column} LIMIT 1");
    let mut out = Vec::new();
    let mut after = String::new();
    while out.len() < limit as usize {
        let next: Option<String> = sqlx::query_scalar(&sql)
            .bind(tenant)
            .bind(&after)
            .fetch_optional(&mut *conn)
            .await?;
        let Some(next) = next else { break };
        after.clone_from(&next);
        out.push(next);
    }
    Ok(out)
}

const RELAYS: &str =
    "FROM deliveries WHERE tenant = $1 AND state = 'pending' AND mode = 'async_relay'";
const REPLAYS: &str =
    "FROM deliveries WHERE tenant = $1 AND state = 'pending' AND replay_session IS NOT NULL";
const OPEN_OF_ENDPOINT: &str =
    "FROM deliveries WHERE tenant = $1 AND endpoint = $2 AND state IN ('pending', 'in_flight')";

#[async_trait]
impl DiagnosticsStore for Backend {
    async fn stuck_deliveries(
        &self,
        tenant: &str,
        expired_before: i64,
        limit: u32,
    ) -> Result<Vec<StuckRow>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT id, target, edge, lease_owner, lease_until, attempts_made FROM deliveries \
             WHERE tenant = $1 AND state = 'in_flight' AND lease_until <= $2 \
             ORDER BY lease_until, id LIMIT $3",
        )
        .bind(tenant)
        .bind(expired_before)
        .bind(i64::from(limit))
        .fetch_all(self.reads())
        .await?)
    }

    async fn waiting_relays(
        &self,
        tenant: &str,
        bounds: Bounds,
    ) -> Result<Vec<Backlog>, StoreError> {
        let mut conn = self.read().await?;
        let mut out = Vec::new();
        for edge in distinct(&mut conn, "edge", RELAYS, tenant, bounds.subjects).await? {
            let from_where = format!("{RELAYS} AND edge = $2");
            let binds = [Arg::Text(tenant), Arg::Text(&edge)];
            let Some(mut b) =
                backlog(&mut conn, &edge, &from_where, "created_at", &binds, bounds).await?
            else {
                continue;
            };
            b.last_seen_at = sqlx::query_scalar(
                "SELECT last_leased_at FROM edge_contacts WHERE tenant = $1 AND edge = $2",
            )
            .bind(tenant)
            .bind(&edge)
            .fetch_optional(&mut *conn)
            .await?;
            out.push(b);
        }
        Ok(out)
    }

    async fn disabled_backlogs(
        &self,
        tenant: &str,
        bounds: Bounds,
    ) -> Result<Vec<Backlog>, StoreError> {
        let mut conn = self.read().await?;
        let disabled: Vec<String> = sqlx::query_scalar(&format!(
            "SELECT name FROM resources WHERE tenant = $1 AND kind = 'endpoint' \
             AND {} AND NOT EXISTS (SELECT 1 FROM retirements r \
             WHERE r.tenant = resources.tenant AND r.kind = 'endpoint' AND r.name = resources.name \
             AND r.state NOT IN ('deleted', 'cancelled')) ORDER BY name LIMIT $2",
            dialect::DISABLED
        ))
        .bind(tenant)
        .bind(i64::from(bounds.subjects))
        .fetch_all(&mut *conn)
        .await?;
        let mut out = Vec::new();
        for endpoint in disabled {
            let binds = [Arg::Text(tenant), Arg::Text(&endpoint)];
            out.extend(
                backlog(
                    &mut conn,
                    &endpoint,
                    OPEN_OF_ENDPOINT,
                    "created_at",
                    &binds,
                    bounds,
                )
                .await?,
            );
        }
        Ok(out)
    }

    async fn overdue_replays(
        &self,
        tenant: &str,
        due_before: i64,
        bounds: Bounds,
    ) -> Result<Vec<Backlog>, StoreError> {
        let mut conn = self.read().await?;
        let mut out = Vec::new();
        for session in distinct(
            &mut conn,
            "replay_session",
            REPLAYS,
            tenant,
            bounds.subjects,
        )
        .await?
        {
            let cancelled: Option<Option<i64>> = sqlx::query_scalar(
                "SELECT cancelled_at FROM replay_sessions WHERE tenant = $1 AND id = $2",
            )
            .bind(tenant)
            .bind(&session)
            .fetch_optional(&mut *conn)
            .await?;
            if !matches!(cancelled, Some(None)) {
                continue;
            }
            let from_where = format!("{REPLAYS} AND replay_session = $2 AND next_attempt_at <= $3");
            let binds = [Arg::Text(tenant), Arg::Text(&session), Arg::Int(due_before)];
            out.extend(
                backlog(
                    &mut conn,
                    &session,
                    &from_where,
                    "next_attempt_at",
                    &binds,
                    bounds,
                )
                .await?,
            );
        }
        Ok(out)
    }

    async fn failing_targets(
        &self,
        tenant: &str,
        min_run: i64,
        bounds: Bounds,
    ) -> Result<Vec<FailingRow>, StoreError> {
        let mut conn = self.read().await?;
        let mut rows: Vec<FailingRow> = sqlx::query_as(
            "SELECT h.name, h.consecutive_failures, h.failing_since, h.last_failure_at, \
             h.last_error_class, h.last_error FROM delivery_health h \
             JOIN resources r ON r.tenant = h.tenant AND r.kind = 'target' AND r.name = h.name \
             WHERE h.tenant = $1 AND h.dimension = 'target' AND h.consecutive_failures >= $2 \
             ORDER BY h.consecutive_failures DESC, h.name LIMIT $3",
        )
        .bind(tenant)
        .bind(min_run)
        .bind(i64::from(bounds.subjects))
        .fetch_all(&mut *conn)
        .await?;
        for row in &mut rows {
            let binds = [
                Arg::Text(tenant),
                Arg::Text(&row.name),
                Arg::Int(row.failing_since.unwrap_or(0)),
            ];
            let n = capped_count(
                &mut conn,
                "FROM deliveries WHERE tenant = $1 AND state = 'dead' AND target = $2 \
                 AND dead_at >= $3",
                &binds,
                bounds.count_cap,
            )
            .await?;
            row.dead_in_run = i64::try_from(n).unwrap_or(i64::MAX);
            row.replaying = sqlx::query_as(
                "SELECT replay_session AS session_id, COUNT(*) AS open_count FROM ( \
             SELECT replay_session FROM deliveries WHERE tenant = $1 AND target = $2 \
             AND replay_session IS NOT NULL AND state IN ('pending', 'in_flight') LIMIT $3 \
             ) AS o GROUP BY replay_session ORDER BY open_count DESC, session_id LIMIT 5",
            )
            .bind(tenant)
            .bind(&row.name)
            .bind(i64::from(bounds.count_cap))
            .fetch_all(&mut *conn)
            .await?;
        }
        Ok(rows)
    }

    async fn open_overlaps(
        &self,
        tenant: &str,
        now: i64,
        limit: u32,
    ) -> Result<Vec<OverlapRow>, StoreError> {
        let mut conn = self.read().await?;
        Ok(sqlx::query_as(
            "SELECT s.target, MAX(s.expires_at) AS ends_at, COUNT(*) AS expiring \
             FROM signing_secrets s \
             JOIN resources r ON r.tenant = s.tenant AND r.kind = 'target' AND r.name = s.target \
             WHERE s.tenant = $1 AND s.expires_at > $2 \
             GROUP BY s.target ORDER BY ends_at, s.target LIMIT $3",
        )
        .bind(tenant)
        .bind(now)
        .bind(i64::from(limit))
        .fetch_all(&mut *conn)
        .await?)
    }

    async fn expiring_certificates(
        &self,
        tenant: &str,
        before: i64,
        limit: u32,
    ) -> Result<Vec<ExpiringCertRow>, StoreError> {
        let mut conn = self.read().await?;
        Ok(sqlx::query_as(
            "SELECT c.target, c.id, c.subject, c.not_after FROM client_certificates c \
             JOIN resources r ON r.tenant = c.tenant AND r.kind = 'target' AND r.name = c.target \
             WHERE c.tenant = $1 AND c.state = 'active' AND c.not_after < $2 \
             ORDER BY c.not_after, c.target LIMIT $3",
        )
        .bind(tenant)
        .bind(before)
        .bind(i64::from(limit))
        .fetch_all(&mut *conn)
        .await?)
    }

    async fn dlq_drift(&self, tenant: &str, limit: u32) -> Result<Vec<DriftRow>, StoreError> {
        let mut conn = self.read().await?;
        let targets: Vec<String> = sqlx::query_scalar(DRIFTED_TARGETS)
            .bind(tenant)
            .bind(i64::from(limit))
            .fetch_all(&mut *conn)
            .await?;
        let mut out: Vec<DriftRow> = Vec::new();
        for target in targets {
            let rows: Vec<DriftRow> = sqlx::query_as(&format!("{DRIFT_OF_TARGET} LIMIT $3"))
                .bind(tenant)
                .bind(&target)
                .bind(i64::from(limit))
                .fetch_all(&mut *conn)
                .await?;
            out.extend(rows);
        }
        out.truncate(limit as usize);
        Ok(out)
    }

    async fn edge_seen(&self, tenant: &str, edge: &str, now: i64) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO edge_contacts (tenant, edge, last_leased_at) VALUES ($1, $2, $3) \
             ON CONFLICT (tenant, edge) DO UPDATE SET last_leased_at = excluded.last_leased_at \
             WHERE edge_contacts.last_leased_at < excluded.last_leased_at - 1000",
        )
        .bind(tenant)
        .bind(edge)
        .bind(now)
        .execute(self.writes())
        .await?;
        Ok(())
    }
}

/// The requeue: only an in-flight delivery on attempt $5 whose lease expired moves, to
/// `state` ($6: pending due now, or cancelled). Under READ COMMITTED the `WHERE` is
/// re-checked on the newest row version, so a reaper or sender that recorded the attempt
/// first leaves nothing to update here.
const REQUEUE: &str = "UPDATE deliveries SET state = $6, next_attempt_at = $1, lease_owner = NULL, \
     lease_until = NULL, current_attempt = NULL, last_status = NULL, error_class = $2, updated_at = $1 \
     WHERE tenant = $3 AND id = $4 AND state = 'in_flight' AND attempts_made = $5 AND lease_until <= $1 \
     RETURNING replay_of";

/// The negative control's requeue: the same update without the lease-expiry guard.
#[cfg(feature = "fault-injection")]
const REQUEUE_UNGUARDED: &str = "UPDATE deliveries SET state = $6, next_attempt_at = $1, lease_owner = NULL, \
     lease_until = NULL, current_attempt = NULL, last_status = NULL, error_class = $2, updated_at = $1 \
     WHERE tenant = $3 AND id = $4 AND state = 'in_flight' AND attempts_made = $5 RETURNING replay_of";

async fn requeue(
    sql: &str,
    conn: &mut Conn,
    tenant: &str,
    id: &str,
    attempt: u32,
    result: &AttemptResult,
    now: i64,
) -> Result<Requeue, StoreError> {
    let exists: Option<i64> = sqlx::query_scalar(
        "SELECT CAST(1 AS BIGINT) FROM deliveries WHERE tenant = $1 AND id = $2",
    )
    .bind(tenant)
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    if exists.is_none() {
        return Ok(Requeue::Absent);
    }
    // Share-locks the session row until commit: a cancel running now finished first (and is
    // seen) or waits, then withdraws the delivery this puts back to pending.
    let state = if super::deliveries::replay_cancelled(conn, id).await? {
        DeliveryState::Cancelled
    } else {
        DeliveryState::Pending
    };
    let moved: Option<Option<String>> = sqlx::query_scalar(sql)
        .bind(now)
        .bind(result.error_class.map(ErrorClass::as_str))
        .bind(tenant)
        .bind(id)
        .bind(i64::from(attempt))
        .bind(state.as_str())
        .fetch_optional(&mut *conn)
        .await?;
    let Some(replay_of) = moved else {
        return Ok(Requeue::NotStuck);
    };
    let hop: String = sqlx::query_scalar(&format!(
        "UPDATE attempts SET outcome = 'failed', duration_ms = {}(0, $1 - started_at), \
         status_code = NULL, error_class = $2, error = $3, finished_by = 'reaper' \
         WHERE delivery_id = $4 AND number = $5 AND outcome = 'in_flight' RETURNING hop",
        dialect::GREATEST
    ))
    .bind(now)
    .bind(result.error_class.map(ErrorClass::as_str))
    .bind(result.error.as_deref())
    .bind(id)
    .bind(i64::from(attempt))
    .fetch_one(&mut *conn)
    .await?;
    if state == DeliveryState::Cancelled
        && let Some(original) = replay_of
    {
        super::replays::restore_original(conn, &original, now).await?;
    }
    if state == DeliveryState::Pending {
        super::notify_work(conn).await?;
    }
    Ok(Requeue::Requeued {
        hop: hop_from(&hop)?,
        state,
    })
}

#[async_trait]
impl RecoveryTx for BackendTx {
    async fn requeue_stuck(
        &mut self,
        tenant: &str,
        id: &str,
        attempt: u32,
        result: &AttemptResult,
        now: i64,
    ) -> Result<Requeue, StoreError> {
        requeue(REQUEUE, &mut self.tx, tenant, id, attempt, result, now).await
    }

    #[cfg(feature = "fault-injection")]
    async fn requeue_unguarded(
        &mut self,
        tenant: &str,
        id: &str,
        attempt: u32,
        result: &AttemptResult,
        now: i64,
    ) -> Result<Requeue, StoreError> {
        requeue(
            REQUEUE_UNGUARDED,
            &mut self.tx,
            tenant,
            id,
            attempt,
            result,
            now,
        )
        .await
    }

    async fn recount_dlq(&mut self, tenant: &str) -> Result<DlqRecount, StoreError> {
        // No delivery enters or leaves the DLQ between the comparison, the delete and the
        // recount ([`dialect::LOCK_DLQ_COUNTS`]).
        super::run(&mut self.tx, dialect::LOCK_DLQ_COUNTS, &[]).await?;
        let corrected: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM ({DRIFT}) AS d"))
            .bind(tenant)
            .fetch_one(&mut *self.tx)
            .await?;
        sqlx::query("DELETE FROM dlq_counts WHERE tenant = $1")
            .bind(tenant)
            .execute(&mut *self.tx)
            .await?;
        sqlx::query(
            "INSERT INTO dlq_counts (tenant, target, error_class, hour, count) \
             SELECT tenant, target, COALESCE(error_class, ''), dead_at / 3600000, COUNT(*) FROM deliveries \
             WHERE tenant = $1 AND state = 'dead' GROUP BY tenant, target, COALESCE(error_class, ''), dead_at / 3600000",
        )
        .bind(tenant)
        .execute(&mut *self.tx)
        .await?;
        let dead: i64 = sqlx::query_scalar(
            "SELECT CAST(COALESCE(SUM(count), 0) AS BIGINT) FROM dlq_counts WHERE tenant = $1",
        )
        .bind(tenant)
        .fetch_one(&mut *self.tx)
        .await?;
        Ok(DlqRecount {
            dead: u64::try_from(dead).unwrap_or(0),
            corrected: u64::try_from(corrected).unwrap_or(0),
        })
    }
}
