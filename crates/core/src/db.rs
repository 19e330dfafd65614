//! The console database: WAL, `busy_timeout`, writes in `BEGIN IMMEDIATE` transactions,
//! embedded forward-only migrations. Shared by every process on the data dir.

use std::path::Path;
use std::time::Duration;

use sqlx::SqlitePool;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

use crate::error::{CoreError, Result};

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
    restrict_files(path)?;
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

/// The database files are the owner's alone (0600 on unix): `console.db` is created 0600
/// before SQLite opens it, because SQLite creates `-wal` and `-shm` with the database file's
/// mode. An existing database, WAL or shared-memory file that grants anyone else access (an
/// older version's, or one made with a looser umask) is tightened first; no bit is ever
/// added.
#[cfg(unix)]
fn restrict_files(path: &Path) -> Result<()> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let io = |what: &str, p: &Path, e: std::io::Error| {
        CoreError::io(format!("cannot {what} {}: {e}", p.display()), e)
    };
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io("create", path, e)),
    }
    for suffix in ["", "-wal", "-shm"] {
        let mut file = path.as_os_str().to_owned();
        file.push(suffix);
        let file = std::path::PathBuf::from(file);
        let mode = match std::fs::metadata(&file) {
            Ok(m) => m.permissions().mode() & 0o7777,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io("read the mode of", &file, e)),
        };
        if mode & 0o177 != 0 {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode & 0o600))
                .map_err(|e| io("restrict to its owner (0600)", &file, e))?;
        }
    }
    Ok(())
}

#[cfg(not(unix))]
fn restrict_files(_path: &Path) -> Result<()> {
    Ok(())
}
