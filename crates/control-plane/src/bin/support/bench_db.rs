//! The benchmarks' databases: a SQLite file in a scratch directory, or a database of its own
//! on a PostgreSQL server (`postgres://…` without a database name, or naming any), dropped
//! at the end of the run.

use sqlx::Connection;
use switchyard_control_plane::store::with_database;

pub enum BenchDb {
    Sqlite {
        dir: std::path::PathBuf,
    },
    Postgres {
        admin_url: String,
        name: String,
        url: String,
    },
}

impl BenchDb {
    /// A new database: on the PostgreSQL server `server` when given, else SQLite.
    pub async fn create(server: Option<&str>, label: &str) -> anyhow::Result<Self> {
        let id = uuid::Uuid::new_v4().simple().to_string();
        match server {
            None => {
                let dir = std::env::temp_dir().join(format!("switchyard-{label}-{id}"));
                std::fs::create_dir_all(&dir)?;
                Ok(Self::Sqlite { dir })
            }
            Some(server) => {
                let name = format!("sy_bench_{label}_{}", &id[..12]).replace('-', "_");
                let mut admin = sqlx::PgConnection::connect(server).await?;
                sqlx::query(&format!("CREATE DATABASE \"{name}\""))
                    .execute(&mut admin)
                    .await?;
                Ok(Self::Postgres {
                    url: with_database(server, &name),
                    admin_url: server.to_owned(),
                    name,
                })
            }
        }
    }

    /// The `--db` URL of the database.
    pub fn url(&self) -> String {
        match self {
            Self::Sqlite { dir } => format!("sqlite://{}", dir.join("cp.db").display()),
            Self::Postgres { url, .. } => url.clone(),
        }
    }

    /// The main key file the servers share: beside a SQLite file the server makes its own;
    /// for PostgreSQL one is written into the scratch directory (every replica reads it).
    pub fn main_key_file(&self) -> anyhow::Result<Option<std::path::PathBuf>> {
        match self {
            Self::Sqlite { .. } => Ok(None),
            Self::Postgres { name, .. } => {
                let path = std::env::temp_dir().join(format!("{name}.main-key"));
                if !path.exists() {
                    switchyard_control_plane::sealing::Sealer::ephemeral().write_file(&path)?;
                }
                Ok(Some(path))
            }
        }
    }

    pub fn is_postgres(&self) -> bool {
        matches!(self, Self::Postgres { .. })
    }

    /// Removes the database.
    pub async fn drop_database(self) -> anyhow::Result<()> {
        match self {
            Self::Sqlite { dir } => {
                let _ = std::fs::remove_dir_all(dir);
            }
            Self::Postgres {
                admin_url, name, ..
            } => {
                let _ = std::fs::remove_file(std::env::temp_dir().join(format!("{name}.main-key")));
                let mut admin = sqlx::PgConnection::connect(&admin_url).await?;
                sqlx::query(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
                    .execute(&mut admin)
                    .await?;
            }
        }
        Ok(())
    }
}
