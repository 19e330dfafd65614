//! SQL of sealed values: re-sealing under the current main key, the start-up check.

use async_trait::async_trait;

use super::SqliteStore;
use crate::sealing::{client_key_aad, response_aad, secret_aad};
use crate::store::{SealStore, StoreError, sealed_error};

/// The sealed prefix of a value under the store's current key.
fn current_prefix(store: &SqliteStore) -> String {
    format!("sy1:{}:", store.sealer.current_id())
}

#[async_trait]
impl SealStore for SqliteStore {
    async fn reseal_batch(&self, limit: u32) -> Result<u64, StoreError> {
        let prefix = current_prefix(self);
        let len = prefix.len() as i64;
        let secrets: Vec<(String, String, String, String)> = sqlx::query_as(
            "SELECT tenant, target, id, secret FROM signing_secrets \
             WHERE substr(secret, 1, ?) <> ? LIMIT ?",
        )
        .bind(len)
        .bind(&prefix)
        .bind(i64::from(limit))
        .fetch_all(&mut *self.read().await?)
        .await?;
        let mut done = 0;
        for (tenant, target, id, stored) in secrets {
            let aad = secret_aad(&tenant, &target, &id);
            let plain = self
                .sealer
                .open(stored.as_bytes(), &aad)
                .map_err(sealed_error)?;
            let resealed = self.sealer.seal(&plain, &aad);
            // Guarded by the value read: a row changed meanwhile is left to the next batch.
            done += sqlx::query(
                "UPDATE signing_secrets SET secret = ? \
                 WHERE tenant = ? AND target = ? AND id = ? AND secret = ?",
            )
            .bind(resealed)
            .bind(&tenant)
            .bind(&target)
            .bind(&id)
            .bind(&stored)
            .execute(&self.writer)
            .await?
            .rows_affected();
        }
        let room = i64::from(limit) - done as i64;
        if room <= 0 {
            return Ok(done);
        }
        let keys: Vec<(String, String, String, String)> = sqlx::query_as(
            "SELECT tenant, target, id, private_key FROM client_certificates \
             WHERE substr(private_key, 1, ?) <> ? LIMIT ?",
        )
        .bind(len)
        .bind(&prefix)
        .bind(room)
        .fetch_all(&mut *self.read().await?)
        .await?;
        for (tenant, target, id, stored) in keys {
            let aad = client_key_aad(&tenant, &target, &id);
            let plain = self
                .sealer
                .open(stored.as_bytes(), &aad)
                .map_err(sealed_error)?;
            let resealed = self.sealer.seal(&plain, &aad);
            done += sqlx::query(
                "UPDATE client_certificates SET private_key = ? \
                 WHERE tenant = ? AND target = ? AND id = ? AND private_key = ?",
            )
            .bind(resealed)
            .bind(&tenant)
            .bind(&target)
            .bind(&id)
            .bind(&stored)
            .execute(&self.writer)
            .await?
            .rows_affected();
        }
        let room = i64::from(limit) - done as i64;
        if room <= 0 {
            return Ok(done);
        }
        let responses: Vec<(String, String, Vec<u8>)> = sqlx::query_as(
            "SELECT tenant, key, response_body FROM idempotency_keys \
             WHERE response_body IS NOT NULL AND substr(response_body, 1, ?) <> ? LIMIT ?",
        )
        .bind(len)
        .bind(prefix.as_bytes())
        .bind(room)
        .fetch_all(&mut *self.read().await?)
        .await?;
        for (tenant, key, stored) in responses {
            let aad = response_aad(&tenant, &key);
            let plain = self.sealer.open(&stored, &aad).map_err(sealed_error)?;
            let resealed = self.sealer.seal(&plain, &aad).into_bytes();
            done += sqlx::query(
                "UPDATE idempotency_keys SET response_body = ? \
                 WHERE tenant = ? AND key = ? AND response_body = ?",
            )
            .bind(resealed)
            .bind(&tenant)
            .bind(&key)
            .bind(&stored)
            .execute(&self.writer)
            .await?
            .rows_affected();
        }
        Ok(done)
    }

    async fn check_sealed(&self) -> Result<(), StoreError> {
        let secret: Option<(String, String, String, String)> = sqlx::query_as(
            "SELECT tenant, target, id, secret FROM signing_secrets WHERE substr(secret, 1, 4) = 'sy1:' LIMIT 1",
        )
        .fetch_optional(&mut *self.read().await?)
        .await?;
        if let Some((tenant, target, id, stored)) = secret {
            self.sealer
                .open(stored.as_bytes(), &secret_aad(&tenant, &target, &id))
                .map_err(sealed_error)?;
        }
        let key: Option<(String, String, String, String)> = sqlx::query_as(
            "SELECT tenant, target, id, private_key FROM client_certificates \
             WHERE substr(private_key, 1, 4) = 'sy1:' LIMIT 1",
        )
        .fetch_optional(&mut *self.read().await?)
        .await?;
        if let Some((tenant, target, id, stored)) = key {
            self.sealer
                .open(stored.as_bytes(), &client_key_aad(&tenant, &target, &id))
                .map_err(sealed_error)?;
        }
        let response: Option<(String, String, Vec<u8>)> = sqlx::query_as(
            "SELECT tenant, key, response_body FROM idempotency_keys \
             WHERE response_body IS NOT NULL AND substr(response_body, 1, 4) = ? LIMIT 1",
        )
        .bind(b"sy1:".as_slice())
        .fetch_optional(&mut *self.read().await?)
        .await?;
        if let Some((tenant, key, stored)) = response {
            self.sealer
                .open(&stored, &response_aad(&tenant, &key))
                .map_err(sealed_error)?;
        }
        Ok(())
    }
}
