//! Sealed values at rest (signing secrets, client-certificate keys, stored responses): re-sealing under the current
//! main key, and the start-up check that the key opens what the database holds.

use async_trait::async_trait;

use super::StoreError;

#[async_trait]
pub trait SealStore {
    /// Re-seals up to `limit` values not sealed under the current main key (written before
    /// sealing existed, or under an older key), each with one guarded update, so it can run
    /// while the server serves and be interrupted and resumed at any point. Returns how many
    /// it re-sealed: 0 when every value is under the current key.
    async fn reseal_batch(&self, limit: u32) -> Result<u64, StoreError>;

    /// Opens one sealed signing secret, one client-certificate key and one stored response, if
    /// there are any: an error when the main key does not match the database.
    async fn check_sealed(&self) -> Result<(), StoreError>;
}

/// A text column of values each sealed under (tenant, target, id): what re-sealing reads and
/// guards in the same way for signing secrets and client-certificate keys.
pub(crate) struct SealedText {
    pub table: &'static str,
    pub column: &'static str,
    pub aad: fn(&str, &str, &str) -> Vec<u8>,
}

pub(crate) const SEALED_TEXT: [SealedText; 2] = [
    SealedText {
        table: "signing_secrets",
        column: "secret",
        aad: crate::sealing::secret_aad,
    },
    SealedText {
        table: "client_certificates",
        column: "private_key",
        aad: crate::sealing::client_key_aad,
    },
];
