//! Client certificates (mTLS) of targets: upload (idempotent by the client's id), list,
//! activation (the previously active one retires), and the identity a delivery presents.
//!
//! The private key is sealed on its way in (`client_key_aad`: bound to tenant, target and id)
//! and opened only for [`ClientIdentity`], which the HTTP client turns into a TLS identity.
//! At most one certificate of a target is active: the activation is guarded (`not_after >
//! now`), and a unique partial index holds it whatever races.

use async_trait::async_trait;
use switchyard_protocol::CertificateState;

use super::StoreError;

/// A certificate to store, key included (sealed on its way in).
#[derive(Clone, PartialEq, Eq)]
pub struct ClientCertRow {
    pub id: String,
    /// The chain, PEM, leaf first.
    pub certificate_pem: String,
    pub private_key_pem: String,
    /// SHA-256 of the chain's DER and the key's DER: what makes a second upload the same one.
    pub request_sha256: Vec<u8>,
    pub fingerprint: String,
    pub subject: String,
    pub not_after: i64,
    pub created_at: i64,
}

// The key never reaches a log line through `{:?}`.
impl std::fmt::Debug for ClientCertRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientCertRow")
            .field("id", &self.id)
            .field("fingerprint", &self.fingerprint)
            .field("private_key_pem", &"<redacted>")
            .finish_non_exhaustive()
    }
}

/// A certificate as the API lists it: no key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertMeta {
    pub id: String,
    pub fingerprint: String,
    pub subject: String,
    pub not_after: i64,
    pub state: CertificateState,
    pub created_at: i64,
}

/// What a TLS handshake presents: the chain and its key.
#[derive(Clone, PartialEq, Eq)]
pub struct ClientIdentity {
    pub id: String,
    pub fingerprint: String,
    pub certificate_pem: String,
    pub private_key_pem: String,
    pub not_after: i64,
}

impl ClientIdentity {
    /// Whether the certificate may still be presented at `now` (unix ms).
    pub fn valid_at(&self, now: i64) -> bool {
        self.not_after > now
    }
}

// The key never reaches a log line through `{:?}`.
impl std::fmt::Debug for ClientIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientIdentity")
            .field("id", &self.id)
            .field("fingerprint", &self.fingerprint)
            .field("private_key_pem", &"<redacted>")
            .field("not_after", &self.not_after)
            .finish_non_exhaustive()
    }
}

/// What an upload did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Upload {
    /// Stored, `staged`.
    Created(CertMeta),
    /// The id was taken already; `same` when by this very certificate and key.
    Exists {
        meta: CertMeta,
        same: bool,
    },
    TargetMissing,
}

/// What an activation did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Activation {
    /// `certificate` is active now; `previous` (if any) retired; `items` all of them after.
    Activated {
        certificate: CertMeta,
        previous: Option<String>,
        items: Vec<CertMeta>,
    },
    TargetMissing,
    CertificateMissing,
    /// Its `not_after` has passed: it can no longer be presented.
    Expired,
}

#[async_trait]
pub trait ClientCertStore {
    /// Every certificate of the target, oldest first, without keys.
    async fn list_client_certificates(
        &self,
        tenant: &str,
        target: &str,
    ) -> Result<Vec<CertMeta>, StoreError>;

    /// One certificate with its key, in any state; `None` when the target has no such id.
    async fn client_identity(
        &self,
        tenant: &str,
        target: &str,
        id: &str,
    ) -> Result<Option<ClientIdentity>, StoreError>;

    /// The target's active certificate with its key, if it has one.
    async fn active_client_identity(
        &self,
        tenant: &str,
        target: &str,
    ) -> Result<Option<ClientIdentity>, StoreError>;

    /// Stores a certificate `staged` (one guarded insert: `ON CONFLICT DO NOTHING`, only
    /// while the target exists), or tells what holds the id.
    async fn upload_client_certificate(
        &self,
        tenant: &str,
        target: &str,
        row: &ClientCertRow,
    ) -> Result<Upload, StoreError>;
}

#[async_trait]
pub trait ClientCertTx {
    /// Makes `id` the target's active certificate at `now` (see [`Activation`]); activating
    /// the active one again changes nothing.
    async fn activate_client_certificate(
        &mut self,
        tenant: &str,
        target: &str,
        id: &str,
        now: i64,
    ) -> Result<Activation, StoreError>;

    /// Removes the target's certificates (the target is deleted).
    async fn delete_client_certificates(
        &mut self,
        tenant: &str,
        target: &str,
    ) -> Result<(), StoreError>;
}

/// Parses a stored state.
pub(crate) fn state(text: &str) -> Result<CertificateState, StoreError> {
    CertificateState::parse(text)
        .ok_or_else(|| super::corrupt(format!("client certificate state {text:?}")))
}

/// The columns [`meta`] reads, in order.
pub(crate) const META_COLUMNS: &str = "id, fingerprint, subject, not_after, state, created_at";

pub(crate) type MetaTuple = (String, String, String, i64, String, i64);

/// [`MetaTuple`] and the row's `request_sha256`.
pub(crate) type MetaShaTuple = (String, String, String, i64, String, i64, Vec<u8>);

pub(crate) fn meta(row: MetaTuple) -> Result<CertMeta, StoreError> {
    let (id, fingerprint, subject, not_after, st, created_at) = row;
    Ok(CertMeta {
        id,
        fingerprint,
        subject,
        not_after,
        state: state(&st)?,
        created_at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_output_never_shows_a_key() {
        let identity = ClientIdentity {
            id: "c1".into(),
            fingerprint: "ab".into(),
            certificate_pem: String::new(),
            private_key_pem: "-----BEGIN PRIVATE KEY-----c2VjcmV0".into(),
            not_after: 10,
        };
        let row = ClientCertRow {
            id: "c1".into(),
            certificate_pem: String::new(),
            private_key_pem: identity.private_key_pem.clone(),
            request_sha256: vec![],
            fingerprint: "ab".into(),
            subject: "CN=x".into(),
            not_after: 10,
            created_at: 1,
        };
        for shown in [format!("{identity:?}"), format!("{row:?}")] {
            assert!(
                shown.contains("c1") && !shown.contains("c2VjcmV0"),
                "{shown}"
            );
        }
        assert!(identity.valid_at(9) && !identity.valid_at(10));
    }
}
