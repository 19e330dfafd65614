//! SQLite backend: WAL, `busy_timeout`, one writer connection taking `BEGIN IMMEDIATE`,
//! a pool of read-only readers, embedded forward-only migrations.

use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteRow, SqliteSynchronous,
};
use sqlx::{Row, Sqlite, SqlitePool, Transaction};
use switchyard_protocol::ResourceKind;

use super::{
    ClaimOutcome, KeyRecord, KeyScope, KeyState, ResourceRow, SigningSecretRow, Store, StoreError,
    StoreTx, StoredResponse,
};

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");

/// The SQLite store. All writes go through one connection, so writers queue in the pool
/// instead of fighting over the database lock.
#[derive(Clone)]
pub struct SqliteStore {
    writer: SqlitePool,
    readers: SqlitePool,
}

impl SqliteStore {
    /// Opens (creating if needed) the database at `url` (`sqlite://path` or `sqlite::memory:`)
    /// and runs pending migrations.
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        let base = SqliteConnectOptions::from_str(url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // WAL + NORMAL: a commit survives a process crash (kill -9); only an OS crash or
            // power loss can lose the last transactions.
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(10))
            .foreign_keys(true)
            .pragma("temp_store", "memory");
        let writer = SqlitePoolOptions::new()
            .max_connections(1)
            .acquire_timeout(Duration::from_secs(30))
            .connect_with(base.clone())
            .await?;
        MIGRATOR.run(&writer).await?;
        let readers = SqlitePoolOptions::new()
            .max_connections(8)
            .acquire_timeout(Duration::from_secs(30))
            .connect_with(base.read_only(true))
            .await?;
        Ok(Self { writer, readers })
    }

    /// The single writer pool (take `BEGIN IMMEDIATE` on it) and the read-only pool, for
    /// modules that keep their own SQL (the delivery pipeline).
    pub fn pools(&self) -> (SqlitePool, SqlitePool) {
        (self.writer.clone(), self.readers.clone())
    }
}

fn kind_from_str(text: &str) -> Result<ResourceKind, StoreError> {
    ResourceKind::parse(text).ok_or_else(|| StoreError::Corrupt(format!("unknown kind {text:?}")))
}

fn json_from_str(text: &str) -> Result<Value, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(e.to_string()))
}

fn resource_from_row(row: &SqliteRow) -> Result<ResourceRow, StoreError> {
    Ok(ResourceRow {
        kind: kind_from_str(row.try_get("kind")?)?,
        name: row.try_get("name")?,
        version: row.try_get("version")?,
        spec: json_from_str(row.try_get("spec")?)?,
        status: json_from_str(row.try_get("status")?)?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

fn key_from_row(row: &SqliteRow) -> Result<KeyRecord, StoreError> {
    let state = match row.try_get::<&str, _>("state")? {
        "in_progress" => KeyState::InProgress,
        "completed" => KeyState::Completed,
        other => return Err(StoreError::Corrupt(format!("unknown key state {other:?}"))),
    };
    let response = match row.try_get::<Option<i64>, _>("response_status")? {
        None => None,
        Some(status) => {
            let headers: Option<String> = row.try_get("response_headers")?;
            let headers = serde_json::from_str(headers.as_deref().unwrap_or("[]"))
                .map_err(|e| StoreError::Corrupt(e.to_string()))?;
            let status = u16::try_from(status).map_err(|e| StoreError::Corrupt(e.to_string()))?;
            let body: Option<Vec<u8>> = row.try_get("response_body")?;
            Some(StoredResponse {
                status,
                headers,
                body: body.unwrap_or_default(),
            })
        }
    };
    Ok(KeyRecord {
        fingerprint: row.try_get("fingerprint")?,
        state,
        attempt: row.try_get("attempt")?,
        locked_until: row.try_get("locked_until")?,
        created_at: row.try_get("created_at")?,
        response,
    })
}

const SELECT_RESOURCE: &str =
    "SELECT kind, name, version, spec, status, created_at, updated_at FROM resources";
/// The atomic claim: the new row's attempt, or `None` when the key exists.
async fn insert_claim<'e>(
    db: impl sqlx::SqliteExecutor<'e>,
    scope: &KeyScope,
    fingerprint: &[u8],
    now: i64,
    locked_until: i64,
) -> Result<Option<i64>, StoreError> {
    let row = sqlx::query(
        "INSERT INTO idempotency_keys (tenant, key, fingerprint, state, attempt, locked_until, created_at) \
         VALUES (?, ?, ?, 'in_progress', 1, ?, ?) ON CONFLICT (tenant, key) DO NOTHING RETURNING attempt",
    )
    .bind(&scope.tenant)
    .bind(&scope.key)
    .bind(fingerprint)
    .bind(locked_until)
    .bind(now)
    .fetch_optional(db)
    .await?;
    Ok(row.map(|r| r.try_get("attempt")).transpose()?)
}

/// Takes over an expired in-progress claim still at `seen_attempt`: the new attempt, or
/// `None` when someone else won.
async fn take_over<'e>(
    db: impl sqlx::SqliteExecutor<'e>,
    scope: &KeyScope,
    seen_attempt: i64,
    now: i64,
    locked_until: i64,
) -> Result<Option<i64>, StoreError> {
    let row = sqlx::query(
        "UPDATE idempotency_keys SET attempt = attempt + 1, locked_until = ? \
         WHERE tenant = ? AND key = ? AND state = 'in_progress' AND attempt = ? AND locked_until <= ? \
         RETURNING attempt",
    )
    .bind(locked_until)
    .bind(&scope.tenant)
    .bind(&scope.key)
    .bind(seen_attempt)
    .bind(now)
    .fetch_optional(db)
    .await?;
    Ok(row.map(|r| r.try_get("attempt")).transpose()?)
}

const SELECT_KEY: &str = "SELECT fingerprint, state, attempt, locked_until, created_at, \
     response_status, response_headers, response_body FROM idempotency_keys";

#[async_trait]
impl Store for SqliteStore {
    async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.readers).await?;
        Ok(())
    }

    async fn claim_key(
        &self,
        scope: &KeyScope,
        fingerprint: &[u8],
        now: i64,
        locked_until: i64,
    ) -> Result<ClaimOutcome, StoreError> {
        // One autocommit statement: atomic on its own, no BEGIN/COMMIT round trips.
        if let Some(attempt) =
            insert_claim(&self.writer, scope, fingerprint, now, locked_until).await?
        {
            return Ok(ClaimOutcome::Claimed { attempt });
        }
        match self.get_key(scope).await? {
            Some(record) => Ok(ClaimOutcome::Existing(record)),
            // Released or swept between our insert and read: claim again.
            None => Box::pin(self.claim_key(scope, fingerprint, now, locked_until)).await,
        }
    }

    async fn take_over_key(
        &self,
        scope: &KeyScope,
        seen_attempt: i64,
        now: i64,
        locked_until: i64,
    ) -> Result<Option<i64>, StoreError> {
        take_over(&self.writer, scope, seen_attempt, now, locked_until).await
    }

    async fn release_key(&self, scope: &KeyScope, attempt: i64) -> Result<(), StoreError> {
        sqlx::query(
            "DELETE FROM idempotency_keys WHERE tenant = ? AND key = ? AND state = 'in_progress' AND attempt = ?",
        )
        .bind(&scope.tenant)
        .bind(&scope.key)
        .bind(attempt)
        .execute(&self.writer)
        .await?;
        Ok(())
    }

    async fn get_key(&self, scope: &KeyScope) -> Result<Option<KeyRecord>, StoreError> {
        let row = sqlx::query(&format!("{SELECT_KEY} WHERE tenant = ? AND key = ?"))
            .bind(&scope.tenant)
            .bind(&scope.key)
            .fetch_optional(&self.readers)
            .await?;
        row.as_ref().map(key_from_row).transpose()
    }

    async fn sweep_keys(&self, created_before: i64) -> Result<u64, StoreError> {
        let done = sqlx::query("DELETE FROM idempotency_keys WHERE created_at < ?")
            .bind(created_before)
            .execute(&self.writer)
            .await?;
        Ok(done.rows_affected())
    }

    async fn begin(&self) -> Result<Box<dyn StoreTx>, StoreError> {
        let tx = self.writer.begin_with("BEGIN IMMEDIATE").await?;
        Ok(Box::new(SqliteTx { tx }))
    }

    async fn get_resource(
        &self,
        tenant: &str,
        kind: ResourceKind,
        name: &str,
    ) -> Result<Option<ResourceRow>, StoreError> {
        let row = sqlx::query(&format!(
            "{SELECT_RESOURCE} WHERE tenant = ? AND kind = ? AND name = ?"
        ))
        .bind(tenant)
        .bind(kind.as_str())
        .bind(name)
        .fetch_optional(&self.readers)
        .await?;
        row.as_ref().map(resource_from_row).transpose()
    }

    async fn list_resources(
        &self,
        tenant: &str,
        kind: ResourceKind,
        after: Option<&str>,
        limit: u32,
    ) -> Result<Vec<ResourceRow>, StoreError> {
        let rows = sqlx::query(&format!(
            "{SELECT_RESOURCE} WHERE tenant = ? AND kind = ? AND name > ? ORDER BY name LIMIT ?"
        ))
        .bind(tenant)
        .bind(kind.as_str())
        .bind(after.unwrap_or(""))
        .bind(limit)
        .fetch_all(&self.readers)
        .await?;
        rows.iter().map(resource_from_row).collect()
    }
}

struct SqliteTx {
    tx: Transaction<'static, Sqlite>,
}

#[async_trait]
impl StoreTx for SqliteTx {
    async fn get_resource(
        &mut self,
        tenant: &str,
        kind: ResourceKind,
        name: &str,
    ) -> Result<Option<ResourceRow>, StoreError> {
        let row = sqlx::query(&format!(
            "{SELECT_RESOURCE} WHERE tenant = ? AND kind = ? AND name = ?"
        ))
        .bind(tenant)
        .bind(kind.as_str())
        .bind(name)
        .fetch_optional(&mut *self.tx)
        .await?;
        row.as_ref().map(resource_from_row).transpose()
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
        let rows = sqlx::query(&format!(
            "SELECT name FROM resources WHERE tenant = ? AND kind = 'flow' AND {column} = ? ORDER BY name LIMIT ?"
        ))
        .bind(tenant)
        .bind(name)
        .bind(limit)
        .fetch_all(&mut *self.tx)
        .await?;
        rows.iter()
            .map(|r| r.try_get("name").map_err(Into::into))
            .collect()
    }

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
        sqlx::query("DELETE FROM signing_secrets WHERE tenant = ? AND target = ?")
            .bind(tenant)
            .bind(target)
            .execute(&mut *self.tx)
            .await?;
        Ok(())
    }

    async fn claim_key(
        &mut self,
        scope: &KeyScope,
        fingerprint: &[u8],
        now: i64,
        locked_until: i64,
    ) -> Result<ClaimOutcome, StoreError> {
        if let Some(attempt) =
            insert_claim(&mut *self.tx, scope, fingerprint, now, locked_until).await?
        {
            return Ok(ClaimOutcome::Claimed { attempt });
        }
        // The write lock is held: the row that blocked the insert is still there.
        let row = sqlx::query(&format!("{SELECT_KEY} WHERE tenant = ? AND key = ?"))
            .bind(&scope.tenant)
            .bind(&scope.key)
            .fetch_one(&mut *self.tx)
            .await?;
        Ok(ClaimOutcome::Existing(key_from_row(&row)?))
    }

    async fn take_over_key(
        &mut self,
        scope: &KeyScope,
        seen_attempt: i64,
        now: i64,
        locked_until: i64,
    ) -> Result<Option<i64>, StoreError> {
        take_over(&mut *self.tx, scope, seen_attempt, now, locked_until).await
    }

    async fn overwrite_claim(
        &mut self,
        scope: &KeyScope,
        fingerprint: &[u8],
        now: i64,
        locked_until: i64,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT OR REPLACE INTO idempotency_keys (tenant, key, fingerprint, state, attempt, locked_until, created_at) \
             VALUES (?, ?, ?, 'in_progress', 1, ?, ?)",
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

    async fn complete_key(
        &mut self,
        scope: &KeyScope,
        attempt: i64,
        response: &StoredResponse,
    ) -> Result<bool, StoreError> {
        let headers = serde_json::to_string(&response.headers).expect("headers serialize");
        let done = sqlx::query(
            "UPDATE idempotency_keys SET state = 'completed', response_status = ?, response_headers = ?, response_body = ? \
             WHERE tenant = ? AND key = ? AND state = 'in_progress' AND attempt = ?",
        )
        .bind(i64::from(response.status))
        .bind(headers)
        .bind(&response.body)
        .bind(&scope.tenant)
        .bind(&scope.key)
        .bind(attempt)
        .execute(&mut *self.tx)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn commit(self: Box<Self>) -> Result<(), StoreError> {
        self.tx.commit().await?;
        Ok(())
    }

    fn sqlite(&mut self) -> Option<&mut sqlx::SqliteConnection> {
        Some(&mut self.tx)
    }
}
