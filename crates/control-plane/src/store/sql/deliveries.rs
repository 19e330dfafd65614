//! SQL of deliveries and attempts: the guarded claim and the reads. Each backend's own
//! `finish.rs` records outcomes, and its dialect words the claim ([`dialect::CLAIM`]) and
//! how a batch of due work is locked ([`dialect::LOCK_DUE`]).

use std::collections::HashMap;

use async_trait::async_trait;

use crate::sealing::Sealer;
use sqlx::QueryBuilder;
use switchyard_protocol::{Delivery, FlowMode, Hop};

use super::{Backend, Conn, Db, dialect, finish};
use crate::delivery::http::AttemptResult;
use crate::store::deliveries::together_or_each;
use crate::store::rows::{
    ATTEMPT_COLUMNS, AttemptRow, CandidateRow, ClaimedNumbers, DELIVERY_COLUMNS, DeliveryRow,
    ExpiredRow, mode_str,
};
use crate::store::{
    Claimed, DeliveryStore, DueScope, ExpiredLease, Fence, Finish, FinishedBy, StoreError,
    Transition, new_id,
};

/// A delivery row to insert (new events and replays).
pub(in crate::store) struct NewDeliveryRow<'a> {
    pub id: &'a str,
    pub tenant: &'a str,
    pub event_id: &'a str,
    pub event_type: &'a str,
    pub endpoint: &'a str,
    pub flow: &'a str,
    pub target: &'a str,
    pub mode: FlowMode,
    pub edge: Option<&'a str>,
    pub max_attempts: u32,
    pub next_attempt_at: i64,
    pub replay_session: Option<&'a str>,
    pub replay_of: Option<&'a str>,
}

pub(in crate::store) async fn insert(
    conn: &mut Conn,
    d: &NewDeliveryRow<'_>,
    now: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO deliveries (id, tenant, event_id, event_type, endpoint, flow, target, mode, edge, state, \
         attempts_made, max_attempts, next_attempt_at, created_at, updated_at, replay_session, replay_of) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending', 0, $10, $11, $12, $12, $13, $14)",
    )
    .bind(d.id)
    .bind(d.tenant)
    .bind(d.event_id)
    .bind(d.event_type)
    .bind(d.endpoint)
    .bind(d.flow)
    .bind(d.target)
    .bind(mode_str(d.mode))
    .bind(d.edge)
    .bind(i64::from(d.max_attempts))
    .bind(d.next_attempt_at)
    .bind(now)
    .bind(d.replay_session)
    .bind(d.replay_of)
    .execute(conn)
    .await?;
    Ok(())
}

const CANDIDATE: &str = "SELECT d.id, d.tenant, d.target, d.edge, d.event_id, d.event_type, d.max_attempts, \
     e.endpoint, e.created_at AS event_created_at, e.payload, r.spec AS target_spec \
     FROM deliveries d JOIN events e ON e.id = d.event_id \
     LEFT JOIN resources r ON r.tenant = d.tenant AND r.kind = 'target' AND r.name = d.target";

async fn due_candidates(
    conn: &mut Conn,
    scope: DueScope<'_>,
    now: i64,
    limit: u32,
) -> Result<Vec<CandidateRow>, StoreError> {
    let mut q = QueryBuilder::<Db>::new(CANDIDATE);
    q.push(" WHERE d.state = 'pending' AND d.next_attempt_at <= ");
    match scope {
        DueScope::Direct => {
            q.push_bind(now).push(" AND d.mode <> 'async_relay'");
        }
        DueScope::Relay { tenant, edge } => {
            q.push_bind(now)
                .push(" AND d.mode = 'async_relay' AND d.tenant = ")
                .push_bind(tenant)
                .push(" AND d.edge = ")
                .push_bind(edge);
        }
        DueScope::UnpickedRelays { due_before } => {
            q.push_bind(due_before.min(now))
                .push(" AND d.mode = 'async_relay'");
        }
    }
    q.push(" ORDER BY d.next_attempt_at LIMIT ")
        .push_bind(i64::from(limit))
        .push(dialect::LOCK_DUE);
    Ok(q.build_query_as().fetch_all(conn).await?)
}

async fn candidate(conn: &mut Conn, id: &str) -> Result<Option<CandidateRow>, StoreError> {
    Ok(sqlx::query_as(&format!("{CANDIDATE} WHERE d.id = $1"))
        .bind(id)
        .fetch_optional(conn)
        .await?)
}

/// Claims each candidate with `claim_sql` ([`dialect::CLAIM`], or the negative control's)
/// for an attempt at `hop`; skips the ones someone else took first.
// The claim's inputs are independent values of one statement; a struct would only rename them.
#[allow(clippy::too_many_arguments)]
async fn claim_candidates(
    conn: &mut Conn,
    sealer: &Sealer,
    candidates: Vec<CandidateRow>,
    claim_sql: &str,
    hop: Hop,
    now: i64,
    owner: &str,
    lease_margin_ms: i64,
) -> Result<Vec<Claimed>, StoreError> {
    let mut secrets: HashMap<(String, String), Vec<crate::store::SigningKey>> = HashMap::new();
    let mut claimed: Vec<Claimed> = Vec::with_capacity(candidates.len());
    for c in candidates {
        let target = c.target_spec()?;
        let lease_until = CandidateRow::lease_until(target.as_ref(), now, lease_margin_ms);
        let attempt_id = new_id("att");
        let Some((made, lease_token, hop_made)) = sqlx::query_as::<_, (i64, i64, i64)>(claim_sql)
            .bind(hop.as_str())
            .bind(owner)
            .bind(lease_until)
            .bind(&attempt_id)
            .bind(now)
            .bind(&c.id)
            .fetch_optional(&mut *conn)
            .await?
        else {
            continue;
        };
        let key = (c.tenant.clone(), c.target.clone());
        if !secrets.contains_key(&key) {
            let values = super::secrets::active(conn, sealer, &c.tenant, &c.target, now).await?;
            secrets.insert(key.clone(), values);
        }
        let numbers = ClaimedNumbers {
            attempt_id,
            hop,
            made,
            hop_made,
            lease_token,
            lease_until,
        };
        claimed.push(c.into_claimed(target, numbers, secrets[&key].clone())?);
    }
    if !dialect::CLAIM_RECORDS_ATTEMPT {
        insert_attempts(conn, &claimed, now, owner).await?;
    }
    Ok(claimed)
}

/// The in-flight attempt rows of `claimed`, in one statement (where the claim itself did not
/// record them).
async fn insert_attempts(
    conn: &mut Conn,
    claimed: &[Claimed],
    now: i64,
    owner: &str,
) -> Result<(), StoreError> {
    if claimed.is_empty() {
        return Ok(());
    }
    let mut q = QueryBuilder::<Db>::new(
        "INSERT INTO attempts (id, delivery_id, number, hop, hop_number, started_at, outcome, performed_by) ",
    );
    q.push_values(claimed, |mut row, c| {
        row.push_bind(&c.attempt_id)
            .push_bind(&c.delivery_id)
            .push_bind(i64::from(c.number))
            .push_bind(c.hop.as_str())
            .push_bind(i64::from(c.hop_number))
            .push_bind(now)
            .push_bind("in_flight")
            .push_bind(owner);
    });
    q.build().execute(conn).await?;
    Ok(())
}

/// Claims one delivery by id for the control plane's own send (a sync flow's first attempt,
/// inside the event's commit).
pub(in crate::store) async fn claim_one(
    conn: &mut Conn,
    sealer: &Sealer,
    id: &str,
    now: i64,
    owner: &str,
    lease_margin_ms: i64,
) -> Result<Option<Claimed>, StoreError> {
    let candidates = candidate(conn, id).await?.into_iter().collect();
    let mut claimed = claim_candidates(
        conn,
        sealer,
        candidates,
        dialect::CLAIM,
        Hop::ControlPlaneWebhook,
        now,
        owner,
        lease_margin_ms,
    )
    .await?;
    Ok(claimed.pop())
}

/// Whether the delivery is a re-delivery of a cancelled replay session. The session row is
/// share-locked until commit ([`dialect::FOR_SHARE`]; on SQLite the write lock is held): a cancel running now either finished first (and is seen) or
/// waits for this transition (and then withdraws the delivery if it went back to pending).
pub(in crate::store) async fn replay_cancelled(
    conn: &mut Conn,
    delivery_id: &str,
) -> Result<bool, StoreError> {
    let session: Option<(String, Option<String>)> =
        sqlx::query_as("SELECT tenant, replay_session FROM deliveries WHERE id = $1")
            .bind(delivery_id)
            .fetch_optional(&mut *conn)
            .await?;
    let Some((tenant, Some(session))) = session else {
        return Ok(false);
    };
    let cancelled: Option<Option<i64>> = sqlx::query_scalar(&format!(
        "SELECT cancelled_at FROM replay_sessions WHERE tenant = $1 AND id = $2{}",
        dialect::FOR_SHARE
    ))
    .bind(tenant)
    .bind(session)
    .fetch_optional(conn)
    .await?;
    Ok(matches!(cancelled, Some(Some(_))))
}

pub(in crate::store) async fn attach_attempts(
    conn: &mut Conn,
    deliveries: &mut [Delivery],
) -> Result<(), StoreError> {
    for d in deliveries.iter_mut() {
        let rows: Vec<AttemptRow> = sqlx::query_as(&format!(
            "SELECT {ATTEMPT_COLUMNS} FROM attempts WHERE delivery_id = $1 ORDER BY number"
        ))
        .bind(&d.id)
        .fetch_all(&mut *conn)
        .await?;
        d.attempts = rows
            .into_iter()
            .map(AttemptRow::into_wire)
            .collect::<Result<_, _>>()?;
    }
    Ok(())
}

/// The deliveries of an event, oldest first, with their attempts.
pub(in crate::store) async fn of_event(
    conn: &mut Conn,
    event_id: &str,
) -> Result<Vec<Delivery>, StoreError> {
    let rows: Vec<DeliveryRow> = sqlx::query_as(&format!(
        "SELECT {DELIVERY_COLUMNS} FROM deliveries WHERE event_id = $1 ORDER BY created_at, id"
    ))
    .bind(event_id)
    .fetch_all(&mut *conn)
    .await?;
    let mut deliveries = rows
        .into_iter()
        .map(DeliveryRow::into_wire)
        .collect::<Result<Vec<_>, _>>()?;
    attach_attempts(conn, &mut deliveries).await?;
    Ok(deliveries)
}

#[async_trait]
impl DeliveryStore for Backend {
    async fn claim_due(
        &self,
        scope: DueScope<'_>,
        now: i64,
        limit: u32,
        owner: &str,
        lease_margin_ms: i64,
    ) -> Result<Vec<Claimed>, StoreError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let mut tx = self.write().await?;
        let candidates = due_candidates(&mut tx, scope, now, limit).await?;
        let claimed = claim_candidates(
            &mut tx,
            &self.sealer,
            candidates,
            dialect::CLAIM,
            scope.hop(),
            now,
            owner,
            lease_margin_ms,
        )
        .await?;
        tx.commit().await?;
        Ok(claimed)
    }

    async fn finish_attempt(
        &self,
        fence: Fence<'_>,
        result: &AttemptResult,
        finished_by: FinishedBy,
        next: Transition,
        now: i64,
    ) -> Result<bool, StoreError> {
        let f = Finish {
            fence,
            result,
            finished_by,
            next,
        };
        finish::finish_attempt(self, &f, now).await
    }

    async fn finish_attempts(
        &self,
        items: &[Finish<'_>],
        now: i64,
    ) -> Vec<Result<bool, StoreError>> {
        let together = finish::finish_together(self, items, now).await;
        together_or_each(self, together, items, now).await
    }

    async fn expired_leases(&self, now: i64, limit: u32) -> Result<Vec<ExpiredLease>, StoreError> {
        let rows: Vec<ExpiredRow> = sqlx::query_as(
            "SELECT d.id, d.lease_token, d.current_attempt, d.lease_owner, a.hop, a.hop_number, d.max_attempts \
             FROM deliveries d JOIN attempts a ON a.id = d.current_attempt \
             WHERE d.state = 'in_flight' AND d.lease_until <= $1 ORDER BY d.lease_until LIMIT $2",
        )
        .bind(now)
        .bind(i64::from(limit))
        .fetch_all(self.reads())
        .await?;
        rows.into_iter().map(ExpiredRow::into_lease).collect()
    }

    async fn next_wakeup(&self, pickup_ms: i64) -> Result<Option<i64>, StoreError> {
        let due: Option<i64> = sqlx::query_scalar(
            "SELECT MIN(CASE WHEN mode = 'async_relay' THEN next_attempt_at + $1 ELSE next_attempt_at END) \
             FROM deliveries WHERE state = 'pending'",
        )
        .bind(pickup_ms)
        .fetch_one(self.reads())
        .await?;
        let lease: Option<i64> =
            sqlx::query_scalar("SELECT MIN(lease_until) FROM deliveries WHERE state = 'in_flight'")
                .fetch_one(self.reads())
                .await?;
        Ok(match (due, lease) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        })
    }

    async fn delivery(&self, tenant: &str, id: &str) -> Result<Option<Delivery>, StoreError> {
        let mut conn = self.read().await?;
        let row: Option<DeliveryRow> = sqlx::query_as(&format!(
            "SELECT {DELIVERY_COLUMNS} FROM deliveries WHERE tenant = $1 AND id = $2"
        ))
        .bind(tenant)
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?;
        let Some(row) = row else { return Ok(None) };
        let mut d = [row.into_wire()?];
        attach_attempts(&mut conn, &mut d).await?;
        let [d] = d;
        Ok(Some(d))
    }

    async fn pending_count(&self, tenant: &str, endpoint: &str) -> Result<u64, StoreError> {
        let n: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM deliveries WHERE tenant = $1 AND endpoint = $2 \
             AND state IN ('pending', 'in_flight')",
        )
        .bind(tenant)
        .bind(endpoint)
        .fetch_one(self.reads())
        .await?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    #[cfg(feature = "fault-injection")]
    async fn finish_attempt_unfenced(
        &self,
        fence: Fence<'_>,
        result: &AttemptResult,
        finished_by: FinishedBy,
        next: Transition,
        now: i64,
    ) -> Result<bool, StoreError> {
        let f = Finish {
            fence,
            result,
            finished_by,
            next,
        };
        let mut tx = self.write().await?;
        let recorded = finish::finish_unfenced(&mut tx, &f, now).await?;
        tx.commit().await?;
        Ok(recorded)
    }

    #[cfg(feature = "fault-injection")]
    async fn due_ids(&self, now: i64, limit: u32) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT id FROM deliveries WHERE state = 'pending' AND next_attempt_at <= $1 \
             AND mode <> 'async_relay' ORDER BY next_attempt_at LIMIT $2",
        )
        .bind(now)
        .bind(i64::from(limit))
        .fetch_all(self.reads())
        .await?)
    }

    #[cfg(feature = "fault-injection")]
    async fn claim_unguarded(
        &self,
        ids: &[String],
        now: i64,
        owner: &str,
        lease_margin_ms: i64,
    ) -> Result<Vec<Claimed>, StoreError> {
        let mut tx = self.write().await?;
        let mut candidates = Vec::with_capacity(ids.len());
        for id in ids {
            candidates.extend(candidate(&mut tx, id).await?);
        }
        let claimed = claim_candidates(
            &mut tx,
            &self.sealer,
            candidates,
            dialect::CLAIM_UNGUARDED,
            Hop::ControlPlaneWebhook,
            now,
            owner,
            lease_margin_ms,
        )
        .await?;
        tx.commit().await?;
        Ok(claimed)
    }
}
