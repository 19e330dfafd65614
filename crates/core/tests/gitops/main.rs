//! GitOps against the real control plane: real repositories made in the test, plans and
//! applies through the console core, the fault proxy for failing listings, and an apply
//! process killed -9 mid-flight. The sync suite's harness and proxy are shared, not copied.

#[allow(dead_code)]
#[path = "../sync/child.rs"]
mod child;
#[allow(dead_code)]
#[path = "../sync/harness.rs"]
mod harness;
#[allow(dead_code)]
#[path = "../sync/proxy.rs"]
mod proxy;

mod apply_child;
mod crash;
mod git;
mod reconcile;
mod safety;
mod scale;
mod world;
