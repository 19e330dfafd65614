//! SQL of API tokens.

use async_trait::async_trait;
use sqlx::FromRow;
use switchyard_protocol::Role;

use super::{Backend, BackendTx};
use crate::store::tokens::{NewToken, TokenInsert, TokenRow};
use crate::store::{StoreError, TokenStore, TokenTx, corrupt};

const COLUMNS: &str = "tenant, id, name, role, created_at, last_used_at, revoked_at";

#[derive(FromRow)]
struct Row {
    tenant: String,
    id: String,
    name: String,
    role: String,
    created_at: i64,
    last_used_at: Option<i64>,
    revoked_at: Option<i64>,
}

impl Row {
    fn into_token(self) -> Result<TokenRow, StoreError> {
        let role = Role::parse(&self.role)
            .ok_or_else(|| corrupt(format!("token {} has role {:?}", self.id, self.role)))?;
        Ok(TokenRow {
            tenant: self.tenant,
            id: self.id,
            name: self.name,
            role,
            created_at: self.created_at,
            last_used_at: self.last_used_at,
            revoked_at: self.revoked_at,
        })
    }
}

#[async_trait]
impl TokenStore for Backend {
    async fn token_by_hash(&self, sha256: &[u8]) -> Result<Option<TokenRow>, StoreError> {
        let row: Option<Row> = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM api_tokens WHERE token_sha256 = $1 AND revoked_at IS NULL"
        ))
        .bind(sha256)
        .fetch_optional(self.reads())
        .await?;
        row.map(Row::into_token).transpose()
    }

    async fn list_tokens(&self, tenant: &str) -> Result<Vec<TokenRow>, StoreError> {
        let rows: Vec<Row> = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM api_tokens WHERE tenant = $1 AND revoked_at IS NULL \
             ORDER BY created_at, id"
        ))
        .bind(tenant)
        .fetch_all(self.reads())
        .await?;
        rows.into_iter().map(Row::into_token).collect()
    }

    async fn touch_token(&self, id: &str, now: i64, coarse_ms: i64) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE api_tokens SET last_used_at = $1 WHERE id = $2 AND revoked_at IS NULL \
             AND (last_used_at IS NULL OR last_used_at <= $3)",
        )
        .bind(now)
        .bind(id)
        .bind(now - coarse_ms)
        .execute(self.writes())
        .await?;
        Ok(())
    }
}

#[async_trait]
impl TokenTx for BackendTx {
    async fn insert_token(&mut self, new: &NewToken<'_>) -> Result<TokenInsert, StoreError> {
        // The partial unique index on live names decides a race between two creations.
        let row: Option<Row> = sqlx::query_as(&format!(
            "INSERT INTO api_tokens (tenant, id, name, role, token_sha256, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (tenant, name) WHERE revoked_at IS NULL DO NOTHING RETURNING {COLUMNS}"
        ))
        .bind(new.tenant)
        .bind(new.id)
        .bind(new.name)
        .bind(new.role.as_str())
        .bind(new.sha256)
        .bind(new.now)
        .fetch_optional(&mut *self.tx)
        .await?;
        match row {
            Some(row) => Ok(TokenInsert::Created(row.into_token()?)),
            None => Ok(TokenInsert::NameTaken),
        }
    }

    async fn revoke_token(
        &mut self,
        tenant: &str,
        id: &str,
        now: i64,
    ) -> Result<Option<TokenRow>, StoreError> {
        let row: Option<Row> = sqlx::query_as(&format!(
            "UPDATE api_tokens SET revoked_at = $1 WHERE tenant = $2 AND id = $3 \
             AND revoked_at IS NULL RETURNING {COLUMNS}"
        ))
        .bind(now)
        .bind(tenant)
        .bind(id)
        .fetch_optional(&mut *self.tx)
        .await?;
        row.map(Row::into_token).transpose()
    }
}
