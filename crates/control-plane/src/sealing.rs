//! Secrets at rest: signing secrets, client-certificate keys and stored responses are sealed
//! with XChaCha20-Poly1305 under a main key before they reach the database.
//!
//! A sealed value is text: `sy1:<key id>:<base64 of nonce ‖ ciphertext>`. The key id names
//! the main key that sealed it, so a main key can be rotated: every key of the key file can
//! open, the last one seals. The associated data binds a value to its row (tenant, target and
//! secret or certificate id; tenant and idempotency key), so a ciphertext copied into another
//! row does not open. A value without the prefix was written before sealing existed and is returned as it
//! is (start-up seals such rows).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use chacha20poly1305::{Key, XChaCha20Poly1305, XNonce};

const PREFIX: &str = "sy1:";
const NONCE_LEN: usize = 24;

#[derive(Debug, thiserror::Error)]
pub enum SealError {
    #[error("the main key file {path}: {detail}")]
    KeyFile { path: String, detail: String },
    #[error(
        "a value in the database was sealed with main key {0:?}, which the main key file does not hold"
    )]
    UnknownKey(String),
    #[error(
        "a value in the database does not open with main key {0:?}: the main key file does not match this database"
    )]
    WrongKey(String),
    #[error("a sealed value in the database is malformed")]
    Malformed,
}

/// One main key and its id.
pub struct MainKey {
    pub id: String,
    key: Key,
}

impl MainKey {
    /// A new random key with a random id.
    pub fn generate() -> Self {
        Self {
            id: format!("mk{}", hex::encode(rand::random::<[u8; 4]>())),
            key: XChaCha20Poly1305::generate_key(&mut OsRng),
        }
    }

    /// The key file line of this key: `<id> <base64 key>`.
    fn line(&self) -> String {
        format!("{} {}", self.id, STANDARD.encode(self.key.as_slice()))
    }
}

/// The main keys a process holds: all open, the last one seals.
pub struct Sealer {
    keys: Vec<MainKey>,
}

impl std::fmt::Debug for Sealer {
    // Never prints a key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sealer")
            .field("current", &self.current_id())
            .finish_non_exhaustive()
    }
}

impl Sealer {
    pub fn new(keys: Vec<MainKey>) -> Self {
        assert!(!keys.is_empty(), "a sealer needs a main key");
        Self { keys }
    }

    /// A sealer with a fresh in-memory key (tests and in-memory stores).
    pub fn ephemeral() -> Self {
        Self::new(vec![MainKey::generate()])
    }

    /// Reads a key file: one `<id> <base64 32-byte key>` per line (`#` comments allowed);
    /// the last key seals.
    pub fn from_file(path: &Path) -> Result<Self, SealError> {
        let fail = |detail: String| SealError::KeyFile {
            path: path.display().to_string(),
            detail,
        };
        let text = std::fs::read_to_string(path).map_err(|e| fail(e.to_string()))?;
        Self::parse(&text).map_err(fail)
    }

    fn parse(text: &str) -> Result<Self, String> {
        let mut keys = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (id, encoded) = line
                .split_once(' ')
                .ok_or_else(|| format!("line {}: expected `<key id> <base64 key>`", n + 1))?;
            let bytes = STANDARD
                .decode(encoded.trim())
                .map_err(|_| format!("line {}: the key is not base64", n + 1))?;
            if bytes.len() != 32 {
                return Err(format!("line {}: a key is 32 bytes", n + 1));
            }
            if id.is_empty() || id.contains(':') || keys.iter().any(|k: &MainKey| k.id == id) {
                return Err(format!(
                    "line {}: key ids are unique and have no ':'",
                    n + 1
                ));
            }
            keys.push(MainKey {
                id: id.to_owned(),
                key: *Key::from_slice(&bytes),
            });
        }
        if keys.is_empty() {
            return Err("no key in the file".into());
        }
        Ok(Self { keys })
    }

    /// Writes the key file (0600, replaced atomically).
    pub fn write_file(&self, path: &Path) -> Result<(), SealError> {
        let fail = |detail: String| SealError::KeyFile {
            path: path.display().to_string(),
            detail,
        };
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
        let mut tmp = tempfile::NamedTempFile::new_in(dir.unwrap_or(Path::new(".")))
            .map_err(|e| fail(e.to_string()))?;
        let mut text = String::from(
            "# Switchyard main keys: `<id> <base64 key>` per line; the last one seals new values.\n",
        );
        for k in &self.keys {
            text.push_str(&k.line());
            text.push('\n');
        }
        tmp.write_all(text.as_bytes())
            .map_err(|e| fail(e.to_string()))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o600))
                .map_err(|e| fail(e.to_string()))?;
        }
        tmp.persist(path).map_err(|e| fail(e.to_string()))?;
        Ok(())
    }

    /// Adds a new key that seals from now on.
    pub fn with_new_key(mut self) -> Self {
        self.keys.push(MainKey::generate());
        self
    }

    /// Keeps only the current key.
    pub fn only_current(mut self) -> Self {
        let current = self.keys.pop().expect("a key");
        Self {
            keys: vec![current],
        }
    }

    pub fn current_id(&self) -> &str {
        &self.keys.last().expect("a key").id
    }

    pub fn key_ids(&self) -> Vec<&str> {
        self.keys.iter().map(|k| k.id.as_str()).collect()
    }

    /// Seals `plain` for the row `aad` names.
    pub fn seal(&self, plain: &[u8], aad: &[u8]) -> String {
        let key = self.keys.last().expect("a key");
        let nonce = XChaCha20Poly1305::generate_nonce(&mut OsRng);
        let sealed = XChaCha20Poly1305::new(&key.key)
            .encrypt(&nonce, Payload { msg: plain, aad })
            .expect("sealing never fails for in-memory data");
        let mut bytes = nonce.to_vec();
        bytes.extend_from_slice(&sealed);
        format!("{PREFIX}{}:{}", key.id, STANDARD.encode(bytes))
    }

    /// Opens a value `seal` made for the row `aad` names; a value written before sealing
    /// existed (no prefix) is returned as it is.
    pub fn open(&self, stored: &[u8], aad: &[u8]) -> Result<Vec<u8>, SealError> {
        let Some(rest) = stored.strip_prefix(PREFIX.as_bytes()) else {
            return Ok(stored.to_vec());
        };
        let rest = std::str::from_utf8(rest).map_err(|_| SealError::Malformed)?;
        let (id, encoded) = rest.split_once(':').ok_or(SealError::Malformed)?;
        let key = self
            .keys
            .iter()
            .find(|k| k.id == id)
            .ok_or_else(|| SealError::UnknownKey(id.to_owned()))?;
        let bytes = STANDARD.decode(encoded).map_err(|_| SealError::Malformed)?;
        if bytes.len() < NONCE_LEN {
            return Err(SealError::Malformed);
        }
        let (nonce, sealed) = bytes.split_at(NONCE_LEN);
        XChaCha20Poly1305::new(&key.key)
            .decrypt(XNonce::from_slice(nonce), Payload { msg: sealed, aad })
            .map_err(|_| SealError::WrongKey(id.to_owned()))
    }

    /// Opens a sealed text value (a signing secret).
    pub fn open_text(&self, stored: &str, aad: &[u8]) -> Result<String, SealError> {
        String::from_utf8(self.open(stored.as_bytes(), aad)?).map_err(|_| SealError::Malformed)
    }

    /// Whether `stored` is sealed under the current key (rotation re-seals the others).
    pub fn is_current(&self, stored: &[u8]) -> bool {
        stored
            .strip_prefix(PREFIX.as_bytes())
            .and_then(|rest| rest.strip_prefix(self.current_id().as_bytes()))
            .is_some_and(|rest| rest.first() == Some(&b':'))
    }
}

/// The associated data of a target's signing secret.
pub fn secret_aad(tenant: &str, target: &str, id: &str) -> Vec<u8> {
    format!("signing_secret\0{tenant}\0{target}\0{id}").into_bytes()
}

/// The associated data of a target's client-certificate private key.
pub fn client_key_aad(tenant: &str, target: &str, id: &str) -> Vec<u8> {
    format!("client_certificate_key\0{tenant}\0{target}\0{id}").into_bytes()
}

/// The associated data of a stored idempotent response.
pub fn response_aad(tenant: &str, key: &str) -> Vec<u8> {
    format!("stored_response\0{tenant}\0{key}").into_bytes()
}

/// Where the server keeps its main key when none is given: beside a SQLite database
/// (`cp.db` → `cp.db.main-key`). `None` for other databases: replicas sharing PostgreSQL must
/// share one key, so it is never made up by one of them.
pub fn default_key_path(db_url: &str) -> Option<PathBuf> {
    let path = db_url
        .strip_prefix("sqlite://")
        .or_else(|| db_url.strip_prefix("sqlite:"))?;
    let path = path.split('?').next().unwrap_or(path);
    if path.is_empty() || path.starts_with(':') {
        return None;
    }
    Some(PathBuf::from(format!("{path}.main-key")))
}

/// The main keys a server opens its database with, and whether the key file was created.
pub struct Loaded {
    pub sealer: Sealer,
    /// The key file that was read or created (`None`: an in-memory database's own key).
    pub path: Option<PathBuf>,
    pub created: bool,
}

/// The main keys for `db_url`: from `file` when given (it must exist); otherwise from the
/// file beside a SQLite database, created (0600) when missing; an in-memory database gets a
/// fresh key. PostgreSQL needs `file`: its replicas must all hold the same key.
pub fn load(db_url: &str, file: Option<&Path>) -> Result<Loaded, SealError> {
    if let Some(path) = file {
        return Ok(Loaded {
            sealer: Sealer::from_file(path)?,
            path: Some(path.to_owned()),
            created: false,
        });
    }
    if db_url.starts_with("postgres") {
        return Err(SealError::KeyFile {
            path: "(none given)".into(),
            detail: "a control plane on PostgreSQL needs --main-key-file (or \
                     SWITCHYARD_MAIN_KEY_FILE): every replica must hold the same main key"
                .into(),
        });
    }
    let Some(path) = default_key_path(db_url) else {
        return Ok(Loaded {
            sealer: Sealer::ephemeral(),
            path: None,
            created: false,
        });
    };
    if path.exists() {
        return Ok(Loaded {
            sealer: Sealer::from_file(&path)?,
            path: Some(path),
            created: false,
        });
    }
    let sealer = Sealer::ephemeral();
    sealer.write_file(&path)?;
    Ok(Loaded {
        sealer,
        path: Some(path),
        created: true,
    })
}

/// One key for the whole process: stores opened without a key file (tests).
pub fn process_key() -> std::sync::Arc<Sealer> {
    static KEY: std::sync::OnceLock<std::sync::Arc<Sealer>> = std::sync::OnceLock::new();
    KEY.get_or_init(|| std::sync::Arc::new(Sealer::ephemeral()))
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_value_opens_only_with_its_key_and_its_row() {
        let sealer = Sealer::ephemeral();
        let sealed = sealer.seal(b"whsec_abc", b"row-1");
        assert!(sealed.starts_with("sy1:mk"));
        assert!(!sealed.contains("whsec_abc"));
        assert_eq!(
            sealer.open(sealed.as_bytes(), b"row-1").unwrap(),
            b"whsec_abc"
        );
        assert!(matches!(
            sealer.open(sealed.as_bytes(), b"row-2"),
            Err(SealError::WrongKey(_))
        ));
        let other = Sealer::ephemeral();
        assert!(matches!(
            other.open(sealed.as_bytes(), b"row-1"),
            Err(SealError::UnknownKey(_))
        ));
        // Same id, other bytes: a wrong key file.
        let text = format!("{} {}\n", sealer.current_id(), STANDARD.encode([7u8; 32]));
        let forged = Sealer::parse(&text).unwrap();
        assert!(matches!(
            forged.open(sealed.as_bytes(), b"row-1"),
            Err(SealError::WrongKey(_))
        ));
    }

    #[test]
    fn a_rotated_key_ring_opens_old_values_and_seals_with_the_new_key() {
        let old = Sealer::ephemeral();
        let sealed = old.seal(b"v", b"a");
        let ring = old.with_new_key();
        assert!(!ring.is_current(sealed.as_bytes()));
        assert_eq!(ring.open(sealed.as_bytes(), b"a").unwrap(), b"v");
        let resealed = ring.seal(b"v", b"a");
        assert!(ring.is_current(resealed.as_bytes()));
        let current = ring.only_current();
        assert!(current.open(sealed.as_bytes(), b"a").is_err());
        assert_eq!(current.open(resealed.as_bytes(), b"a").unwrap(), b"v");
    }

    #[test]
    fn legacy_values_pass_through_and_key_files_round_trip() {
        let sealer = Sealer::ephemeral();
        assert_eq!(sealer.open(b"{\"a\":1}", b"x").unwrap(), b"{\"a\":1}");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cp.db.main-key");
        let ring = sealer.with_new_key();
        ring.write_file(&path).unwrap();
        let read = Sealer::from_file(&path).unwrap();
        assert_eq!(read.key_ids(), ring.key_ids());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        for bad in ["", "k1 notbase64!", "k1 AAAA", "nospace"] {
            assert!(Sealer::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            default_key_path("sqlite:///var/lib/sy/cp.db?mode=rwc"),
            Some(PathBuf::from("/var/lib/sy/cp.db.main-key"))
        );
        assert_eq!(
            default_key_path("sqlite:cp.db"),
            Some(PathBuf::from("cp.db.main-key"))
        );
        assert_eq!(default_key_path("sqlite::memory:"), None);
        assert_eq!(default_key_path("sqlite://:memory:"), None);
        assert_eq!(default_key_path("postgres://u@h/db"), None);
    }
}
