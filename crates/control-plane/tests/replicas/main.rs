//! Several control-plane replicas (real processes) on one PostgreSQL database, with no
//! balancer: each test spreads its requests over the replicas itself. Every scenario has a
//! negative control that starts the replicas with the guard removed
//! (`SWITCHYARD_TEST_FAULTS`) and shows the same check failing.

#[path = "../delivery/support.rs"]
#[allow(dead_code)]
mod support;

use switchyard_test_support::postgres;

mod cluster;

mod deliveries;
mod events;
mod keyed;
mod replays;
