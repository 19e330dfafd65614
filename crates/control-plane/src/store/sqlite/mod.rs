//! SQLite backend: WAL, `busy_timeout`, one writer connection taking `BEGIN IMMEDIATE`,
//! a pool of read-only readers, embedded forward-only migrations (`migrations/sqlite`).
//!
//! The single writer is a throughput choice (writers queue in the pool instead of fighting
//! over the database lock), not what makes it correct: every claim and fence is a guarded
//! statement that would hold with several writers too.

mod finish;

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use crate::sealing::Sealer;
use sqlx::pool::PoolConnection;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Sqlite, SqlitePool, Transaction};

use super::{Store, StoreError, StoreTx};

mod dialect;
// The SQL both backends share (`store/sql/`), compiled here against SQLite's types.
// Deliberately compiled once per backend (see store/sql/mod.rs), which is what this lint
// warns about.
#[allow(clippy::duplicate_mod)]
#[path = "../sql/mod.rs"]
mod sql;
type Db = Sqlite;
type Conn = sqlx::SqliteConnection;
type Backend = SqliteStore;
type BackendTx = SqliteTx;

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");

/// The SQLite store.
#[derive(Clone)]
pub struct SqliteStore {
    writer: SqlitePool,
    readers: SqlitePool,
    /// Seals signing secrets and stored responses on their way in, opens them on the way out.
    sealer: Arc<Sealer>,
}

impl SqliteStore {
    /// Opens (creating if needed) the database at `url` (`sqlite://path` or `sqlite::memory:`)
    /// and runs pending migrations.
    pub async fn open(url: &str, sealer: Arc<Sealer>) -> Result<Self, StoreError> {
        let base = SqliteConnectOptions::from_str(url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // WAL + NORMAL: a commit survives a process crash (kill -9); only an OS crash or
            // power loss can lose the last transactions.
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(10))
            .foreign_keys(true)
            .pragma("temp_store", "memory")
            // Deleted or overwritten content is zeroed, so a value sealed after the fact (a
            // row written before sealing existed) leaves no copy in free pages.
            .pragma("secure_delete", "on");
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
        Ok(Self {
            writer,
            readers,
            sealer,
        })
    }

    /// A write transaction on the single writer.
    async fn write(&self) -> Result<Transaction<'static, Sqlite>, StoreError> {
        Ok(self.writer.begin_with("BEGIN IMMEDIATE").await?)
    }

    /// A read-only connection (WAL: readers never block the writer).
    async fn read(&self) -> Result<PoolConnection<Sqlite>, StoreError> {
        Ok(self.readers.acquire().await?)
    }

    /// The pool reads run on: the read-only readers.
    fn reads(&self) -> &SqlitePool {
        &self.readers
    }

    /// The pool single writes outside a transaction run on: the single writer.
    fn writes(&self) -> &SqlitePool {
        &self.writer
    }
}

#[async_trait]
impl Store for SqliteStore {
    async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.readers).await?;
        Ok(())
    }

    async fn begin(&self) -> Result<Box<dyn StoreTx>, StoreError> {
        Ok(Box::new(SqliteTx {
            tx: self.write().await?,
            sealer: self.sealer.clone(),
        }))
    }
}

/// The unit of work of a keyed request: a write transaction on the single writer.
struct SqliteTx {
    tx: Transaction<'static, Sqlite>,
    sealer: Arc<Sealer>,
}

#[async_trait]
impl StoreTx for SqliteTx {
    async fn commit(self: Box<Self>) -> Result<(), StoreError> {
        self.tx.commit().await?;
        Ok(())
    }
}
