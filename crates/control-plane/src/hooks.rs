//! Test hooks at the crash points of a keyed request.
//!
//! Production uses [`NoHooks`]. Integration tests pause a request at a point (to take its
//! lease over, or to race it). Built with the `fault-injection` feature (tests only), the
//! binary can also abort the whole process at a point named by `SWITCHYARD_TEST_CRASH_AT`,
//! for kill -9 style crash tests; a release build has no such switch.

use async_trait::async_trait;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookPoint {
    /// The key is claimed. For an external effect the claim has committed as in progress and
    /// the call has not started. For a local effect the key is recorded, with its response,
    /// in the open write transaction, after the effect; only the commit is left.
    AfterClaim,
    /// The effect is done (a local one written inside the open transaction, an external call
    /// made); the key's response is not written yet.
    AfterEffect,
}

#[cfg(feature = "fault-injection")]
impl HookPoint {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "after_claim" => Some(Self::AfterClaim),
            "after_effect" => Some(Self::AfterEffect),
            _ => None,
        }
    }
}

#[async_trait]
pub trait Hooks: Send + Sync + 'static {
    /// Called when a keyed request reaches `point`; may pause, or end the process.
    async fn at(&self, point: HookPoint, key: &str);
}

pub struct NoHooks;

#[async_trait]
impl Hooks for NoHooks {
    async fn at(&self, _point: HookPoint, _key: &str) {}
}

/// Aborts the process (no cleanup, like kill -9) when a request reaches `point`.
#[cfg(feature = "fault-injection")]
pub struct CrashAt(pub HookPoint);

#[cfg(feature = "fault-injection")]
#[async_trait]
impl Hooks for CrashAt {
    async fn at(&self, point: HookPoint, _key: &str) {
        if point == self.0 {
            eprintln!("SWITCHYARD_TEST_CRASH_AT: aborting at {point:?}");
            std::process::abort();
        }
    }
}
