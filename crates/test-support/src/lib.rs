//! Test support shared by the crates' integration tests (and the desktop's WebDriver
//! scenarios), so that each helper exists once: the webhook receiver ([`receiver`]), a
//! PostgreSQL database of its own per test ([`postgres`]) and certificates made in the test
//! with a TLS receiver requiring them ([`tls`]), the tests' control plane ([`plane`]) and
//! tauri-driver's start and stop ([`driver`]). A dev-dependency only: no shipped binary links it.

pub mod driver;
pub mod plane;
pub mod postgres;
pub mod receiver;
pub mod tls;
