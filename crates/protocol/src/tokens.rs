//! API tokens and their roles (`/v1/tokens`, `GET /v1/whoami`; docs/security.md, "Roles and
//! tokens").

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// What a token may do. `viewer` < `operator` < `admin`; `edge` is apart: it may call the edge
/// protocol (`/v1/edges/…`) and nothing else. An `admin` may do everything, the edge
/// protocol included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Reads: resources, events, deliveries, the DLQ, replays, metrics, diagnostics.
    Viewer,
    /// Reads, and what an on-call operator does to traffic: event ingest, replays and their
    /// cancellation, endpoint enable/disable, target tests, signing-secret and
    /// client-certificate rotation, requeues and DLQ recounts.
    Operator,
    /// Everything: creating, changing and deleting endpoints, targets and flows,
    /// retirements, and tokens.
    Admin,
    /// The edge protocol only: leases and attempt reports of `/v1/edges/{name}/…`.
    Edge,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::Viewer, Role::Operator, Role::Admin, Role::Edge];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Viewer => "viewer",
            Self::Operator => "operator",
            Self::Admin => "admin",
            Self::Edge => "edge",
        }
    }

    /// Whether a token of this role may call a route that needs `needed`.
    pub fn allows(self, needed: Role) -> bool {
        match (self, needed) {
            (Self::Admin, _) => true,
            (Self::Edge, needed) => needed == Self::Edge,
            (_, Self::Edge) => false,
            (Self::Operator, needed) => needed != Self::Admin,
            (Self::Viewer, needed) => needed == Self::Viewer,
        }
    }

    pub fn parse(text: &str) -> Option<Role> {
        Self::ALL.into_iter().find(|r| r.as_str() == text)
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The body of `POST /v1/tokens`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateTokenRequest {
    /// Who or what holds it (`ci-deploy`, `alice`): a resource name, unique among the
    /// tenant's live tokens.
    pub name: String,
    pub role: Role,
}

/// A token as listed: never its value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TokenInfo {
    /// `tok_…`: what `DELETE /v1/tokens/{id}` takes.
    pub id: String,
    pub name: String,
    pub role: Role,
    pub created_at: DateTime<Utc>,
    /// When it last authenticated a request, to the minute (absent: never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_used_at: Option<DateTime<Utc>>,
    /// When it was revoked (only in the answer of the revocation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<DateTime<Utc>>,
}

/// 201 from `POST /v1/tokens`: the only answer that carries the token's value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CreatedToken {
    #[serde(flatten)]
    pub token: TokenInfo,
    /// `sy_…`: the bearer token. Shown here once; the server keeps only its SHA-256.
    pub value: String,
}

/// `GET /v1/tokens`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TokenList {
    pub items: Vec<TokenInfo>,
}

/// `GET /v1/whoami`: who the request's token is, so a console can disable what it may not
/// do instead of letting the server refuse it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Caller {
    pub tenant: String,
    pub role: Role,
    /// The token's id; absent for a token given at start-up (`--tenant NAME:TOKEN`), which
    /// is an admin token without an id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_name: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_order_and_edge_apart() {
        use Role::*;
        let allowed: Vec<(Role, Role)> = Role::ALL
            .into_iter()
            .flat_map(|r| Role::ALL.into_iter().map(move |n| (r, n)))
            .filter(|(r, n)| r.allows(*n))
            .collect();
        assert_eq!(
            allowed,
            vec![
                (Viewer, Viewer),
                (Operator, Viewer),
                (Operator, Operator),
                (Admin, Viewer),
                (Admin, Operator),
                (Admin, Admin),
                (Admin, Edge),
                (Edge, Edge),
            ]
        );
        for r in Role::ALL {
            assert_eq!(Role::parse(r.as_str()), Some(r));
            assert_eq!(serde_json::to_value(r).unwrap(), r.as_str());
        }
    }
}
