//! Webhook signing secrets of targets, and their rotation.
//!
//! A secret is valid while `expires_at` is null or later than now; the signer and the API
//! judge it with the same comparison (`SigningKey::valid_at`, `expires_at > now` in SQL), so
//! the expiry the API shows is the one deliveries obey. Rotations and expiries of one
//! target serialise on the target's resource row (PostgreSQL: `SELECT … FOR UPDATE`; SQLite:
//! its one writer), and every write after that lock is itself guarded, so two racing rotates
//! make one new secret and two racing expiries never leave a target without a valid secret.

use async_trait::async_trait;

use super::StoreError;

/// A webhook signing secret of a target, value included (it is sealed on its way in).
#[derive(Clone, PartialEq)]
pub struct SigningSecretRow {
    pub id: String,
    pub secret: String,
    pub created_at: i64,
    pub expires_at: Option<i64>,
}

// The value never reaches a log line through `{:?}` (a `NewRotation` holds one).
impl std::fmt::Debug for SigningSecretRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningSecretRow")
            .field("id", &self.id)
            .field("secret", &"<redacted>")
            .field("created_at", &self.created_at)
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

/// A secret as the API lists it: no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretMeta {
    pub id: String,
    pub created_at: i64,
    pub expires_at: Option<i64>,
}

/// A secret's value with the expiry the signer enforces.
#[derive(Clone, PartialEq, Eq)]
pub struct SigningKey {
    pub id: String,
    pub value: String,
    pub expires_at: Option<i64>,
}

impl SigningKey {
    /// Whether the secret still signs at `now` (unix ms): the same test as the SQL's.
    pub fn valid_at(&self, now: i64) -> bool {
        self.expires_at.is_none_or(|at| at > now)
    }
}

// The value never reaches a log line through `{:?}` (a claimed delivery holds its keys).
impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey")
            .field("id", &self.id)
            .field("value", &"<redacted>")
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

/// One rotation: add `secret`, and give every older valid secret `older_expire_at`.
#[derive(Debug)]
pub struct NewRotation<'a> {
    pub tenant: &'a str,
    pub target: &'a str,
    /// The new secret (`expires_at` is ignored: a new secret does not expire).
    pub secret: &'a SigningSecretRow,
    pub now: i64,
    /// When the older secrets stop signing: `now` + the overlap, or `now` when forced.
    pub older_expire_at: i64,
    /// Rotate even while an overlap is open.
    pub force: bool,
    /// The most valid secrets the target may hold (the new one included).
    pub limit: usize,
}

/// What a rotation did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rotation {
    /// The new secret is in; `previous` are the older ones with their new expiry.
    Rotated { previous: Vec<SecretMeta> },
    /// No such target (for this tenant).
    TargetMissing,
    /// An older secret is still in its overlap until `ends_at`, and the rotation was not forced.
    InProgress { ends_at: i64 },
    /// The target holds `limit` valid secrets already.
    LimitReached,
}

/// What expiring one secret did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expiry {
    /// `secret` expired now; `items` are the target's secrets afterwards. When it left only
    /// secrets that were due to expire (rolling back to the older secret during an
    /// overlap), their scheduled expiry was cancelled: a target is never left to lapse into
    /// having no secret.
    Expired {
        secret: SecretMeta,
        items: Vec<SecretMeta>,
    },
    TargetMissing,
    SecretMissing,
    AlreadyExpired,
    /// It is the target's only valid secret.
    LastSecret,
}

#[async_trait]
pub trait SecretStore {
    /// The target's secrets that have not expired at `now`, oldest first, with their expiry
    /// (the signer checks it again when it signs).
    async fn active_secrets(
        &self,
        tenant: &str,
        target: &str,
        now: i64,
    ) -> Result<Vec<SigningKey>, StoreError>;

    /// Every secret the target holds (expired ones until the next rotation prunes them),
    /// oldest first, without values.
    async fn list_signing_secrets(
        &self,
        tenant: &str,
        target: &str,
    ) -> Result<Vec<SecretMeta>, StoreError>;

    /// One secret with its value, expired or not; `None` when the target has no such id.
    async fn signing_secret(
        &self,
        tenant: &str,
        target: &str,
        id: &str,
    ) -> Result<Option<SigningKey>, StoreError>;
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

    /// Rotates the target's secrets (see [`Rotation`]). Secrets already expired at `now`
    /// are deleted first: they can never sign again.
    async fn rotate_signing_secret(
        &mut self,
        rotation: &NewRotation<'_>,
    ) -> Result<Rotation, StoreError>;

    /// Expires one secret at `now` (see [`Expiry`]).
    async fn expire_signing_secret(
        &mut self,
        tenant: &str,
        target: &str,
        id: &str,
        now: i64,
    ) -> Result<Expiry, StoreError>;
}

/// `status.rotation` from a target's secrets: an overlap is open while a secret has an
/// expiry still ahead of `now`; it ends when the last of those expires.
pub fn overlap_ends_at(secrets: &[SecretMeta], now: i64) -> Option<i64> {
    secrets
        .iter()
        .filter_map(|s| s.expires_at)
        .filter(|&at| at > now)
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_output_never_shows_a_value() {
        let row = SigningSecretRow {
            id: "sec_1".into(),
            secret: "whsec_c2VjcmV0".into(),
            created_at: 1,
            expires_at: None,
        };
        let key = SigningKey {
            id: "sec_1".into(),
            value: row.secret.clone(),
            expires_at: Some(5),
        };
        for shown in [format!("{row:?}"), format!("{key:?}")] {
            assert!(
                shown.contains("sec_1") && !shown.contains("c2VjcmV0"),
                "{shown}"
            );
        }
    }

    #[test]
    fn a_secret_signs_until_its_expiry_and_not_at_it() {
        let key = |expires_at| SigningKey {
            id: "sec_1".into(),
            value: String::new(),
            expires_at,
        };
        assert!(key(None).valid_at(i64::MAX));
        assert!(key(Some(10)).valid_at(9));
        assert!(!key(Some(10)).valid_at(10));
        let meta = |expires_at| SecretMeta {
            id: "sec_1".into(),
            created_at: 0,
            expires_at,
        };
        assert_eq!(
            overlap_ends_at(&[meta(None), meta(Some(10)), meta(Some(20))], 9),
            Some(20)
        );
        assert_eq!(overlap_ends_at(&[meta(None), meta(Some(10))], 10), None);
    }
}
