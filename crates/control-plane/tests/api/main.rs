//! Integration tests of the control plane's resource API and Idempotency-Key contract, against
//! real servers on 127.0.0.1:0.

mod concurrency;
mod crash;
mod external;
mod idempotency;
mod resources;
mod strict;
mod support;
mod system;
mod tenants;
