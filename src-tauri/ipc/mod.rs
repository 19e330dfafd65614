//! The IPC surface: the types that cross into the webview and their generated TypeScript.

mod app;
pub mod bindings;
pub mod convert;
mod dlq;
mod health;
mod recovery;
mod rotation;
mod secrets;
mod target_test;
mod types;

pub use app::*;
pub use dlq::*;
pub use health::*;
pub use recovery::*;
pub use rotation::*;
pub use secrets::*;
pub use target_test::*;
pub use types::*;
