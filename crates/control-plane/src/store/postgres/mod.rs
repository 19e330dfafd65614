//! PostgreSQL backend: several control-plane replicas share one database. Transactions run
//! at READ COMMITTED; every claim and fence is a guarded statement, batches of due work are
//! taken with `FOR UPDATE SKIP LOCKED`, and `LISTEN/NOTIFY` wakes the other replicas' workers
//! early (their poll stays the backstop). Migrations (`migrations/postgres`) are embedded;
//! replicas starting together apply them once (sqlx holds an advisory lock meanwhile).

mod finish;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use crate::sealing::Sealer;
use sqlx::postgres::{PgListener, PgPoolOptions};
use sqlx::{PgPool, Postgres, Transaction};

use super::{Store, StoreError, StoreTx};

mod dialect;
// The SQL both backends share (`store/sql/`), compiled here against PostgreSQL's types.
// Deliberately compiled once per backend (see store/sql/mod.rs), which is what this lint
// warns about.
#[allow(clippy::duplicate_mod)]
#[path = "../sql/mod.rs"]
mod sql;
type Db = Postgres;
type Conn = sqlx::PgConnection;
type Backend = PostgresStore;
type BackendTx = PostgresTx;

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

/// The channel a commit that made work due notifies (`dialect::NOTIFY_WORK`).
pub(super) const WORK_CHANNEL: &str = "switchyard_work";

/// The PostgreSQL store.
#[derive(Clone)]
pub struct PostgresStore {
    pool: PgPool,
    /// Seals signing secrets and stored responses on their way in, opens them on the way out.
    sealer: Arc<Sealer>,
}

impl PostgresStore {
    /// Connects to `url` (`postgres://user[:password]@host[:port]/database`) and runs
    /// pending migrations. `max_connections` bounds this replica's pool.
    pub async fn open(
        url: &str,
        max_connections: u32,
        sealer: Arc<Sealer>,
    ) -> Result<Self, StoreError> {
        let pool = PgPoolOptions::new()
            .max_connections(max_connections)
            .acquire_timeout(Duration::from_secs(30))
            .connect(url)
            .await?;
        MIGRATOR.run(&pool).await?;
        Ok(Self { pool, sealer })
    }

    async fn write(&self) -> Result<Transaction<'static, Postgres>, StoreError> {
        Ok(self.pool.begin().await?)
    }

    async fn read(&self) -> Result<sqlx::pool::PoolConnection<Postgres>, StoreError> {
        Ok(self.pool.acquire().await?)
    }

    /// The pool reads run on (every replica's one pool).
    fn reads(&self) -> &PgPool {
        &self.pool
    }

    /// The pool single writes outside a transaction run on.
    fn writes(&self) -> &PgPool {
        &self.pool
    }
}

#[async_trait]
impl Store for PostgresStore {
    async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    async fn begin(&self) -> Result<Box<dyn StoreTx>, StoreError> {
        Ok(Box::new(PostgresTx {
            tx: self.write().await?,
            sealer: self.sealer.clone(),
        }))
    }

    fn wake_on_new_work(
        &self,
        wake: Arc<tokio::sync::Notify>,
    ) -> Option<tokio::task::JoinHandle<()>> {
        let pool = self.pool.clone();
        Some(tokio::spawn(async move {
            loop {
                match listen(&pool, &wake).await {
                    Ok(()) => {}
                    Err(e) => tracing::warn!(error = %e,
                        "listening for new work failed; polling until it is back"),
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }))
    }
}

async fn listen(pool: &PgPool, wake: &tokio::sync::Notify) -> Result<(), sqlx::Error> {
    let mut listener = PgListener::connect_with(pool).await?;
    listener.listen(WORK_CHANNEL).await?;
    loop {
        listener.recv().await?;
        wake.notify_one();
    }
}

/// The unit of work of a keyed request: a READ COMMITTED transaction.
struct PostgresTx {
    tx: Transaction<'static, Postgres>,
    sealer: Arc<Sealer>,
}

#[async_trait]
impl StoreTx for PostgresTx {
    async fn commit(self: Box<Self>) -> Result<(), StoreError> {
        self.tx.commit().await?;
        Ok(())
    }
}
