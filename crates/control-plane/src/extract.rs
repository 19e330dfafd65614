//! Request extractors: the authenticated tenant, a JSON body with problem+json rejections,
//! and `If-Match`.

use std::collections::HashMap;

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::{HeaderMap, header, request::Parts};
use serde_json::Value;
use sha2::{Digest, Sha256};
use switchyard_protocol::strict_json::StrictJsonError;

use crate::AppState;
use crate::error::ApiError;

/// Bearer tokens of the tenants this server serves. Only SHA-256 digests are kept.
#[derive(Debug, Default, Clone)]
pub struct Tenants {
    by_token_hash: HashMap<[u8; 32], String>,
}

impl Tenants {
    pub fn add(&mut self, tenant: &str, token: &str) {
        self.by_token_hash
            .insert(Sha256::digest(token.as_bytes()).into(), tenant.to_owned());
    }

    /// [`Self::add`], refusing a token another tenant already holds (it would silently make
    /// the two one tenant: whoever holds it sees the later tenant's data). The message names
    /// the tenants, never the token.
    pub fn try_add(&mut self, tenant: &str, token: &str) -> Result<(), String> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        match self.by_token_hash.get(&digest) {
            Some(holder) if holder != tenant => Err(format!(
                "tenants {holder:?} and {tenant:?} are given the same token: each token must belong to one tenant"
            )),
            _ => {
                self.by_token_hash.insert(digest, tenant.to_owned());
                Ok(())
            }
        }
    }

    pub fn lookup(&self, token: &str) -> Option<&str> {
        self.lookup_digest(&Sha256::digest(token.as_bytes()).into())
    }

    /// [`Self::lookup`] by the token's SHA-256.
    pub fn lookup_digest(&self, digest: &[u8; 32]) -> Option<&str> {
        self.by_token_hash.get(digest).map(String::as_str)
    }

    pub fn is_empty(&self) -> bool {
        self.by_token_hash.is_empty()
    }

    /// The tenants' names, sorted, each once.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.by_token_hash.values().cloned().collect();
        names.sort();
        names.dedup();
        names
    }

    /// Parses `NAME:TOKEN`. The tenant name follows the resource-name rules.
    pub fn parse_entry(entry: &str) -> Result<(String, String), String> {
        let (name, token) = entry
            .trim()
            .split_once(':')
            .ok_or_else(|| "a tenant is NAME:TOKEN".to_owned())?;
        switchyard_protocol::validate_name(name)
            .map_err(|e| format!("tenant name {name:?} {e}"))?;
        if token.len() < 8 {
            return Err(format!(
                "the token of tenant {name:?} must be at least 8 characters"
            ));
        }
        Ok((name.to_owned(), token.to_owned()))
    }
}

/// The token of an `Authorization: Bearer …` header, if there is one.
pub fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .map(str::trim)
}

/// The tenant whose bearer token authenticated this request, once its role was found to
/// allow the route ([`crate::auth::roles::needed`]): 401 without a known token, 403
/// `forbidden_role` when the role falls short. Every authenticated handler takes it, so no
/// handler can forget the role check.
pub struct Tenant(pub String);

impl FromRequestParts<AppState> for Tenant {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &AppState) -> Result<Self, ApiError> {
        let caller = parts
            .extensions
            .get::<crate::auth::Caller>()
            .ok_or(ApiError::Unauthorized)?;
        // A handler outside the router (none today) has no matched path: its reads need a
        // viewer and its writes an admin (`roles::needed` of an unlisted route).
        let template = parts
            .extensions
            .get::<axum::extract::MatchedPath>()
            .map_or("", |p| p.as_str());
        let needed = crate::auth::roles::needed(&parts.method, template)
            .unwrap_or(switchyard_protocol::Role::Viewer);
        if !caller.role.allows(needed) {
            return Err(ApiError::ForbiddenRole {
                role: caller.role,
                needed,
                method: parts.method.to_string(),
                route: template.to_owned(),
            });
        }
        Ok(Tenant(caller.tenant.clone()))
    }
}

/// Largest accepted request body by default (`--max-body-bytes`, [`crate::limits::Limits`]).
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// A JSON request body. Wrong media type: 415; too large: 413; not JSON, or an object
/// repeating a key: 400.
pub struct JsonBody(pub Value);

impl FromRequest<AppState> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, ApiError> {
        let json_type = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .map(|v| {
                let v = v.trim().to_ascii_lowercase();
                v == "application/json" || (v.starts_with("application/") && v.ends_with("+json"))
            });
        if json_type != Some(true) {
            return Err(ApiError::UnsupportedMediaType);
        }
        let bytes = Bytes::from_request(req, state).await.map_err(|rejection| {
            if rejection.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::PayloadTooLarge {
                    limit: state.limits.max_body_bytes,
                }
            } else {
                ApiError::validation("body", rejection.body_text())
            }
        })?;
        // Strict: a repeated key is refused, naming it, rather than the last one winning.
        let value = switchyard_protocol::strict_json::from_slice(&bytes).map_err(|e| match &e {
            StrictJsonError::Syntax(_) => ApiError::validation("body", e.to_string()),
            StrictJsonError::DuplicateKey { path } => ApiError::validation(
                path.clone(),
                "appears more than once in its object; duplicate keys are refused",
            ),
        })?;
        Ok(JsonBody(value))
    }
}

/// A parsed `If-Match` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IfMatch {
    /// `*`: any current version.
    Any,
    /// One or more strong entity tags, i.e. versions.
    Versions(Vec<i64>),
}

impl IfMatch {
    /// `None` when the header is absent.
    pub fn from_headers(headers: &HeaderMap) -> Result<Option<(IfMatch, String)>, ApiError> {
        let Some(raw) = headers.get(header::IF_MATCH) else {
            return Ok(None);
        };
        let text = raw
            .to_str()
            .map_err(|_| ApiError::validation("If-Match", "must be ASCII"))?
            .trim();
        if text == "*" {
            return Ok(Some((IfMatch::Any, text.to_owned())));
        }
        let mut versions = Vec::new();
        for tag in text.split(',').map(str::trim) {
            let version = tag
                .strip_prefix('"')
                .and_then(|t| t.strip_suffix('"'))
                .and_then(|t| t.parse::<i64>().ok())
                .ok_or_else(|| {
                    ApiError::validation(
                        "If-Match",
                        format!("{tag:?} is not a version entity tag like \"3\""),
                    )
                })?;
            versions.push(version);
        }
        Ok(Some((IfMatch::Versions(versions), text.to_owned())))
    }

    pub fn matches(&self, current: i64) -> bool {
        match self {
            Self::Any => true,
            Self::Versions(versions) => versions.contains(&current),
        }
    }
}

/// Checks an optional precondition against the current version (`None`: absent resource).
pub fn check_precondition(
    if_match: Option<&(IfMatch, String)>,
    current: Option<i64>,
) -> Result<(), ApiError> {
    match (if_match, current) {
        (None, _) => Ok(()),
        (Some((cond, _)), Some(v)) if cond.matches(v) => Ok(()),
        (Some((_, raw)), current) => Err(ApiError::VersionMismatch {
            expected: raw.clone(),
            current,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::IF_MATCH, value.parse().unwrap());
        h
    }

    #[test]
    fn if_match_forms() {
        assert_eq!(
            IfMatch::from_headers(&headers("\"3\"")).unwrap().unwrap().0,
            IfMatch::Versions(vec![3])
        );
        assert_eq!(
            IfMatch::from_headers(&headers("\"1\", \"2\""))
                .unwrap()
                .unwrap()
                .0,
            IfMatch::Versions(vec![1, 2])
        );
        assert_eq!(
            IfMatch::from_headers(&headers("*")).unwrap().unwrap().0,
            IfMatch::Any
        );
        assert!(IfMatch::from_headers(&headers("3")).is_err());
        assert!(IfMatch::from_headers(&headers("W/\"3\"")).is_err());
        assert!(IfMatch::from_headers(&HeaderMap::new()).unwrap().is_none());
    }

    #[test]
    fn tenant_entries() {
        assert!(Tenants::parse_entry("acme:s3cret-token").is_ok());
        assert!(Tenants::parse_entry("acme").is_err());
        assert!(Tenants::parse_entry("Acme:s3cret-token").is_err());
        assert!(Tenants::parse_entry("acme:short").is_err());
        let mut t = Tenants::default();
        t.add("acme", "s3cret-token");
        assert_eq!(t.lookup("s3cret-token"), Some("acme"));
        assert_eq!(t.lookup("other"), None);
    }
}
