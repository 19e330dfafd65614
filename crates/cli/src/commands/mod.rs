//! One module per command group; each returns the [`crate::Exit`] the process ends with.

pub mod audit;
pub mod certs;
pub mod dlq;
pub mod doctor;
pub mod events;
pub mod first_secrets;
pub mod gitops;
pub mod mcp;
pub mod outbox;
pub mod profile;
pub mod resources;
pub mod retire;
pub mod rotation;
pub mod secrets;
pub mod status;
pub mod sync;
pub mod targets;
