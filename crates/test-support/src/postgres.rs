//! A PostgreSQL database of its own for one test, dropped when the test ends. The server is
//! `SWITCHYARD_TEST_PG_URL` (default `postgres://postgres@127.0.0.1:5432`, what
//! `scripts/setup.sh` provides); a test that needs it fails, saying so, when it does not
//! answer.

use sqlx::Connection;

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

/// `base` with its database path replaced by `name` (the query string is kept).
fn with_database(base: &str, name: &str) -> String {
    let (head, query) = match base.split_once('?') {
        Some((h, q)) => (h, format!("?{q}")),
        None => (base, String::new()),
    };
    let authority_start = head.find("://").map_or(0, |i| i + 3);
    let server = match head[authority_start..].find('/') {
        Some(slash) => &head[..authority_start + slash],
        None => head,
    };
    format!("{server}/{name}{query}")
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

#[test]
fn database_urls_keep_server_and_options() {
    assert_eq!(
        with_database("postgres://postgres@127.0.0.1:5432", "t1"),
        "postgres://postgres@127.0.0.1:5432/t1"
    );
    assert_eq!(
        with_database("postgres://u:p@db:5433/postgres?sslmode=disable", "t1"),
        "postgres://u:p@db:5433/t1?sslmode=disable"
    );
}
