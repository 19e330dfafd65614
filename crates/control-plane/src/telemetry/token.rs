//! The bearer token `GET /metrics` requires (`serve --metrics-token-file`). Only its SHA-256
//! digest is kept, compared in constant time; the token itself is never logged or shown.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Shortest token accepted, as for tenants' tokens (src/extract.rs).
const MIN_LEN: usize = 8;

#[derive(Debug, thiserror::Error)]
pub enum MetricsTokenError {
    #[error("reading the metrics token file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the metrics token file {path} must hold a token of at least {MIN_LEN} characters")]
    TooShort { path: PathBuf },
}

/// The digest of the metrics scrape token.
#[derive(Clone)]
pub struct MetricsToken([u8; 32]);

impl std::fmt::Debug for MetricsToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MetricsToken(redacted)")
    }
}

impl MetricsToken {
    pub fn new(token: &str) -> Self {
        Self(Sha256::digest(token.as_bytes()).into())
    }

    /// The token in a file: its content without surrounding whitespace (the file Prometheus
    /// reads as `authorization: credentials_file` can be the same file).
    pub fn from_file(path: &Path) -> Result<Self, MetricsTokenError> {
        let text = std::fs::read_to_string(path).map_err(|source| MetricsTokenError::Read {
            path: path.to_owned(),
            source,
        })?;
        let token = text.trim();
        if token.len() < MIN_LEN {
            return Err(MetricsTokenError::TooShort {
                path: path.to_owned(),
            });
        }
        Ok(Self::new(token))
    }

    /// Whether `presented` is the token (constant time in its content).
    pub fn matches(&self, presented: &str) -> bool {
        let digest: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        digest.ct_eq(&self.0).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_matches_itself_only_and_never_shows() {
        let token = MetricsToken::new("scrape-secret-1");
        assert!(token.matches("scrape-secret-1"));
        assert!(!token.matches("scrape-secret-2"));
        assert!(!token.matches(""));
        assert!(!format!("{token:?}").contains("scrape"));
    }

    #[test]
    fn the_file_is_trimmed_and_a_short_token_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "scrape-secret-1\n").unwrap();
        assert!(
            MetricsToken::from_file(&path)
                .unwrap()
                .matches("scrape-secret-1")
        );
        std::fs::write(&path, " short \n").unwrap();
        assert!(matches!(
            MetricsToken::from_file(&path),
            Err(MetricsTokenError::TooShort { .. })
        ));
        assert!(matches!(
            MetricsToken::from_file(&dir.path().join("absent")),
            Err(MetricsTokenError::Read { .. })
        ));
    }
}
