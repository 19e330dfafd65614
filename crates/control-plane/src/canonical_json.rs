//! Canonical JSON for request fingerprints (shared with the console: see the protocol crate).

pub use switchyard_protocol::canonical_json::to_vec;
