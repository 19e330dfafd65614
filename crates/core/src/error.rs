//! The core's error type. Callers branch on [`CoreError::code`] and [`CoreError::class`];
//! messages never contain tokens. An error from the control plane keeps its problem body
//! (`code`, `field`, …), and a local storage or I/O error keeps its source.

use serde::{Deserialize, Serialize};
use switchyard_protocol::{ErrorCode, Problem};

/// The underlying cause of a storage or I/O error.
pub type Source = Box<dyn std::error::Error + Send + Sync + 'static>;

/// How a caller should treat an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// Trying again later may work (server unreachable, database busy).
    Retryable,
    /// The request itself is wrong, or the thing is absent; fix the input.
    Permanent,
    /// The local view and the server disagree; a person decides.
    Conflict,
}

#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    #[error("{what} not found")]
    NotFound { what: String },
    #[error("invalid {field}: {message}")]
    Invalid { field: String, message: String },
    #[error("profile {0:?} already exists")]
    ProfileExists(String),
    #[error(
        "profile {0:?} has no token in this process (the sandbox profile is only usable inside the desktop app that runs it)"
    )]
    NoToken(String),
    #[error("operation {id} is {state} and cannot be {action}")]
    WrongState {
        id: i64,
        state: String,
        action: &'static str,
    },
    #[error("cannot reach the control plane of profile {profile:?}: {message}")]
    Offline { profile: String, message: String },
    #[error("the control plane of profile {profile:?} rejected the token (HTTP 401)")]
    Unauthorized { profile: String },
    #[error("the control plane answered HTTP {status}: {message}")]
    Server {
        status: u16,
        message: String,
        /// The server's problem+json body, when it sent one.
        problem: Option<Box<Problem>>,
    },
    #[error("idempotency key {key:?} already names a different write; nothing was queued")]
    KeyReused { key: String },
    #[error(
        "profile {profile:?} is read-only for agents: an operator must lift the mark before an agent may write through it"
    )]
    AgentsReadOnly { profile: String },
    #[error("token storage: {0}")]
    Secrets(String),
    #[error("local database: {message}")]
    Storage {
        message: String,
        #[source]
        source: Option<Source>,
    },
    #[error("data directory: {message}")]
    Io {
        message: String,
        #[source]
        source: Option<Source>,
    },
    /// GitOps manifests that fail validation; nothing was planned or queued.
    #[error("{}", manifest_message(.problems, *.total))]
    InvalidManifests {
        problems: Vec<ManifestProblem>,
        /// All problems found (`problems` holds the first ones).
        total: usize,
    },
    /// A GitOps plan or apply refused for safety (e.g. `prune_all_refused`,
    /// `managed_elsewhere`, `apply_in_progress`); nothing was queued.
    #[error("{message}")]
    Refused { code: &'static str, message: String },
    /// Removing a profile would lose work still queued for it; nothing was removed.
    #[error(
        "profile {profile:?} still has unsent work: {queued}; nothing was removed (send or discard it first, or remove the profile losing it)"
    )]
    QueuedWork {
        profile: String,
        queued: crate::queued::QueuedWork,
    },
}

/// One bad manifest document: its file, its number in the file (from 1) and the field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ManifestProblem {
    pub path: String,
    pub document: usize,
    /// `spec.url`, `kind`…; empty when the document itself cannot be read.
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for ManifestProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}, document {}", self.path, self.document)?;
        if self.field.is_empty() {
            write!(f, ": {}", self.message)
        } else {
            write!(f, ": {}: {}", self.field, self.message)
        }
    }
}

fn manifest_message(problems: &[ManifestProblem], total: usize) -> String {
    let mut out = format!("{total} problem(s) in the manifests; nothing was planned:");
    for p in problems {
        out.push_str(&format!("\n  {p}"));
    }
    if total > problems.len() {
        out.push_str(&format!("\n  … and {} more", total - problems.len()));
    }
    out
}

impl CoreError {
    /// A stable machine code, for IPC `{code, message}` errors and CLI `--json` output. An
    /// error from the control plane carries the server's own code (`version_mismatch`,
    /// `name_taken`, …); codes the protocol also has are spelled as it spells them.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Server {
                problem: Some(p), ..
            } if p.code != ErrorCode::Unknown => p.code.as_str(),
            Self::NotFound { .. } => ErrorCode::NotFound.as_str(),
            Self::Invalid { .. } => "invalid_input",
            Self::ProfileExists(_) => "profile_exists",
            Self::NoToken(_) => "no_token",
            Self::WrongState { .. } => "wrong_state",
            Self::Offline { .. } => "offline",
            Self::Unauthorized { .. } => ErrorCode::Unauthorized.as_str(),
            Self::Server { .. } => "server_error",
            Self::KeyReused { .. } => "key_reused",
            Self::AgentsReadOnly { .. } => "profile_read_only",
            Self::Secrets(_) => "secrets",
            Self::Storage { .. } => "storage",
            Self::Io { .. } => "io",
            Self::InvalidManifests { .. } => "invalid_manifest",
            Self::Refused { code, .. } => code,
            Self::QueuedWork { .. } => "queued_work",
        }
    }

    pub fn class(&self) -> ErrorClass {
        match self {
            Self::Server { status, .. } => match status {
                409 | 412 => ErrorClass::Conflict,
                400..=499 if *status != 429 => ErrorClass::Permanent,
                _ => ErrorClass::Retryable,
            },
            Self::Offline { .. } | Self::Storage { .. } => ErrorClass::Retryable,
            Self::WrongState { .. }
            | Self::KeyReused { .. }
            | Self::Refused { .. }
            | Self::QueuedWork { .. } => ErrorClass::Conflict,
            _ => ErrorClass::Permanent,
        }
    }

    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Invalid {
            field: field.into(),
            message: message.into(),
        }
    }

    /// A local database error without an underlying cause (e.g. a row it cannot read).
    pub fn storage(message: impl Into<String>) -> Self {
        Self::Storage {
            message: message.into(),
            source: None,
        }
    }

    /// An I/O error, with what was being done and its cause.
    pub fn io(message: impl Into<String>, source: impl Into<Source>) -> Self {
        Self::Io {
            message: message.into(),
            source: Some(source.into()),
        }
    }

    /// An error answer of the control plane: its problem body when it sent one.
    pub fn server(status: u16, problem: Option<Problem>, fallback: impl Into<String>) -> Self {
        Self::Server {
            status,
            message: problem
                .as_ref()
                .map_or_else(|| fallback.into(), |p| p.to_string()),
            problem: problem.map(Box::new),
        }
    }

    /// The server's problem, when the control plane sent one.
    pub fn problem(&self) -> Option<&Problem> {
        match self {
            Self::Server { problem, .. } => problem.as_deref(),
            _ => None,
        }
    }

    /// The offending input field, for local validation and the server's `validation_failed`.
    pub fn field(&self) -> Option<&str> {
        match self {
            Self::Invalid { field, .. } => Some(field),
            _ => self.problem().and_then(|p| p.field.as_deref()),
        }
    }

    pub fn not_found(what: impl Into<String>) -> Self {
        Self::NotFound { what: what.into() }
    }

    /// A write into a table keyed by profile: a foreign-key failure means the profile does
    /// not exist (removed meanwhile); anything else is a storage error.
    pub(crate) fn from_profile_write(e: sqlx::Error, profile: &str) -> Self {
        match &e {
            sqlx::Error::Database(d) if d.message().contains("FOREIGN KEY") => {
                Self::not_found(format!("profile {profile:?}"))
            }
            _ => Self::from(e),
        }
    }
}

impl From<sqlx::Error> for CoreError {
    fn from(e: sqlx::Error) -> Self {
        Self::Storage {
            message: e.to_string(),
            source: Some(Box::new(e)),
        }
    }
}

impl From<sqlx::migrate::MigrateError> for CoreError {
    fn from(e: sqlx::migrate::MigrateError) -> Self {
        Self::Storage {
            message: e.to_string(),
            source: Some(Box::new(e)),
        }
    }
}

impl From<std::io::Error> for CoreError {
    fn from(e: std::io::Error) -> Self {
        Self::Io {
            message: e.to_string(),
            source: Some(Box::new(e)),
        }
    }
}

/// The serializable form of an error: `{code, class, message}`, plus the HTTP status, the
/// offending field and the server's problem body when there are any.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ErrorBody {
    pub code: String,
    pub class: ErrorClass,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<Problem>,
    /// `queued_work`: what is still queued, per kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queued: Option<crate::queued::QueuedWork>,
}

impl From<&CoreError> for ErrorBody {
    fn from(e: &CoreError) -> Self {
        Self {
            code: e.code().to_owned(),
            class: e.class(),
            message: e.to_string(),
            status: match e {
                CoreError::Server { status, .. } => Some(*status),
                _ => None,
            },
            field: e.field().map(str::to_owned),
            problem: e.problem().cloned(),
            queued: match e {
                CoreError::QueuedWork { queued, .. } => Some(queued.clone()),
                _ => None,
            },
        }
    }
}

pub type Result<T, E = CoreError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_error_keeps_its_problem_code_and_field() {
        let problem = Problem::new(412, ErrorCode::VersionMismatch, "Version mismatch")
            .with_detail("the resource is at version 4");
        let e = CoreError::server(412, Some(problem), "PATCH /v1/endpoints/a");
        assert_eq!(e.code(), "version_mismatch");
        assert_eq!(e.class(), ErrorClass::Conflict);
        let body = serde_json::to_value(ErrorBody::from(&e)).unwrap();
        assert_eq!(body["code"], "version_mismatch");
        assert_eq!(body["status"], 412);
        assert_eq!(body["problem"]["code"], "version_mismatch");

        let invalid =
            Problem::new(400, ErrorCode::ValidationFailed, "Invalid").with_field("spec.url");
        let e = CoreError::server(400, Some(invalid), "POST /v1/targets");
        assert_eq!(e.code(), "validation_failed");
        assert_eq!(e.class(), ErrorClass::Permanent);
        assert_eq!(ErrorBody::from(&e).field.as_deref(), Some("spec.url"));

        let bare = CoreError::server(502, None, "GET /v1/info");
        assert_eq!(bare.code(), "server_error");
        assert_eq!(bare.class(), ErrorClass::Retryable);
        assert_eq!(
            bare.to_string(),
            "the control plane answered HTTP 502: GET /v1/info"
        );
    }

    #[test]
    fn storage_and_io_errors_keep_their_source() {
        use std::error::Error as _;
        let e = CoreError::from(sqlx::Error::RowNotFound);
        assert!(e.source().is_some());
        assert_eq!(e.code(), "storage");
        let e = CoreError::from(std::io::Error::other("disk full"));
        assert_eq!(e.source().unwrap().to_string(), "disk full");
        assert_eq!(e.to_string(), "data directory: disk full");
    }
}
