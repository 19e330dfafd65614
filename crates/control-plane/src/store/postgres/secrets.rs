//! SQL of signing secrets.

use async_trait::async_trait;
use sqlx::PgConnection;

use super::{PostgresStore, PostgresTx};
use crate::sealing::{Sealer, secret_aad};
use crate::store::{SecretStore, SecretTx, SigningSecretRow, StoreError, sealed_error};

pub(super) async fn active(
    conn: &mut PgConnection,
    sealer: &Sealer,
    tenant: &str,
    target: &str,
    now: i64,
) -> Result<Vec<String>, StoreError> {
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT id, secret FROM signing_secrets WHERE tenant = $1 AND target = $2 \
         AND (expires_at IS NULL OR expires_at > $3) ORDER BY created_at",
    )
    .bind(tenant)
    .bind(target)
    .bind(now)
    .fetch_all(conn)
    .await?;
    rows.into_iter()
        .map(|(id, sealed)| {
            sealer
                .open_text(&sealed, &secret_aad(tenant, target, &id))
                .map_err(sealed_error)
        })
        .collect()
}

#[async_trait]
impl SecretStore for PostgresStore {
    async fn active_secrets(
        &self,
        tenant: &str,
        target: &str,
        now: i64,
    ) -> Result<Vec<String>, StoreError> {
        active(
            &mut *self.pool.acquire().await?,
            &self.sealer,
            tenant,
            target,
            now,
        )
        .await
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
        .bind(self.sealer.seal(
            secret.secret.as_bytes(),
            &secret_aad(tenant, target, &secret.id),
        ))
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
