//! SQL of signing secrets.

use async_trait::async_trait;
use sqlx::SqliteConnection;

use super::{SqliteStore, SqliteTx};
use crate::sealing::{Sealer, secret_aad};
use crate::store::{SecretStore, SecretTx, SigningSecretRow, StoreError, sealed_error};

pub(super) async fn active(
    conn: &mut SqliteConnection,
    sealer: &Sealer,
    tenant: &str,
    target: &str,
    now: i64,
) -> Result<Vec<String>, StoreError> {
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT id, secret FROM signing_secrets WHERE tenant = ? AND target = ? \
         AND (expires_at IS NULL OR expires_at > ?) ORDER BY created_at",
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
impl SecretStore for SqliteStore {
    async fn active_secrets(
        &self,
        tenant: &str,
        target: &str,
        now: i64,
    ) -> Result<Vec<String>, StoreError> {
        active(&mut *self.read().await?, &self.sealer, tenant, target, now).await
    }
}

#[async_trait]
impl SecretTx for SqliteTx {
    async fn insert_signing_secret(
        &mut self,
        tenant: &str,
        target: &str,
        secret: &SigningSecretRow,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO signing_secrets (tenant, target, id, secret, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
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
        sqlx::query("DELETE FROM signing_secrets WHERE tenant = ? AND target = ?")
            .bind(tenant)
            .bind(target)
            .execute(&mut *self.tx)
            .await?;
        Ok(())
    }
}
