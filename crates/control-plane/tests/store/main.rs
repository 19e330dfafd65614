//! The store conformance suite: the same scenarios against every backend, through the store
//! traits only. Several handles on one database stand for several replicas (for SQLite: two
//! writers on one file), so each guarded claim and fence is shown to hold without relying on
//! a single writer.

mod support;

mod deliveries;
mod events;
mod keys;
mod migrations;
mod replays;
