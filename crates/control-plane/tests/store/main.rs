//! The store conformance suite: the same scenarios against every backend (SQLite in a temp
//! file, PostgreSQL in a database of its own per test), through the store traits only. Several handles on one database stand for several replicas (for SQLite: two
//! writers on one file), so each guarded claim and fence is shown to hold without relying on
//! a single writer.

use switchyard_test_support::postgres;
mod support;

mod deliveries;
mod diagnostics;
mod events;
mod history;
mod keys;
mod metrics;
mod migrations;
mod replays;
mod retirements;
mod secrets;
