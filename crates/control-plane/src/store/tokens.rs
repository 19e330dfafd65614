//! API tokens: the role-bearing bearer tokens of `/v1/tokens` (src/auth/). Only a token's
//! SHA-256 is stored; a request's token is found by it ([`TokenStore::token_by_hash`]).

use async_trait::async_trait;
use switchyard_protocol::Role;

use super::StoreError;

/// A live token as stored: never its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRow {
    pub tenant: String,
    pub id: String,
    pub name: String,
    pub role: Role,
    pub created_at: i64,
    pub last_used_at: Option<i64>,
    pub revoked_at: Option<i64>,
}

/// A token to create: its SHA-256, not its value.
#[derive(Debug, Clone)]
pub struct NewToken<'a> {
    pub tenant: &'a str,
    pub id: &'a str,
    pub name: &'a str,
    pub role: Role,
    pub sha256: &'a [u8],
    pub now: i64,
}

/// What a creation did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenInsert {
    Created(TokenRow),
    /// A live token of the tenant has the name.
    NameTaken,
}

#[async_trait]
pub trait TokenStore {
    /// The live (unrevoked) token whose SHA-256 this is, of any tenant.
    async fn token_by_hash(&self, sha256: &[u8]) -> Result<Option<TokenRow>, StoreError>;

    /// The tenant's live tokens, oldest first.
    async fn list_tokens(&self, tenant: &str) -> Result<Vec<TokenRow>, StoreError>;

    /// Records that the token authenticated a request at `now`, unless it did so less than
    /// `coarse_ms` ago (so a busy token is written once a minute, not on every request).
    async fn touch_token(&self, id: &str, now: i64, coarse_ms: i64) -> Result<(), StoreError>;
}

/// What a keyed request does to tokens, inside its unit of work.
#[async_trait]
pub trait TokenTx {
    async fn insert_token(&mut self, new: &NewToken<'_>) -> Result<TokenInsert, StoreError>;

    /// Revokes the tenant's live token `id`; `None` when there is none (unknown or already
    /// revoked). One guarded statement: of two revocations at once, one revokes.
    async fn revoke_token(
        &mut self,
        tenant: &str,
        id: &str,
        now: i64,
    ) -> Result<Option<TokenRow>, StoreError>;
}
