//! SQL of endpoints, targets and flows.

use async_trait::async_trait;
use sqlx::SqliteConnection;
use switchyard_protocol::{FlowSpec, ResourceKind};

use super::{SqliteStore, SqliteTx};
use crate::store::rows::ResourceRecord;
use crate::store::{ResourceRow, ResourceStore, ResourceTx, StoreError, corrupt};

const SELECT_RESOURCE: &str =
    "SELECT kind, name, version, spec, status, created_at, updated_at FROM resources";

pub(super) async fn get(
    conn: &mut SqliteConnection,
    tenant: &str,
    kind: ResourceKind,
    name: &str,
) -> Result<Option<ResourceRow>, StoreError> {
    sqlx::query_as::<_, ResourceRecord>(&format!(
        "{SELECT_RESOURCE} WHERE tenant = ? AND kind = ? AND name = ?"
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
impl ResourceStore for SqliteStore {
    async fn get_resource(
        &self,
        tenant: &str,
        kind: ResourceKind,
        name: &str,
    ) -> Result<Option<ResourceRow>, StoreError> {
        get(&mut *self.read().await?, tenant, kind, name).await
    }

    async fn list_resources(
        &self,
        tenant: &str,
        kind: ResourceKind,
        after: Option<&str>,
        limit: u32,
    ) -> Result<Vec<ResourceRow>, StoreError> {
        sqlx::query_as::<_, ResourceRecord>(&format!(
            "{SELECT_RESOURCE} WHERE tenant = ? AND kind = ? AND name > ? ORDER BY name LIMIT ?"
        ))
        .bind(tenant)
        .bind(kind.as_str())
        .bind(after.unwrap_or(""))
        .bind(limit)
        .fetch_all(&self.readers)
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
        let rows: Vec<(String, String)> = sqlx::query_as(
            "SELECT name, spec FROM resources WHERE tenant = ? AND kind = 'flow' AND ref_endpoint = ? \
             AND COALESCE(json_extract(status, '$.enabled'), 1) <> 0 ORDER BY name",
        )
        .bind(tenant)
        .bind(endpoint)
        .fetch_all(&self.readers)
        .await?;
        rows.into_iter()
            .map(|(name, spec)| Ok((name, serde_json::from_str(&spec).map_err(corrupt)?)))
            .collect()
    }
}

#[async_trait]
impl ResourceTx for SqliteTx {
    async fn get_resource(
        &mut self,
        tenant: &str,
        kind: ResourceKind,
        name: &str,
    ) -> Result<Option<ResourceRow>, StoreError> {
        // The write lock is held: nobody else can change the row before this commits.
        get(&mut self.tx, tenant, kind, name).await
    }

    async fn insert_resource(
        &mut self,
        tenant: &str,
        row: &ResourceRow,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "INSERT INTO resources (tenant, kind, name, version, spec, status, created_at, updated_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, kind, name) DO NOTHING",
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
            "UPDATE resources SET version = ?, spec = ?, status = ?, updated_at = ? \
             WHERE tenant = ? AND kind = ? AND name = ? AND version = ?",
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
        let done = sqlx::query("DELETE FROM resources WHERE tenant = ? AND kind = ? AND name = ?")
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
            "SELECT name FROM resources WHERE tenant = ? AND kind = 'flow' AND {column} = ? ORDER BY name LIMIT ?"
        ))
        .bind(tenant)
        .bind(name)
        .bind(limit)
        .fetch_all(&mut *self.tx)
        .await?)
    }
}
