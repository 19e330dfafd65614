//! Integration tests of the console core against the real control plane, through an
//! in-repo fault proxy, with sync processes killed -9 mid-flight.

mod cache_queries;
mod cert_rotation;
mod chaos;
mod child;
mod concurrent_enqueue;
mod graceful;
mod harness;
mod keyed;
mod proxy;
mod recovery;
mod replay;
mod resolve;
mod rotation;
mod target_test;
mod two_processes;

use switchyard_test_support::tls;
