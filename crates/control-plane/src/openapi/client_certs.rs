//! OpenAPI operations and schemas of a target's client certificates (mTLS) (src/client_certs/).

use switchyard_protocol::{
    ActivateCertificateResponse, CertificateExpiry, CertificateState, ClientCertificateInfo,
    ClientCertificateList, UploadCertificateRequest,
};
use utoipa::openapi::ComponentsBuilder;
use utoipa::openapi::path::Operation;
use utoipa::{PartialSchema, ToSchema};

use super::{Op, operation, path_param};

/// `GET /v1/targets/{name}/client-certificates`.
pub fn list() -> Operation {
    operation(Op {
        summary: "A target's client certificates (mTLS), oldest first: id, SHA-256 \
                  fingerprint, subject, not_after and state (staged, active, \
                  retired); never a key"
            .into(),
        tag: "targets",
        keyed: false,
        if_match: false,
        params: vec![path_param("name")],
        body: None,
        ok: (
            "200",
            "The certificates",
            Some("ClientCertificateList".into()),
        ),
        errors: &[("404", "not_found: no such target")],
    })
}

/// `PUT /v1/targets/{name}/client-certificates/{id}`.
pub fn upload() -> Operation {
    operation(Op {
        summary: "Upload a client certificate chain (PEM, leaf first) and its key, \
                  staged (idempotent by the id: 201 new, 200 the same certificate \
                  and key again, 422 certificate_reused otherwise). Checked: it \
                  parses, the chain is in order, nothing in it has expired, the key \
                  is the leaf's (400 validation_failed names the field). The key is \
                  stored sealed and never returned"
            .into(),
        tag: "targets",
        keyed: false,
        if_match: false,
        params: vec![path_param("name"), path_param("id")],
        body: Some("UploadCertificateRequest"),
        ok: (
            "201",
            "Staged (200: the same upload again)",
            Some("ClientCertificateInfo".into()),
        ),
        errors: &[
            ("404", "not_found: no such target"),
            ("422", "certificate_reused"),
        ],
    })
}

/// `POST /v1/targets/{name}/client-certificates/{id}/activate`.
pub fn activate() -> Operation {
    operation(Op {
        summary: "Make a client certificate the one every delivery and test of the \
                  target presents; the one it replaces is retired, and can be \
                  activated again to roll back until it expires"
            .into(),
        tag: "targets",
        keyed: true,
        if_match: false,
        params: vec![path_param("name"), path_param("id")],
        body: None,
        ok: (
            "200",
            "The active certificate, the one it replaced, and all of them",
            Some("ActivateCertificateResponse".into()),
        ),
        errors: &[
            ("404", "not_found: no such target or certificate"),
            ("409", "certificate_expired"),
        ],
    })
}

pub fn components(components: ComponentsBuilder) -> ComponentsBuilder {
    components
        .schema(
            UploadCertificateRequest::name(),
            UploadCertificateRequest::schema(),
        )
        .schema(CertificateState::name(), CertificateState::schema())
        .schema(
            ClientCertificateInfo::name(),
            ClientCertificateInfo::schema(),
        )
        .schema(
            ClientCertificateList::name(),
            ClientCertificateList::schema(),
        )
        .schema(
            ActivateCertificateResponse::name(),
            ActivateCertificateResponse::schema(),
        )
        .schema(CertificateExpiry::name(), CertificateExpiry::schema())
}
