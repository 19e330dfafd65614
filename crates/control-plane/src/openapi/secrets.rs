//! OpenAPI operations and schemas of a target's signing secrets and their rotation
//! (src/resources/secrets.rs).

use switchyard_protocol::{
    ExpireSecretResponse, ExpiringSecret, NewSigningSecret, RotateSecretRequest,
    RotateSecretResponse, RotationStatus, SigningSecretList,
};
use utoipa::openapi::ComponentsBuilder;
use utoipa::openapi::path::Operation;
use utoipa::{PartialSchema, ToSchema};

use super::{Op, operation, path_param};

/// `GET /v1/targets/{name}/secrets`.
pub fn list() -> Operation {
    operation(Op {
        summary: "A target's signing secrets, oldest first: ids, created and expiry \
                  times, never the values (an expired one is listed until the \
                  next rotation)"
            .into(),
        tag: "targets",
        keyed: false,
        if_match: false,
        params: vec![path_param("name")],
        body: None,
        ok: ("200", "The secrets", Some("SigningSecretList".into())),
        errors: &[("404", "not_found: no such target")],
    })
}

/// `POST /v1/targets/{name}/secrets/rotate`.
pub fn rotate() -> Operation {
    operation(Op {
        summary: "Add a new signing secret and schedule every older valid one to \
                  expire after the overlap; the new value is shown in this response \
                  (and its keyed replays) only, stored sealed"
            .into(),
        tag: "targets",
        keyed: true,
        if_match: false,
        params: vec![path_param("name")],
        body: Some("RotateSecretRequest"),
        ok: (
            "201",
            "The new secret with its value, and the older ones' expiry",
            Some("RotateSecretResponse".into()),
        ),
        errors: &[
            ("404", "not_found: no such target"),
            (
                "409",
                "rotation_in_progress (an older secret is still in its overlap; \
                 expire it or pass force: true) or secret_limit_reached (10 valid \
                 secrets)",
            ),
        ],
    })
}

/// `POST /v1/targets/{name}/secrets/{id}/expire`.
pub fn expire() -> Operation {
    operation(Op {
        summary: "Expire one signing secret now: the older one to promote the new, \
                  the new one to roll back (the older then keeps signing for good)"
            .into(),
        tag: "targets",
        keyed: true,
        if_match: false,
        params: vec![path_param("name"), path_param("id")],
        body: None,
        ok: (
            "200",
            "The expired secret and the target's secrets afterwards",
            Some("ExpireSecretResponse".into()),
        ),
        errors: &[
            ("404", "not_found: no such target or secret"),
            (
                "409",
                "last_secret (the target's only valid secret) or secret_expired",
            ),
        ],
    })
}

pub fn components(components: ComponentsBuilder) -> ComponentsBuilder {
    components
        .schema(SigningSecretList::name(), SigningSecretList::schema())
        .schema(RotateSecretRequest::name(), RotateSecretRequest::schema())
        .schema(RotateSecretResponse::name(), RotateSecretResponse::schema())
        .schema(NewSigningSecret::name(), NewSigningSecret::schema())
        .schema(ExpiringSecret::name(), ExpiringSecret::schema())
        .schema(ExpireSecretResponse::name(), ExpireSecretResponse::schema())
        .schema(RotationStatus::name(), RotationStatus::schema())
}
