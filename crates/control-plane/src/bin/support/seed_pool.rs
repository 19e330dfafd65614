//! The pool the benches seed their fixtures through, on either backend, so each seeding phase
//! is written once for both. Fixture rows go straight into the server's database: bench data,
//! written once, not a path the server runs (its store owns every statement it runs).

use crate::bench_db::BenchDb;

pub enum SeedPool {
    Postgres(sqlx::PgPool),
    Sqlite(sqlx::SqlitePool),
}

/// A statement's parameter.
pub enum Param {
    Int(i64),
    // Each bench compiles this file on its own; only health_bench.rs binds text.
    #[allow(dead_code)]
    Text(String),
}

impl SeedPool {
    pub async fn connect(db: &BenchDb) -> anyhow::Result<Self> {
        Ok(if db.is_postgres() {
            Self::Postgres(sqlx::PgPool::connect(&db.url()).await?)
        } else {
            Self::Sqlite(sqlx::SqlitePool::connect(&db.url()).await?)
        })
    }

    /// Runs `sql` with `params` bound in order.
    pub async fn execute(&self, sql: &str, params: &[Param]) -> anyhow::Result<()> {
        macro_rules! run {
            ($pool:expr) => {{
                let mut query = sqlx::query(sql);
                for param in params {
                    query = match param {
                        Param::Int(value) => query.bind(*value),
                        Param::Text(value) => query.bind(value.clone()),
                    };
                }
                query.execute($pool).await?;
            }};
        }
        match self {
            Self::Postgres(pool) => run!(pool),
            Self::Sqlite(pool) => run!(pool),
        }
        Ok(())
    }

    /// Runs `sql` for the numbers `0..total` in slices of `batch`: parameters 1 and 2 are a
    /// slice's first and last number, 3 is `now`.
    pub async fn in_batches(
        &self,
        sql: &str,
        total: i64,
        batch: i64,
        now: i64,
    ) -> anyhow::Result<()> {
        let mut done = 0i64;
        while done < total {
            let hi = (done + batch).min(total) - 1;
            self.execute(sql, &[Param::Int(done), Param::Int(hi), Param::Int(now)])
                .await?;
            done = hi + 1;
        }
        Ok(())
    }

    pub async fn close(self) {
        match self {
            Self::Postgres(pool) => pool.close().await,
            Self::Sqlite(pool) => pool.close().await,
        }
    }
}
