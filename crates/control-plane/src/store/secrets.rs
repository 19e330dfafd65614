//! Webhook signing secrets of targets.

use async_trait::async_trait;

use super::StoreError;

/// A webhook signing secret of a target.
#[derive(Debug, Clone, PartialEq)]
pub struct SigningSecretRow {
    pub id: String,
    pub secret: String,
    pub created_at: i64,
    pub expires_at: Option<i64>,
}

#[async_trait]
pub trait SecretStore {
    /// The values of the target's secrets that have not expired at `now`, oldest first.
    async fn active_secrets(
        &self,
        tenant: &str,
        target: &str,
        now: i64,
    ) -> Result<Vec<String>, StoreError>;
}

#[async_trait]
pub trait SecretTx {
    async fn insert_signing_secret(
        &mut self,
        tenant: &str,
        target: &str,
        secret: &SigningSecretRow,
    ) -> Result<(), StoreError>;

    async fn delete_signing_secrets(
        &mut self,
        tenant: &str,
        target: &str,
    ) -> Result<(), StoreError>;
}
