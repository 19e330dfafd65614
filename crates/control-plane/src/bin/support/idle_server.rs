//! The server the read-path benches measure: tenant `bench` on a loopback port, its delivery
//! worker off, so nothing changes the seeded fixture while it is measured.

use std::net::{Ipv4Addr, SocketAddr};

use switchyard_control_plane::extract::Tenants;
use switchyard_control_plane::{Server, ServerConfig};

use crate::bench_db::BenchDb;

async fn start_idle(db: &BenchDb, token: &str) -> anyhow::Result<Server> {
    let mut tenants = Tenants::default();
    tenants.add("bench", token);
    let mut config = ServerConfig::new(
        SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        db.url(),
        tenants,
    )
    .local_only();
    config.delivery.run_worker = false;
    config.main_key_file = db.main_key_file()?;
    Server::start(config).await
}

/// A fresh database (`name` in its name) with the idle server on it, after printing the
/// bench's first line: `switchyard-{name}-bench: {what} on {backend}`.
pub async fn open(
    name: &str,
    what: &str,
    server: Option<&str>,
    token: &str,
) -> anyhow::Result<(BenchDb, Server)> {
    let db = BenchDb::create(server, name).await?;
    let backend = if db.is_postgres() {
        "PostgreSQL"
    } else {
        "SQLite (WAL)"
    };
    println!("switchyard-{name}-bench: {what} on {backend}");
    let server = start_idle(&db, token).await?;
    Ok((db, server))
}
