//! The IPC surface: the types that cross into the webview and their generated TypeScript.

pub mod bindings;
pub mod convert;
mod dlq;
mod types;

pub use dlq::*;
pub use types::*;
