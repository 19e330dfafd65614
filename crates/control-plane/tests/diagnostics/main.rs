//! `GET /v1/diagnostics`, each class provoked for real (a control plane killed mid-attempt,
//! an edge killed, a failing receiver, a replay nobody sends, a disabled endpoint with
//! deliveries open, a counter tampered with), its fix run twice under one Idempotency-Key,
//! and the receiver's log checked: nothing lost, nothing delivered twice.

#[path = "../delivery/support.rs"]
#[allow(dead_code)]
mod support;

use switchyard_test_support::tls;

mod fix;

mod api;
mod backlog;
mod certificates;
mod edge;
mod overlap;
mod stuck;
mod targets;
