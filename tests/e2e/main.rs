//! End-to-end tests of the desktop app: the real binary, driven over WebDriver
//! (tauri-driver + WebKitWebDriver) under a virtual display.
//!
//! They need a display and a binary built with the UI embedded, so they are `#[ignore]`d in a
//! plain `cargo test`; `make test-e2e` builds everything and runs them under `xvfb-run`:
//!
//! ```text
//! npm --prefix ui run build && cargo build --features custom-protocol
//! xvfb-run -a -s "-screen 0 1280x800x24" cargo test --test e2e -- --ignored --test-threads=1
//! ```
//!
//! Each test gets throw-away XDG and data dirs. Screenshots land in `docs/screenshots/`
//! (`SCREENSHOT_DIR` overrides).

mod about;
mod agents;
mod dlq;
mod gitops;
mod harness;
mod health;
mod plane;
mod profiles;
mod recovery;
mod replay;
mod rotation;
mod scenarios;
mod security;
mod unanswered;
mod update_feed;

use switchyard_test_support::tls;
