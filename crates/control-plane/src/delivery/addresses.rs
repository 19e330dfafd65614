//! Which addresses a webhook may be sent to: the rules live in the protocol crate
//! ([`switchyard_protocol::addresses`]) so that clients (`switchyard gitops plan`) judge a
//! target URL with the server's own code, under the policy `GET /v1/info` advertises.

pub use switchyard_protocol::addresses::*;
