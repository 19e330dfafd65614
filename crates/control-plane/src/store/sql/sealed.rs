//! SQL of sealed values: re-sealing under the current main key, the start-up check.

use async_trait::async_trait;

use super::Backend;
use crate::sealing::{client_key_aad, response_aad, secret_aad};
use crate::store::sealed::{SEALED_TEXT, SealedText};
use crate::store::{SealStore, StoreError, sealed_error};

/// The sealed prefix of a value under the store's current key.
fn current_prefix(store: &Backend) -> String {
    format!("sy1:{}:", store.sealer.current_id())
}

/// Re-seals up to `room` values of one sealed text column not under `prefix`.
async fn reseal_text(
    store: &Backend,
    text: &SealedText,
    prefix: &str,
    room: i64,
) -> Result<u64, StoreError> {
    let (table, col) = (text.table, text.column);
    let rows: Vec<(String, String, String, String)> = sqlx::query_as(&format!(
        "SELECT tenant, target, id, {col} FROM {table} WHERE substr({col}, 1, CAST($1 AS INTEGER)) <> $2 LIMIT $3"
    ))
    .bind(prefix.len() as i64)
    .bind(prefix)
    .bind(room)
    .fetch_all(&mut *store.read().await?)
    .await?;
    let mut done = 0;
    for (tenant, target, id, stored) in rows {
        let aad = (text.aad)(&tenant, &target, &id);
        let plain = store
            .sealer
            .open(stored.as_bytes(), &aad)
            .map_err(sealed_error)?;
        let resealed = store.sealer.seal(&plain, &aad);
        // Guarded by the value read: a row changed meanwhile is left to the next batch.
        done += sqlx::query(&format!(
            "UPDATE {table} SET {col} = $1 WHERE tenant = $2 AND target = $3 AND id = $4 AND {col} = $5"
        ))
        .bind(resealed)
        .bind(&tenant)
        .bind(&target)
        .bind(&id)
        .bind(&stored)
        .execute(store.writes())
        .await?
        .rows_affected();
    }
    Ok(done)
}

/// Re-seals up to `room` stored responses not under `prefix`.
async fn reseal_responses(store: &Backend, prefix: &str, room: i64) -> Result<u64, StoreError> {
    let responses: Vec<(String, String, Vec<u8>)> = sqlx::query_as(
        "SELECT tenant, key, response_body FROM idempotency_keys \
         WHERE response_body IS NOT NULL AND substr(response_body, 1, CAST($1 AS INTEGER)) <> $2 LIMIT $3",
    )
    .bind(prefix.len() as i64)
    .bind(prefix.as_bytes())
    .bind(room)
    .fetch_all(&mut *store.read().await?)
    .await?;
    let mut done = 0;
    for (tenant, key, stored) in responses {
        let aad = response_aad(&tenant, &key);
        let plain = store.sealer.open(&stored, &aad).map_err(sealed_error)?;
        let resealed = store.sealer.seal(&plain, &aad).into_bytes();
        done += sqlx::query(
            "UPDATE idempotency_keys SET response_body = $1 \
             WHERE tenant = $2 AND key = $3 AND response_body = $4",
        )
        .bind(resealed)
        .bind(&tenant)
        .bind(&key)
        .bind(&stored)
        .execute(store.writes())
        .await?
        .rows_affected();
    }
    Ok(done)
}

#[async_trait]
impl SealStore for Backend {
    async fn reseal_batch(&self, limit: u32) -> Result<u64, StoreError> {
        let prefix = current_prefix(self);
        let mut done = 0;
        for text in &SEALED_TEXT {
            let room = i64::from(limit) - done as i64;
            if room <= 0 {
                return Ok(done);
            }
            done += reseal_text(self, text, &prefix, room).await?;
        }
        let room = i64::from(limit) - done as i64;
        if room <= 0 {
            return Ok(done);
        }
        Ok(done + reseal_responses(self, &prefix, room).await?)
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
             WHERE response_body IS NOT NULL AND substr(response_body, 1, 4) = $1 LIMIT 1",
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
