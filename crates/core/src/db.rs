//! The console database: WAL, `busy_timeout`, writes in `BEGIN IMMEDIATE` transactions,
//! embedded forward-only migrations. Shared by every process on the data dir.

use std::path::Path;
use std::time::Duration;

use sqlx::SqlitePool;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

use crate::error::Result;

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// The pragmas every connection gets (the benchmark's baseline uses the same ones).
pub fn connect_options(path: &Path) -> SqliteConnectOptions {
    SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        // WAL + NORMAL: a commit survives a process crash (kill -9).
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(Duration::from_secs(30))
        .foreign_keys(true)
        .pragma("wal_autocheckpoint", "10000")
}

/// Pool options for a local database file. No liveness check when a connection is taken
/// from the pool: a SQLite connection has no network to go stale, and the check would cost a
/// round trip to the connection's worker thread on every statement outside a transaction
/// (the bench's raw baseline is built with the same options).
pub fn pool_options() -> SqlitePoolOptions {
    SqlitePoolOptions::new().test_before_acquire(false)
}

/// Opens the writer (one connection) and the readers, running migrations first.
pub async fn open(path: &Path) -> Result<(SqlitePool, SqlitePool)> {
    let writer = pool_options()
        .max_connections(1)
        .acquire_timeout(Duration::from_secs(120))
        .connect_with(connect_options(path))
        .await?;
    MIGRATOR.run(&writer).await?;
    let readers = pool_options()
        .max_connections(4)
        .acquire_timeout(Duration::from_secs(60))
        .connect_with(connect_options(path))
        .await?;
    Ok((readers, writer))
}
