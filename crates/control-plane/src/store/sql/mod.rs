//! The SQL both backends share: every statement written once.
//!
//! This folder is compiled twice, once inside each backend (`store/sqlite/mod.rs` and
//! `store/postgres/mod.rs` include it with `#[path]`), against that backend's [`Db`],
//! connection ([`Conn`]), store ([`Backend`]), unit of work ([`BackendTx`]) and
//! [`dialect`]. So a statement here is one string checked on both databases by the store
//! conformance suite (`crates/control-plane/tests/store`), and a backend's own folder holds
//! only what truly differs: how it opens, locks and wakes, and the statements its dialect
//! spells differently (named for what they do in its `dialect.rs`).
//!
//! The statements keep to the SQL both accept: `$N` placeholders (sqlx's SQLite driver
//! binds `$N` to the N-th argument, reused as often as it appears), `CAST(x AS BIGINT)`
//! rather than `x::bigint`, aggregates with `FILTER (WHERE …)`, `INSERT … ON CONFLICT …
//! RETURNING`, and 64-bit integer binds. A dynamic filter uses sqlx's `QueryBuilder`, which
//! writes each backend's own placeholders.

use super::{Backend, BackendTx, Conn, Db, dialect, finish};
use crate::store::StoreError;

pub(super) mod client_certs;
pub(super) mod deliveries;
pub(super) mod diagnostics;
pub(super) mod dlq;
pub(super) mod edges;
pub(super) mod events;
pub(super) mod gauges;
pub(super) mod history;
pub(super) mod keys;
pub(super) mod metrics;
pub(super) mod replays;
pub(super) mod resources;
pub(super) mod retirements;
pub(super) mod sealed;
pub(super) mod secrets;
pub(super) mod tokens;

/// Runs one of the dialect's optional statements (`None`: this backend needs none), with
/// `args` bound as `$1`, `$2`, …
pub(in crate::store) async fn run(
    conn: &mut Conn,
    sql: Option<&str>,
    args: &[&str],
) -> Result<(), StoreError> {
    let Some(sql) = sql else { return Ok(()) };
    let mut q = sqlx::query(sql);
    for a in args {
        q = q.bind(*a);
    }
    q.execute(conn).await?;
    Ok(())
}

/// Tells the other replicas' workers that work became due ([`dialect::NOTIFY_WORK`]).
pub(in crate::store) async fn notify_work(conn: &mut Conn) -> Result<(), StoreError> {
    run(conn, dialect::NOTIFY_WORK, &[]).await
}
