//! SQL of retirement sessions. On PostgreSQL (READ COMMITTED) the transition's guard is what
//! makes one of several replicas win it.

use async_trait::async_trait;
use switchyard_protocol::{ResourceKind, RetirementState};

use super::{Backend, BackendTx, Conn, dialect};
use crate::store::retirement_rows::{
    HistoryRecord, RETIREMENT_COLUMNS, RetirementRecord, TombstoneRecord, dlq_str,
    retirement_state_str, to_json,
};
use crate::store::retirements::delivery_column;
use crate::store::{
    Inserted, NewRetirement, PendingGroup, ResourceRow, RetirementChange, RetirementFacts,
    RetirementRow, RetirementStore, RetirementTx, StoreError, Tombstone,
};

/// How many referencing flows and open replays the facts name at most.
const NAMED: i64 = 100;

async fn with_history(
    conn: &mut Conn,
    tenant: &str,
    record: RetirementRecord,
    id: &str,
) -> Result<RetirementRow, StoreError> {
    let history: Vec<HistoryRecord> = sqlx::query_as(&format!(
        "SELECT state, at FROM retirement_history WHERE tenant = $1 AND retirement_id = $2 \
         ORDER BY at, {}",
        dialect::ENTRY_ORDER
    ))
    .bind(tenant)
    .bind(id)
    .fetch_all(&mut *conn)
    .await?;
    record.into_row(history)
}

async fn load(
    conn: &mut Conn,
    tenant: &str,
    id: &str,
) -> Result<Option<RetirementRow>, StoreError> {
    let record: Option<RetirementRecord> = sqlx::query_as(&format!(
        "SELECT {RETIREMENT_COLUMNS} FROM retirements WHERE tenant = $1 AND id = $2"
    ))
    .bind(tenant)
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    match record {
        Some(record) => Ok(Some(with_history(conn, tenant, record, id).await?)),
        None => Ok(None),
    }
}

async fn facts(
    conn: &mut Conn,
    tenant: &str,
    kind: ResourceKind,
    name: &str,
) -> Result<RetirementFacts, StoreError> {
    let exists: Option<i64> = sqlx::query_scalar(
        "SELECT CAST(1 AS BIGINT) FROM resources WHERE tenant = $1 AND kind = $2 AND name = $3",
    )
    .bind(tenant)
    .bind(kind.as_str())
    .bind(name)
    .fetch_optional(&mut *conn)
    .await?;
    let flows = match kind {
        ResourceKind::Flow => Vec::new(),
        _ => {
            let column = if kind == ResourceKind::Endpoint {
                "ref_endpoint"
            } else {
                "ref_target"
            };
            sqlx::query_scalar(&format!(
                "SELECT name FROM resources WHERE tenant = $1 AND kind = 'flow' AND {column} = $2 ORDER BY name LIMIT $3"
            ))
            .bind(tenant)
            .bind(name)
            .bind(NAMED)
            .fetch_all(&mut *conn)
            .await?
        }
    };
    let column = delivery_column(kind);
    let groups: Vec<(i64, i64, i64, i64)> = sqlx::query_as(&format!(
        "SELECT attempts_made, max_attempts, CAST(MAX(COALESCE(next_attempt_at, lease_until, 0)) AS BIGINT), COUNT(*) \
         FROM deliveries WHERE tenant = $1 AND {column} = $2 AND state IN ('pending', 'in_flight') \
         GROUP BY attempts_made, max_attempts"
    ))
    .bind(tenant)
    .bind(name)
    .fetch_all(&mut *conn)
    .await?;
    let dlq_depth: i64 = sqlx::query_scalar(&format!(
        "SELECT COUNT(*) FROM deliveries WHERE tenant = $1 AND {column} = $2 AND state = 'dead'"
    ))
    .bind(tenant)
    .bind(name)
    .fetch_one(&mut *conn)
    .await?;
    let open_replays: Vec<String> = sqlx::query_scalar(&format!(
        "SELECT DISTINCT replay_session FROM deliveries WHERE tenant = $1 AND {column} = $2 \
         AND state IN ('pending', 'in_flight') AND replay_session IS NOT NULL ORDER BY replay_session LIMIT $3"
    ))
    .bind(tenant)
    .bind(name)
    .bind(NAMED)
    .fetch_all(&mut *conn)
    .await?;
    Ok(RetirementFacts {
        exists: exists.is_some(),
        flows,
        pending: groups
            .into_iter()
            .map(|(made, max, due, n)| PendingGroup {
                attempts_made: u32::try_from(made).unwrap_or(0),
                max_attempts: u32::try_from(max).unwrap_or(0),
                latest_due: due,
                count: u64::try_from(n).unwrap_or(0),
            })
            .collect(),
        dlq_depth: u64::try_from(dlq_depth).unwrap_or(0),
        open_replays,
    })
}

#[async_trait]
impl RetirementStore for Backend {
    async fn retirement(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<RetirementRow>, StoreError> {
        load(&mut *self.read().await?, tenant, id).await
    }

    async fn list_retirements(
        &self,
        tenant: &str,
        state: Option<RetirementState>,
        limit: u32,
    ) -> Result<Vec<RetirementRow>, StoreError> {
        let mut conn = self.read().await?;
        let records: Vec<RetirementRecord> = sqlx::query_as(&format!(
            "SELECT {RETIREMENT_COLUMNS} FROM retirements WHERE tenant = $1 AND (CAST($2 AS TEXT) IS NULL OR state = $3) \
             ORDER BY created_at DESC, id DESC LIMIT $4"
        ))
        .bind(tenant)
        .bind(state.map(retirement_state_str))
        .bind(state.map(retirement_state_str))
        .bind(i64::from(limit))
        .fetch_all(&mut *conn)
        .await?;
        let mut rows = Vec::with_capacity(records.len());
        for record in records {
            let id = record_id(&record);
            rows.push(with_history(&mut conn, tenant, record, &id).await?);
        }
        Ok(rows)
    }

    async fn open_retirements(&self, limit: u32) -> Result<Vec<(String, String)>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT tenant, id FROM retirements WHERE state NOT IN ('deleted', 'cancelled') \
             ORDER BY updated_at LIMIT $1",
        )
        .bind(i64::from(limit))
        .fetch_all(self.reads())
        .await?)
    }

    async fn retirement_facts(
        &self,
        tenant: &str,
        kind: ResourceKind,
        name: &str,
    ) -> Result<RetirementFacts, StoreError> {
        facts(&mut *self.read().await?, tenant, kind, name).await
    }

    async fn tombstones(
        &self,
        tenant: &str,
        kind: ResourceKind,
        name: &str,
    ) -> Result<Vec<Tombstone>, StoreError> {
        let records: Vec<TombstoneRecord> = sqlx::query_as(&format!(
            "SELECT kind, name, version, deleted_at, retirement_id FROM deleted_resources \
             WHERE tenant = $1 AND kind = $2 AND name = $3 ORDER BY deleted_at, {}",
            dialect::ENTRY_ORDER
        ))
        .bind(tenant)
        .bind(kind.as_str())
        .bind(name)
        .fetch_all(self.reads())
        .await?;
        records
            .into_iter()
            .map(TombstoneRecord::into_tombstone)
            .collect()
    }
}

fn record_id(record: &RetirementRecord) -> String {
    record.id().to_owned()
}

/// The guarded transition (never out of a final state). The negative control (tests only)
/// drops `AND state = …`.
const CHANGE: &str = "UPDATE retirements SET state = $1, blockers = $2, impact = $3, cascaded_flows = $4, \
     enabled_before = $5, drain_eta = $6, delete_at = $7, updated_at = $8 \
     WHERE tenant = $9 AND id = $10 AND state = $11 AND state NOT IN ('deleted', 'cancelled')";
#[cfg(feature = "fault-injection")]
const CHANGE_UNGUARDED: &str = "UPDATE retirements SET state = $1, blockers = $2, impact = $3, cascaded_flows = $4, \
     enabled_before = $5, drain_eta = $6, delete_at = $7, updated_at = $8 \
     WHERE tenant = $9 AND id = $10 AND CAST($11 AS TEXT) IS NOT NULL AND state NOT IN ('deleted', 'cancelled')";

fn change_sql(change: &RetirementChange<'_>) -> &'static str {
    #[cfg(feature = "fault-injection")]
    if change.unguarded {
        return CHANGE_UNGUARDED;
    }
    let _ = change;
    CHANGE
}

#[async_trait]
impl RetirementTx for BackendTx {
    async fn insert_retirement(&mut self, new: &NewRetirement<'_>) -> Result<Inserted, StoreError> {
        let request = new.request;
        let done = sqlx::query(
            "INSERT INTO retirements (tenant, id, fingerprint, kind, name, state, grace_seconds, cascade_flows, dlq, \
             blockers, impact, cascaded_flows, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, '[]', $12, $13) ON CONFLICT DO NOTHING",
        )
        .bind(new.tenant)
        .bind(new.id)
        .bind(new.fingerprint)
        .bind(request.kind.as_str())
        .bind(&request.name)
        .bind(retirement_state_str(new.state))
        .bind(i64::try_from(request.grace_seconds).unwrap_or(i64::MAX))
        .bind(i64::from(request.cascade_flows))
        .bind(dlq_str(request.dlq))
        .bind(to_json(&new.blockers)?)
        .bind(to_json(new.impact)?)
        .bind(new.now)
        .bind(new.now)
        .execute(&mut *self.tx)
        .await?;
        if done.rows_affected() == 0 {
            let taken: Option<i64> = sqlx::query_scalar(
                "SELECT CAST(1 AS BIGINT) FROM retirements WHERE tenant = $1 AND id = $2",
            )
            .bind(new.tenant)
            .bind(new.id)
            .fetch_optional(&mut *self.tx)
            .await?;
            return Ok(if taken.is_some() {
                Inserted::IdTaken
            } else {
                Inserted::ResourceRetiring
            });
        }
        sqlx::query(
            "INSERT INTO retirement_history (tenant, retirement_id, state, at) VALUES ($1, $2, $3, $4)",
        )
        .bind(new.tenant)
        .bind(new.id)
        .bind(retirement_state_str(new.state))
        .bind(new.now)
        .execute(&mut *self.tx)
        .await?;
        Ok(Inserted::Created)
    }

    async fn retirement_in_tx(
        &mut self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<RetirementRow>, StoreError> {
        load(&mut self.tx, tenant, id).await
    }

    async fn change_retirement(
        &mut self,
        change: &RetirementChange<'_>,
    ) -> Result<bool, StoreError> {
        let mut sql = change_sql(change).to_owned();
        if change.require_drained {
            sql.push_str(
                " AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.tenant = retirements.tenant \
                 AND d.state IN ('pending', 'in_flight') AND ((retirements.kind = 'endpoint' AND d.endpoint = retirements.name) \
                 OR (retirements.kind = 'target' AND d.target = retirements.name) \
                 OR (retirements.kind = 'flow' AND d.flow = retirements.name)))",
            );
        }
        sql.push_str(" RETURNING id");
        let won: Option<String> = sqlx::query_scalar(&sql)
            .bind(retirement_state_str(change.to))
            .bind(to_json(&change.blockers)?)
            .bind(to_json(change.impact)?)
            .bind(to_json(&change.cascaded_flows)?)
            .bind(change.enabled_before.map(i64::from))
            .bind(change.drain_eta)
            .bind(change.delete_at)
            .bind(change.now)
            .bind(change.tenant)
            .bind(change.id)
            .bind(retirement_state_str(change.from))
            .fetch_optional(&mut *self.tx)
            .await?;
        if won.is_none() {
            return Ok(false);
        }
        if change.to != change.from {
            sqlx::query(
                "INSERT INTO retirement_history (tenant, retirement_id, state, at) VALUES ($1, $2, $3, $4)",
            )
            .bind(change.tenant)
            .bind(change.id)
            .bind(retirement_state_str(change.to))
            .bind(change.now)
            .execute(&mut *self.tx)
            .await?;
        }
        Ok(true)
    }

    async fn retirement_pending(
        &mut self,
        tenant: &str,
        kind: ResourceKind,
        name: &str,
    ) -> Result<bool, StoreError> {
        let column = delivery_column(kind);
        let open: Option<i64> = sqlx::query_scalar(&format!(
            "SELECT CAST(1 AS BIGINT) FROM deliveries WHERE tenant = $1 AND {column} = $2 AND state IN ('pending', 'in_flight') LIMIT 1"
        ))
        .bind(tenant)
        .bind(name)
        .fetch_optional(&mut *self.tx)
        .await?;
        Ok(open.is_some())
    }

    async fn purge_dead(
        &mut self,
        tenant: &str,
        kind: ResourceKind,
        name: &str,
    ) -> Result<u64, StoreError> {
        let column = delivery_column(kind);
        sqlx::query(&format!(
            "DELETE FROM attempts WHERE delivery_id IN \
             (SELECT id FROM deliveries WHERE tenant = $1 AND {column} = $2 AND state = 'dead')"
        ))
        .bind(tenant)
        .bind(name)
        .execute(&mut *self.tx)
        .await?;
        let done = sqlx::query(&format!(
            "DELETE FROM deliveries WHERE tenant = $1 AND {column} = $2 AND state = 'dead'"
        ))
        .bind(tenant)
        .bind(name)
        .execute(&mut *self.tx)
        .await?;
        Ok(done.rows_affected())
    }

    async fn insert_tombstone(
        &mut self,
        tenant: &str,
        row: &ResourceRow,
        retirement_id: &str,
        now: i64,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO deleted_resources (tenant, kind, name, version, spec, status, created_at, deleted_at, retirement_id) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(tenant)
        .bind(row.kind.as_str())
        .bind(&row.name)
        .bind(row.version)
        .bind(row.spec.to_string())
        .bind(row.status.to_string())
        .bind(row.created_at)
        .bind(now)
        .bind(retirement_id)
        .execute(&mut *self.tx)
        .await?;
        Ok(())
    }
}
