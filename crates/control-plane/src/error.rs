//! API errors and their problem+json form. Internals are logged, never sent.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use switchyard_protocol::headers::PROBLEM_JSON;
use switchyard_protocol::{ErrorCode, FieldError, Problem};

use crate::store::{StoreError, StoredResponse};

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    Validation(FieldError),
    /// A target URL names an address deliveries may not reach (`field` says which).
    #[error("{0}")]
    TargetAddressForbidden(FieldError),
    #[error("Idempotency-Key header is required on this request")]
    KeyMissing,
    #[error("Idempotency-Key header {0}")]
    KeyInvalid(&'static str),
    #[error("this Idempotency-Key was used with a different request")]
    KeyReused,
    #[error("a request with this Idempotency-Key is still in progress")]
    KeyInProgress { retry_after_s: u64 },
    #[error("missing or unknown bearer token")]
    Unauthorized,
    #[error("this token's role is {role}; {method} {route} needs a token of role {needed}")]
    ForbiddenRole {
        role: switchyard_protocol::Role,
        needed: switchyard_protocol::Role,
        method: String,
        route: String,
    },
    #[error("{kind} {name:?} does not exist")]
    NotFound { kind: &'static str, name: String },
    #[error("{kind} {name:?} already exists")]
    NameTaken { kind: &'static str, name: String },
    #[error("{kind} {name:?} is used by {}", used_by.join(", "))]
    InUse {
        kind: &'static str,
        name: String,
        used_by: Vec<String>,
    },
    #[error("{field} names {kind} {name:?}, which does not exist")]
    ReferenceMissing {
        field: &'static str,
        kind: &'static str,
        name: String,
    },
    #[error("If-Match {expected} does not match the current version ({})", current.map_or("absent".to_owned(), |v| format!("\"{v}\"")))]
    VersionMismatch {
        expected: String,
        current: Option<i64>,
    },
    #[error("endpoint {name:?} is disabled; enable it to accept events")]
    EndpointDisabled { name: String },
    #[error("replay session {id:?} exists with a different request; choose a new session id")]
    ReplaySessionReused { id: String },
    #[error("retirement {id:?} exists with a different request; choose a new retirement id")]
    RetirementReused { id: String },
    #[error("retirement {id:?} has deleted its resource; there is nothing left to cancel")]
    RetirementNotCancellable { id: String },
    #[error(
        "{kind} {name:?} is being retired; cancel its retirement first (GET /v1/retirements?state=…)"
    )]
    ResourceRetiring { kind: &'static str, name: String },
    #[error("request body exceeds {limit} bytes")]
    PayloadTooLarge { limit: usize },
    /// Over a per-tenant, per-replica rate limit (`crate::limits`); answered before any
    /// Idempotency-Key is claimed, so it is never stored.
    #[error(
        "this tenant is over its rate limit for {class} ({} on this server); retry after {retry_after_s} s",
        crate::limits::Rate::describe(*.per_s)
    )]
    RateLimited {
        class: &'static str,
        per_s: f64,
        retry_after_s: u64,
    },
    #[error("the request line and headers exceed {limit} bytes")]
    HeadersTooLarge { limit: usize },
    /// More header fields than the connection parses (`crate::head_errors::MAX_HEADERS`),
    /// however few bytes they take: the same 431 `headers_too_large`, saying why.
    #[error("the request has more than {limit} header fields")]
    TooManyHeaders { limit: usize },
    /// The whole-request timeout passed. The handler's task keeps running (see
    /// `run_to_completion` in src/server.rs), so a keyed write still completes and is stored.
    #[error(
        "the request did not complete within {after_s} s; a keyed write may still complete: retry with the same Idempotency-Key"
    )]
    TimedOut { after_s: u64 },
    #[error("Content-Type must be application/json")]
    UnsupportedMediaType,
    #[error("no such route")]
    RouteNotFound,
    #[error("method not allowed on this route")]
    MethodNotAllowed,
    /// A rotation while the previous one's overlap is open, not forced.
    #[error(
        "target {target:?} is rotating: its older secret signs until {ends_at}; expire it to promote the new one, or rotate with force: true"
    )]
    RotationInProgress { target: String, ends_at: String },
    #[error(
        "target {target:?} holds {limit} valid signing secrets, the most it may; expire one first"
    )]
    SecretLimitReached { target: String, limit: usize },
    #[error(
        "signing secret {id:?} is the last valid secret of target {target:?}; rotate before expiring it"
    )]
    LastSecret { target: String, id: String },
    #[error("signing secret {id:?} has expired")]
    SecretExpired { id: String },
    #[error("client certificate {id:?} has expired; upload a new one")]
    CertificateExpired { id: String },
    #[error("client certificate {id:?} exists with another certificate or key; choose a new id")]
    CertificateReused { id: String },
    /// A requeue of a delivery that is not stuck on the attempt it names.
    #[error(
        "delivery {id:?} is not stuck on attempt {attempt}: it is not in flight on that attempt, or its lease has not expired"
    )]
    DeliveryNotStuck { id: String, attempt: u32 },
    #[error("storage failure")]
    Store(#[from] StoreError),
    #[error("internal error: {0}")]
    Internal(String),
}

impl ApiError {
    pub fn validation(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Validation(FieldError::new(field, message))
    }

    pub fn status(&self) -> StatusCode {
        match self {
            Self::Validation(_)
            | Self::TargetAddressForbidden(_)
            | Self::KeyMissing
            | Self::KeyInvalid(_) => StatusCode::BAD_REQUEST,
            Self::KeyReused => StatusCode::UNPROCESSABLE_ENTITY,
            Self::KeyInProgress { .. } | Self::NameTaken { .. } | Self::InUse { .. } => {
                StatusCode::CONFLICT
            }
            Self::ReferenceMissing { .. } | Self::EndpointDisabled { .. } => StatusCode::CONFLICT,
            Self::RetirementNotCancellable { .. } | Self::ResourceRetiring { .. } => {
                StatusCode::CONFLICT
            }
            Self::RetirementReused { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            Self::RotationInProgress { .. }
            | Self::SecretLimitReached { .. }
            | Self::LastSecret { .. }
            | Self::SecretExpired { .. }
            | Self::CertificateExpired { .. }
            | Self::DeliveryNotStuck { .. } => StatusCode::CONFLICT,
            Self::CertificateReused { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            Self::ReplaySessionReused { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            Self::Unauthorized => StatusCode::UNAUTHORIZED,
            Self::ForbiddenRole { .. } => StatusCode::FORBIDDEN,
            Self::NotFound { .. } | Self::RouteNotFound => StatusCode::NOT_FOUND,
            Self::VersionMismatch { .. } => StatusCode::PRECONDITION_FAILED,
            Self::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::HeadersTooLarge { .. } | Self::TooManyHeaders { .. } => {
                StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE
            }
            Self::TimedOut { .. } => StatusCode::SERVICE_UNAVAILABLE,
            Self::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::Store(_) | Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Validation(_) => ErrorCode::ValidationFailed,
            Self::TargetAddressForbidden(_) => ErrorCode::TargetAddressForbidden,
            Self::KeyMissing => ErrorCode::IdempotencyKeyMissing,
            Self::KeyInvalid(_) => ErrorCode::IdempotencyKeyInvalid,
            Self::KeyReused => ErrorCode::IdempotencyKeyReused,
            Self::KeyInProgress { .. } => ErrorCode::IdempotencyKeyInProgress,
            Self::Unauthorized => ErrorCode::Unauthorized,
            Self::ForbiddenRole { .. } => ErrorCode::ForbiddenRole,
            Self::NotFound { .. } | Self::RouteNotFound => ErrorCode::NotFound,
            Self::NameTaken { .. } => ErrorCode::NameTaken,
            Self::InUse { .. } => ErrorCode::InUse,
            Self::ReferenceMissing { .. } => ErrorCode::ReferenceMissing,
            Self::EndpointDisabled { .. } => ErrorCode::EndpointDisabled,
            Self::ReplaySessionReused { .. } => ErrorCode::ReplaySessionReused,
            Self::RetirementReused { .. } => ErrorCode::RetirementReused,
            Self::RetirementNotCancellable { .. } => ErrorCode::RetirementNotCancellable,
            Self::ResourceRetiring { .. } => ErrorCode::ResourceRetiring,
            Self::RotationInProgress { .. } => ErrorCode::RotationInProgress,
            Self::SecretLimitReached { .. } => ErrorCode::SecretLimitReached,
            Self::LastSecret { .. } => ErrorCode::LastSecret,
            Self::SecretExpired { .. } => ErrorCode::SecretExpired,
            Self::CertificateExpired { .. } => ErrorCode::CertificateExpired,
            Self::CertificateReused { .. } => ErrorCode::CertificateReused,
            Self::DeliveryNotStuck { .. } => ErrorCode::DeliveryNotStuck,
            Self::VersionMismatch { .. } => ErrorCode::VersionMismatch,
            Self::PayloadTooLarge { .. } => ErrorCode::PayloadTooLarge,
            Self::RateLimited { .. } => ErrorCode::RateLimited,
            Self::HeadersTooLarge { .. } | Self::TooManyHeaders { .. } => {
                ErrorCode::HeadersTooLarge
            }
            Self::TimedOut { .. } => ErrorCode::Unavailable,
            Self::UnsupportedMediaType => ErrorCode::UnsupportedMediaType,
            Self::MethodNotAllowed => ErrorCode::MethodNotAllowed,
            Self::Store(_) | Self::Internal(_) => ErrorCode::Internal,
        }
    }

    /// Contract rule 7: responses produced once execution began are stored with the key;
    /// client mistakes caught before it (400, 401, 413, 415, 429) are not, so a corrected
    /// retry with the same key executes.
    pub fn is_stored(&self) -> bool {
        !matches!(self.status().as_u16(), 400 | 401 | 403 | 413 | 415 | 429)
    }

    fn title(&self) -> &'static str {
        match self {
            Self::Validation(_) => "Request validation failed",
            Self::TargetAddressForbidden(_) => "Target address forbidden",
            Self::KeyMissing => "Idempotency-Key missing",
            Self::KeyInvalid(_) => "Idempotency-Key invalid",
            Self::KeyReused => "Idempotency-Key reused with a different request",
            Self::KeyInProgress { .. } => "Request with this Idempotency-Key in progress",
            Self::Unauthorized => "Unauthorized",
            Self::ForbiddenRole { .. } => "Forbidden for this token's role",
            Self::NotFound { .. } | Self::RouteNotFound => "Not found",
            Self::NameTaken { .. } => "Name already taken",
            Self::InUse { .. } => "Resource in use",
            Self::ReferenceMissing { .. } => "Referenced resource missing",
            Self::EndpointDisabled { .. } => "Endpoint disabled",
            Self::ReplaySessionReused { .. } => "Replay session id reused with a different request",
            Self::RetirementReused { .. } => "Retirement id reused with a different request",
            Self::RetirementNotCancellable { .. } => "Retirement cannot be cancelled",
            Self::ResourceRetiring { .. } => "Resource is being retired",
            Self::RotationInProgress { .. } => "Rotation in progress",
            Self::SecretLimitReached { .. } => "Too many signing secrets",
            Self::LastSecret { .. } => "Last valid signing secret",
            Self::SecretExpired { .. } => "Signing secret expired",
            Self::CertificateExpired { .. } => "Client certificate expired",
            Self::CertificateReused { .. } => "Client certificate id reused",
            Self::DeliveryNotStuck { .. } => "Delivery not stuck",
            Self::VersionMismatch { .. } => "Version mismatch",
            Self::PayloadTooLarge { .. } => "Payload too large",
            Self::RateLimited { .. } => "Rate limit exceeded",
            Self::HeadersTooLarge { .. } | Self::TooManyHeaders { .. } => {
                "Request headers too large"
            }
            Self::TimedOut { .. } => "Request timed out",
            Self::UnsupportedMediaType => "Unsupported media type",
            Self::MethodNotAllowed => "Method not allowed",
            Self::Store(_) | Self::Internal(_) => "Internal server error",
        }
    }

    pub fn problem(&self) -> Problem {
        let status = self.status().as_u16();
        let mut problem = Problem::new(status, self.code(), self.title());
        problem.detail = Some(match self {
            // Never leak internals: they are logged with the request instead.
            Self::Store(_) | Self::Internal(_) => "the server failed; the failure is logged".into(),
            other => other.to_string(),
        });
        match self {
            Self::Validation(e) | Self::TargetAddressForbidden(e) => {
                problem.field = Some(e.field.clone());
            }
            Self::ReferenceMissing { field, .. } => problem.field = Some((*field).into()),
            Self::InUse { used_by, .. } => problem.used_by = Some(used_by.clone()),
            Self::VersionMismatch { current, .. } => problem.current_version = *current,
            _ => {}
        }
        problem
    }

    /// The exact response this error produces, as it would be stored and replayed.
    pub fn to_stored(&self) -> StoredResponse {
        if matches!(self, Self::Store(_) | Self::Internal(_)) {
            tracing::error!(error = %self, source = ?std::error::Error::source(self), "request failed");
        }
        let body = serde_json::to_vec(&self.problem()).expect("problems serialize");
        let mut headers = vec![("content-type".to_owned(), PROBLEM_JSON.to_owned())];
        match self {
            Self::KeyInProgress { retry_after_s } => {
                headers.push(("retry-after".into(), retry_after_s.to_string()));
            }
            Self::RateLimited { retry_after_s, .. } => {
                headers.push(("retry-after".into(), retry_after_s.to_string()));
            }
            Self::TimedOut { .. } => headers.push(("retry-after".into(), "1".into())),
            Self::Unauthorized => headers.push(("www-authenticate".into(), "Bearer".into())),
            _ => {}
        }
        StoredResponse {
            status: self.status().as_u16(),
            headers,
            body,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        self.to_stored().into_response()
    }
}

impl IntoResponse for StoredResponse {
    fn into_response(self) -> Response {
        let mut response = Response::new(axum::body::Body::from(self.body));
        *response.status_mut() =
            StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let headers = response.headers_mut();
        for (name, value) in self.headers {
            if let (Ok(name), Ok(value)) = (
                header::HeaderName::try_from(name),
                HeaderValue::try_from(value),
            ) {
                headers.append(name, value);
            }
        }
        response
    }
}
