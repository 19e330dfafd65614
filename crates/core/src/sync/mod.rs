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
