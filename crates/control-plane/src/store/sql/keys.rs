//! SQL of idempotency keys. A claim that meets an uncommitted claim of the same key waits
//! for it on the primary key, then sees the committed row.

use async_trait::async_trait;

use super::{Backend, BackendTx, Conn};
use crate::sealing::Sealer;
use crate::store::keys;
use crate::store::rows::KeyRow;
use crate::store::{
    ClaimOutcome, KeyRecord, KeyScope, KeyStore, KeyTx, StoreError, StoredResponse,
};

const SELECT_KEY: &str = "SELECT fingerprint, state, attempt, locked_until, created_at, \
     response_status, response_headers, response_body FROM idempotency_keys";

async fn get(
    conn: &mut Conn,
    sealer: &Sealer,
    scope: &KeyScope,
) -> Result<Option<KeyRecord>, StoreError> {
    sqlx::query_as::<_, KeyRow>(&format!("{SELECT_KEY} WHERE tenant = $1 AND key = $2"))
        .bind(&scope.tenant)
        .bind(&scope.key)
        .fetch_optional(conn)
        .await?
        .map(|row| row.into_record(sealer, scope))
        .transpose()
}

/// The atomic claim: the new row's attempt, or `None` when the key exists.
async fn insert_claim(
    conn: &mut Conn,
    scope: &KeyScope,
    fingerprint: &[u8],
    now: i64,
    locked_until: i64,
) -> Result<Option<i64>, StoreError> {
    Ok(sqlx::query_scalar(
        "INSERT INTO idempotency_keys (tenant, key, fingerprint, state, attempt, locked_until, created_at) \
         VALUES ($1, $2, $3, 'in_progress', 1, $4, $5) ON CONFLICT (tenant, key) DO NOTHING RETURNING attempt",
    )
    .bind(&scope.tenant)
    .bind(&scope.key)
    .bind(fingerprint)
    .bind(locked_until)
    .bind(now)
    .fetch_optional(conn)
    .await?)
}

/// Claims, or reads the row that is there. A row released between the two statements is
/// claimed again.
async fn claim(
    conn: &mut Conn,
    sealer: &Sealer,
    scope: &KeyScope,
    fingerprint: &[u8],
    now: i64,
    locked_until: i64,
) -> Result<ClaimOutcome, StoreError> {
    loop {
        if let Some(attempt) = insert_claim(conn, scope, fingerprint, now, locked_until).await? {
            return Ok(ClaimOutcome::Claimed { attempt });
        }
        if let Some(record) = get(conn, sealer, scope).await? {
            return Ok(ClaimOutcome::Existing(record));
        }
    }
}

async fn take_over(
    conn: &mut Conn,
    scope: &KeyScope,
    seen_attempt: i64,
    now: i64,
    locked_until: i64,
) -> Result<Option<i64>, StoreError> {
    Ok(sqlx::query_scalar(
        "UPDATE idempotency_keys SET attempt = attempt + 1, locked_until = $1 \
         WHERE tenant = $2 AND key = $3 AND state = 'in_progress' AND attempt = $4 AND locked_until <= $5 \
         RETURNING attempt",
    )
    .bind(locked_until)
    .bind(&scope.tenant)
    .bind(&scope.key)
    .bind(seen_attempt)
    .bind(now)
    .fetch_optional(conn)
    .await?)
}

/// Records a completed key in one guarded statement, or reads the row that is there. A row
/// released between the two statements is tried again.
async fn record_completed(
    conn: &mut Conn,
    sealer: &Sealer,
    scope: &KeyScope,
    fingerprint: &[u8],
    now: i64,
    response: &StoredResponse,
) -> Result<ClaimOutcome, StoreError> {
    let (status, headers, body) = keys::response_columns(sealer, scope, response)?;
    loop {
        let inserted: Option<i64> = sqlx::query_scalar(
            "INSERT INTO idempotency_keys (tenant, key, fingerprint, state, attempt, locked_until, \
             created_at, response_status, response_headers, response_body) \
             VALUES ($1, $2, $3, 'completed', 1, $4, $4, $5, $6, $7) \
             ON CONFLICT (tenant, key) DO NOTHING RETURNING attempt",
        )
        .bind(&scope.tenant)
        .bind(&scope.key)
        .bind(fingerprint)
        .bind(now)
        .bind(status)
        .bind(&headers)
        .bind(&body)
        .fetch_optional(&mut *conn)
        .await?;
        if let Some(attempt) = inserted {
            return Ok(ClaimOutcome::Claimed { attempt });
        }
        if let Some(record) = get(conn, sealer, scope).await? {
            return Ok(ClaimOutcome::Existing(record));
        }
    }
}

#[async_trait]
impl KeyStore for Backend {
    async fn claim_key(
        &self,
        scope: &KeyScope,
        fingerprint: &[u8],
        now: i64,
        locked_until: i64,
    ) -> Result<ClaimOutcome, StoreError> {
        loop {
            // One autocommit statement claims: atomic on its own, no BEGIN/COMMIT round trips.
            let mut writer = self.writes().acquire().await?;
            if let Some(attempt) =
                insert_claim(&mut writer, scope, fingerprint, now, locked_until).await?
            {
                return Ok(ClaimOutcome::Claimed { attempt });
            }
            // The holder's row is read on a reader: SQLite's single writer is not held for
            // it. Released or swept between the insert and this read: claim again.
            drop(writer);
            if let Some(record) = self.get_key(scope).await? {
                return Ok(ClaimOutcome::Existing(record));
            }
        }
    }

    async fn take_over_key(
        &self,
        scope: &KeyScope,
        seen_attempt: i64,
        now: i64,
        locked_until: i64,
    ) -> Result<Option<i64>, StoreError> {
        take_over(
            &mut *self.writes().acquire().await?,
            scope,
            seen_attempt,
            now,
            locked_until,
        )
        .await
    }

    async fn renew_key(
        &self,
        scope: &KeyScope,
        attempt: i64,
        locked_until: i64,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE idempotency_keys SET locked_until = CASE WHEN locked_until > $1 THEN locked_until ELSE $1 END \
             WHERE tenant = $2 AND key = $3 AND state = 'in_progress' AND attempt = $4",
        )
        .bind(locked_until)
        .bind(&scope.tenant)
        .bind(&scope.key)
        .bind(attempt)
        .execute(self.writes())
        .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn release_key(&self, scope: &KeyScope, attempt: i64) -> Result<(), StoreError> {
        sqlx::query(
            "DELETE FROM idempotency_keys WHERE tenant = $1 AND key = $2 AND state = 'in_progress' AND attempt = $3",
        )
        .bind(&scope.tenant)
        .bind(&scope.key)
        .bind(attempt)
        .execute(self.writes())
        .await?;
        Ok(())
    }

    async fn get_key(&self, scope: &KeyScope) -> Result<Option<KeyRecord>, StoreError> {
        get(&mut *self.read().await?, &self.sealer, scope).await
    }

    async fn sweep_keys(&self, created_before: i64) -> Result<u64, StoreError> {
        let done = sqlx::query("DELETE FROM idempotency_keys WHERE created_at < $1")
            .bind(created_before)
            .execute(self.writes())
            .await?;
        Ok(done.rows_affected())
    }
}

#[async_trait]
impl KeyTx for BackendTx {
    async fn claim_key(
        &mut self,
        scope: &KeyScope,
        fingerprint: &[u8],
        now: i64,
        locked_until: i64,
    ) -> Result<ClaimOutcome, StoreError> {
        claim(
            &mut self.tx,
            &self.sealer,
            scope,
            fingerprint,
            now,
            locked_until,
        )
        .await
    }

    async fn take_over_key(
        &mut self,
        scope: &KeyScope,
        seen_attempt: i64,
        now: i64,
        locked_until: i64,
    ) -> Result<Option<i64>, StoreError> {
        take_over(&mut self.tx, scope, seen_attempt, now, locked_until).await
    }

    async fn record_completed_key(
        &mut self,
        scope: &KeyScope,
        fingerprint: &[u8],
        now: i64,
        response: &StoredResponse,
    ) -> Result<ClaimOutcome, StoreError> {
        record_completed(
            &mut self.tx,
            &self.sealer,
            scope,
            fingerprint,
            now,
            response,
        )
        .await
    }

    async fn complete_key(
        &mut self,
        scope: &KeyScope,
        attempt: i64,
        response: &StoredResponse,
    ) -> Result<bool, StoreError> {
        let (status, headers, body) = keys::response_columns(&self.sealer, scope, response)?;
        let done = sqlx::query(
            "UPDATE idempotency_keys SET state = 'completed', response_status = $1, response_headers = $2, \
             response_body = $3 WHERE tenant = $4 AND key = $5 AND state = 'in_progress' AND attempt = $6",
        )
        .bind(status)
        .bind(headers)
        .bind(body)
        .bind(&scope.tenant)
        .bind(&scope.key)
        .bind(attempt)
        .execute(&mut *self.tx)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    #[cfg(feature = "fault-injection")]
    async fn overwrite_claim(
        &mut self,
        scope: &KeyScope,
        fingerprint: &[u8],
        now: i64,
        locked_until: i64,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO idempotency_keys (tenant, key, fingerprint, state, attempt, locked_until, created_at) \
             VALUES ($1, $2, $3, 'in_progress', 1, $4, $5) ON CONFLICT (tenant, key) DO UPDATE SET \
             fingerprint = excluded.fingerprint, state = 'in_progress', attempt = 1, \
             locked_until = excluded.locked_until, created_at = excluded.created_at, \
             response_status = NULL, response_headers = NULL, response_body = NULL",
        )
        .bind(&scope.tenant)
        .bind(&scope.key)
        .bind(fingerprint)
        .bind(locked_until)
        .bind(now)
        .execute(&mut *self.tx)
        .await?;
        Ok(())
    }
}
