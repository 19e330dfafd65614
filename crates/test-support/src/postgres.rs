//! A PostgreSQL database of its own for one test, dropped when the test ends. The server is
//! `SWITCHYARD_TEST_PG_URL` (default `postgres://postgres@127.0.0.1:5432`, what
//! `scripts/setup.sh` provides); a test that needs it fails, saying so, when it does not
//! answer.

use sqlx::Connection;
use switchyard_control_plane::store::with_database;

pub struct TestDatabase {
    admin_url: String,
    name: String,
    /// The database's URL, for `--db` and `store::open`.
    pub url: String,
}

fn server_url() -> String {
    std::env::var("SWITCHYARD_TEST_PG_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".to_owned())
}

impl TestDatabase {
    pub async fn create() -> Self {
        let admin_url = server_url();
        let mut admin = sqlx::PgConnection::connect(&admin_url)
            .await
            .unwrap_or_else(|e| {
                panic!(
                    "PostgreSQL does not answer at {admin_url} ({e}): run scripts/setup.sh, \
                     or point SWITCHYARD_TEST_PG_URL at a server whose user may create databases"
                )
            });
        let name = format!("sy_test_{}", uuid::Uuid::new_v4().simple());
        sqlx::query(&format!("CREATE DATABASE \"{name}\""))
            .execute(&mut admin)
            .await
            .unwrap();
        let url = with_database(&admin_url, &name);
        Self {
            admin_url,
            name,
            url,
        }
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let (admin_url, name) = (self.admin_url.clone(), self.name.clone());
        // Drop runs outside async: a short-lived runtime on its own thread does the work.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                if let Ok(mut admin) = sqlx::PgConnection::connect(&admin_url).await {
                    let _ =
                        sqlx::query(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
                            .execute(&mut admin)
                            .await;
                }
            });
        })
        .join();
    }
}
