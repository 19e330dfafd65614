//! Integration tests of the delivery pipeline: real loopback receivers, a fast retry
//! schedule, real edge and control-plane processes for the crash tests.

mod crash;
mod dlq;
mod events;
mod health;
mod openapi;
mod paths;
mod replay;
mod sandbox;
mod shutdown;
mod ssrf;
mod ssrf_policy;
mod support;
mod workers;
