//! The sync engine: claims due operations atomically (a fenced lease in SQLite), sends each
//! once per attempt, and records the outcome with the cache change in one transaction.
//! Retries happen here and only here (see `retry`).
//!
//! - `run`: the loop of one sync run (plan, claim, start attempts, account for results);
//! - `attempt`: one attempt of one operation (send it once and classify the answer);
//! - `record`: what the engine reads and writes in SQLite (claims, live ops, outcomes).

mod attempt;
mod record;
mod run;

impl crate::Console {
    /// The live ops that hold `op_id` back, oldest first: earlier writes to the same
    /// resource, a flow's endpoint and target, the flow writes naming a resource being
    /// deleted. Empty when it waits for nothing but its own backoff.
    pub async fn waiting_for(&self, profile: &str, op_id: i64) -> crate::error::Result<Vec<i64>> {
        let live = self.load_live(profile, &crate::lease::boot_id()).await?;
        Ok(crate::schedule::blockers(&live, op_id))
    }
}
