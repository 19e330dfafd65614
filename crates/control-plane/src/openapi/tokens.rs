//! OpenAPI operations and schemas of API tokens and `GET /v1/whoami` (src/auth/tokens.rs).

use switchyard_protocol::{Caller, CreateTokenRequest, CreatedToken, Role, TokenInfo, TokenList};
use utoipa::openapi::ComponentsBuilder;
use utoipa::openapi::path::Operation;
use utoipa::{PartialSchema, ToSchema};

use super::{Op, operation, path_param};

/// `POST /v1/tokens`.
pub fn create() -> Operation {
    operation(Op {
        summary: "Make a token of a role (viewer, operator, admin, edge) for this tenant; \
                  its value is in this answer (and its keyed replays) only, and the \
                  server keeps only its SHA-256"
            .into(),
        tag: "tokens",
        keyed: true,
        if_match: false,
        params: vec![],
        body: Some("CreateTokenRequest"),
        ok: (
            "201",
            "The token, with its value",
            Some("CreatedToken".into()),
        ),
        errors: &[("409", "name_taken: a live token has the name")],
    })
}

/// `GET /v1/tokens`.
pub fn list() -> Operation {
    operation(Op {
        summary: "This tenant's live tokens, oldest first: id, name, role, created and \
                  last used (to the minute); never a value. Tokens given at start-up \
                  (--tenant) are not listed"
            .into(),
        tag: "tokens",
        keyed: false,
        if_match: false,
        params: vec![],
        body: None,
        ok: ("200", "The tokens", Some("TokenList".into())),
        errors: &[],
    })
}

/// `DELETE /v1/tokens/{id}`.
pub fn revoke() -> Operation {
    operation(Op {
        summary: "Revoke a token: from this answer on, every replica refuses it (401)".into(),
        tag: "tokens",
        keyed: true,
        if_match: false,
        params: vec![path_param("id")],
        body: None,
        ok: ("200", "The revoked token", Some("TokenInfo".into())),
        errors: &[("404", "not_found: no live token has the id")],
    })
}

/// `GET /v1/whoami`.
pub fn whoami() -> Operation {
    operation(Op {
        summary: "Who the request's token is: tenant, role, and the token's id and name \
                  (none for a start-up token)"
            .into(),
        tag: "tokens",
        keyed: false,
        if_match: false,
        params: vec![],
        body: None,
        ok: ("200", "The caller", Some("Caller".into())),
        errors: &[],
    })
}

pub fn components(components: ComponentsBuilder) -> ComponentsBuilder {
    components
        .schema(Role::name(), Role::schema())
        .schema(CreateTokenRequest::name(), CreateTokenRequest::schema())
        .schema(CreatedToken::name(), CreatedToken::schema())
        .schema(TokenInfo::name(), TokenInfo::schema())
        .schema(TokenList::name(), TokenList::schema())
        .schema(Caller::name(), Caller::schema())
}
