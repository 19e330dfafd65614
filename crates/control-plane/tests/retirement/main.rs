//! Retirement sessions over HTTP: a real control plane (in-process, or a spawned binary that
//! a test kills with SIGKILL at each transition), real receivers, the API only.

#[path = "../delivery/support.rs"]
#[allow(dead_code)]
mod support;

mod api;
mod crash;
mod drain;
mod helpers;
mod openapi;
