//! SQL of signing secrets.

use async_trait::async_trait;
use sqlx::PgConnection;

use super::{PostgresStore, PostgresTx};
use crate::store::{SecretStore, SecretTx, SigningSecretRow, StoreError};

pub(super) async fn active(
    conn: &mut PgConnection,
    tenant: &str,
    target: &str,
    now: i64,
) -> Result<Vec<String>, StoreError> {
    Ok(sqlx::query_scalar(
        "SELECT secret FROM signing_secrets WHERE tenant = $1 AND target = $2 \
         AND (expires_at IS NULL OR expires_at > $3) ORDER BY created_at",
    )
    .bind(tenant)
    .bind(target)
    .bind(now)
    .fetch_all(conn)
    .await?)
}

#[async_trait]
impl SecretStore for PostgresStore {
    async fn active_secrets(
        &self,
        tenant: &str,
        target: &str,
        now: i64,
    ) -> Result<Vec<String>, StoreError> {
        active(&mut *self.pool.acquire().await?, tenant, target, now).await
    }
}

#[async_trait]
impl SecretTx for PostgresTx {
    async fn insert_signing_secret(
        &mut self,
        tenant: &str,
        target: &str,
        secret: &SigningSecretRow,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO signing_secrets (tenant, target, id, secret, created_at, expires_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(tenant)
        .bind(target)
        .bind(&secret.id)
        .bind(&secret.secret)
        .bind(secret.created_at)
        .bind(secret.expires_at)
        .execute(&mut *self.tx)
        .await?;
        Ok(())
    }

    async fn delete_signing_secrets(
        &mut self,
        tenant: &str,
        target: &str,
    ) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM signing_secrets WHERE tenant = $1 AND target = $2")
            .bind(tenant)
            .bind(target)
            .execute(&mut *self.tx)
            .await?;
        Ok(())
    }
}
