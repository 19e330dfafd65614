//! SQL of endpoints, targets and flows.

use async_trait::async_trait;
use switchyard_protocol::{FlowSpec, ResourceKind};

use super::{Backend, BackendTx, Conn, dialect};
use crate::store::rows::ResourceRecord;
use crate::store::{ResourceRow, ResourceStore, ResourceTx, StoreError, corrupt};

const SELECT_RESOURCE: &str =
    "SELECT kind, name, version, spec, status, created_at, updated_at FROM resources";

pub(in crate::store) async fn get(
    conn: &mut Conn,
    tenant: &str,
    kind: ResourceKind,
    name: &str,
    lock: bool,
) -> Result<Option<ResourceRow>, StoreError> {
    let lock = if lock { dialect::FOR_UPDATE } else { "" };
    sqlx::query_as::<_, ResourceRecord>(&format!(
        "{SELECT_RESOURCE} WHERE tenant = $1 AND kind = $2 AND name = $3{lock}"
    ))
    .bind(tenant)
    .bind(kind.as_str())
    .bind(name)
    .fetch_optional(conn)
    .await?
    .map(ResourceRecord::into_resource)
    .transpose()
}

#[async_trait]
impl ResourceStore for Backend {
    async fn get_resource(
        &self,
        tenant: &str,
        kind: ResourceKind,
        name: &str,
    ) -> Result<Option<ResourceRow>, StoreError> {
        get(&mut *self.read().await?, tenant, kind, name, false).await
    }

    async fn list_resources(
        &self,
        tenant: &str,
        kind: ResourceKind,
        after: Option<&str>,
        limit: u32,
    ) -> Result<Vec<ResourceRow>, StoreError> {
        sqlx::query_as::<_, ResourceRecord>(&format!(
            "{SELECT_RESOURCE} WHERE tenant = $1 AND kind = $2 AND name > $3 ORDER BY name LIMIT $4"
        ))
        .bind(tenant)
        .bind(kind.as_str())
        .bind(after.unwrap_or(""))
        .bind(i64::from(limit))
        .fetch_all(self.reads())
        .await?
        .into_iter()
        .map(ResourceRecord::into_resource)
        .collect()
    }

    async fn flows_of_endpoint(
        &self,
        tenant: &str,
        endpoint: &str,
    ) -> Result<Vec<(String, FlowSpec)>, StoreError> {
        let rows: Vec<(String, String)> = sqlx::query_as(&format!(
            "SELECT name, spec FROM resources WHERE tenant = $1 AND kind = 'flow' AND ref_endpoint = $2 \
             AND {} ORDER BY name",
            dialect::ENABLED
        ))
        .bind(tenant)
        .bind(endpoint)
        .fetch_all(self.reads())
        .await?;
        rows.into_iter()
            .map(|(name, spec)| Ok((name, serde_json::from_str(&spec).map_err(corrupt)?)))
            .collect()
    }
}

#[async_trait]
impl ResourceTx for BackendTx {
    async fn get_resource(
        &mut self,
        tenant: &str,
        kind: ResourceKind,
        name: &str,
    ) -> Result<Option<ResourceRow>, StoreError> {
        // Locked until the unit of work ends (SQLite: the writer's lock is held already): a
        // concurrent change of the same resource waits, then sees this one's version.
        get(&mut self.tx, tenant, kind, name, true).await
    }

    async fn insert_resource(
        &mut self,
        tenant: &str,
        row: &ResourceRow,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "INSERT INTO resources (tenant, kind, name, version, spec, status, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (tenant, kind, name) DO NOTHING",
        )
        .bind(tenant)
        .bind(row.kind.as_str())
        .bind(&row.name)
        .bind(row.version)
        .bind(row.spec.to_string())
        .bind(row.status.to_string())
        .bind(row.created_at)
        .bind(row.updated_at)
        .execute(&mut *self.tx)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn update_resource(
        &mut self,
        tenant: &str,
        row: &ResourceRow,
        expected_version: i64,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE resources SET version = $1, spec = $2, status = $3, updated_at = $4 \
             WHERE tenant = $5 AND kind = $6 AND name = $7 AND version = $8",
        )
        .bind(row.version)
        .bind(row.spec.to_string())
        .bind(row.status.to_string())
        .bind(row.updated_at)
        .bind(tenant)
        .bind(row.kind.as_str())
        .bind(&row.name)
        .bind(expected_version)
        .execute(&mut *self.tx)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn delete_resource(
        &mut self,
        tenant: &str,
        kind: ResourceKind,
        name: &str,
    ) -> Result<bool, StoreError> {
        let done =
            sqlx::query("DELETE FROM resources WHERE tenant = $1 AND kind = $2 AND name = $3")
                .bind(tenant)
                .bind(kind.as_str())
                .bind(name)
                .execute(&mut *self.tx)
                .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn flows_referencing(
        &mut self,
        tenant: &str,
        kind: ResourceKind,
        name: &str,
        limit: u32,
    ) -> Result<Vec<String>, StoreError> {
        let column = match kind {
            ResourceKind::Endpoint => "ref_endpoint",
            ResourceKind::Target => "ref_target",
            ResourceKind::Flow => return Ok(Vec::new()),
        };
        Ok(sqlx::query_scalar(&format!(
            "SELECT name FROM resources WHERE tenant = $1 AND kind = 'flow' AND {column} = $2 ORDER BY name LIMIT $3"
        ))
        .bind(tenant)
        .bind(name)
        .bind(i64::from(limit))
        .fetch_all(&mut *self.tx)
        .await?)
    }
}

/// Whether the tenant has the target; inside a unit of work, its row stays locked until
/// the unit of work ends, so rotations, expiries and certificate activations of one target
/// run one after the other.
pub(super) async fn lock_target(
    conn: &mut Conn,
    tenant: &str,
    target: &str,
) -> Result<bool, StoreError> {
    Ok(sqlx::query_scalar::<_, i64>(&format!(
        "SELECT CAST(1 AS BIGINT) FROM resources WHERE tenant = $1 AND kind = 'target' \
         AND name = $2{}",
        dialect::FOR_UPDATE
    ))
    .bind(tenant)
    .bind(target)
    .fetch_optional(conn)
    .await?
    .is_some())
}
