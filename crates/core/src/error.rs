//! The core's error type. Callers branch on [`CoreError::code`] and [`CoreError::class`];
//! messages never contain tokens.

use serde::{Deserialize, Serialize};

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
    Server { status: u16, message: String },
    #[error("idempotency key {key:?} already names a different write; nothing was queued")]
    KeyReused { key: String },
    #[error("token storage: {0}")]
    Secrets(String),
    #[error("local database: {0}")]
    Storage(String),
    #[error("data directory: {0}")]
    Io(String),
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
    let mut out = format!("{total} invalid manifest document(s); nothing was planned:");
    for p in problems {
        out.push_str(&format!("\n  {p}"));
    }
    if total > problems.len() {
        out.push_str(&format!("\n  … and {} more", total - problems.len()));
    }
    out
}

impl CoreError {
    /// A stable machine code, for IPC `{code, message}` errors and CLI `--json` output.
    pub fn code(&self) -> &'static str {
        match self {
            Self::NotFound { .. } => "not_found",
            Self::Invalid { .. } => "invalid_input",
            Self::ProfileExists(_) => "profile_exists",
            Self::NoToken(_) => "no_token",
            Self::WrongState { .. } => "wrong_state",
            Self::Offline { .. } => "offline",
            Self::Unauthorized { .. } => "unauthorized",
            Self::Server { .. } => "server_error",
            Self::KeyReused { .. } => "key_reused",
            Self::Secrets(_) => "secrets",
            Self::Storage(_) => "storage",
            Self::Io(_) => "io",
            Self::InvalidManifests { .. } => "invalid_manifest",
            Self::Refused { code, .. } => code,
        }
    }

    pub fn class(&self) -> ErrorClass {
        match self {
            Self::Offline { .. } | Self::Storage(_) | Self::Server { .. } => ErrorClass::Retryable,
            Self::WrongState { .. } | Self::KeyReused { .. } | Self::Refused { .. } => {
                ErrorClass::Conflict
            }
            _ => ErrorClass::Permanent,
        }
    }

    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Invalid {
            field: field.into(),
            message: message.into(),
        }
    }

    pub fn not_found(what: impl Into<String>) -> Self {
        Self::NotFound { what: what.into() }
    }
}

impl From<sqlx::Error> for CoreError {
    fn from(e: sqlx::Error) -> Self {
        Self::Storage(e.to_string())
    }
}

impl From<sqlx::migrate::MigrateError> for CoreError {
    fn from(e: sqlx::migrate::MigrateError) -> Self {
        Self::Storage(e.to_string())
    }
}

impl From<std::io::Error> for CoreError {
    fn from(e: std::io::Error) -> Self {
        Self::Io(e.to_string())
    }
}

/// The serializable form of an error: `{code, class, message}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ErrorBody {
    pub code: String,
    pub class: ErrorClass,
    pub message: String,
}

impl From<&CoreError> for ErrorBody {
    fn from(e: &CoreError) -> Self {
        Self {
            code: e.code().to_owned(),
            class: e.class(),
            message: e.to_string(),
        }
    }
}

pub type Result<T, E = CoreError> = std::result::Result<T, E>;
