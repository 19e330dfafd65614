//! Signing secrets as the UI sees them: the value of a new target's secret, shown once.

use serde::{Deserialize, Serialize};
use switchyard_core::shown_once::ShownSecret;
use ts_rs::TS;

/// A secret value to show once, with a copy button; the UI keeps it only while the dialog
/// is open (crates/core/src/shown_once.rs).
#[derive(Clone, Serialize, Deserialize, TS)]
pub struct ShownSecretView {
    pub target: String,
    pub secret_id: Option<String>,
    pub value: String,
}

impl From<ShownSecret> for ShownSecretView {
    fn from(s: ShownSecret) -> Self {
        Self {
            target: s.target,
            secret_id: s.secret_id,
            value: s.value,
        }
    }
}
