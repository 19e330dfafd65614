//! Profile tokens: in the OS keychain when one is reachable (feature `keychain`, the
//! `keyring` crate: Secret Service, macOS Keychain, Windows Credential Manager), else in a
//! 0600 file beside the database (`tokens.json`) — a headless Linux has no Secret Service —
//! and `TokenStorage::File` tells the UI and the CLI to show that note. The sandbox token
//! lives only in memory. Never in SQLite, logs or error messages.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::{CoreError, Result};
use crate::types::TokenStorage;

pub struct Secrets {
    /// Keychain entries are scoped by data dir, so two data dirs never share a token.
    #[cfg_attr(not(feature = "keychain"), allow(dead_code))]
    scope: String,
    file: PathBuf,
    memory: Mutex<HashMap<String, String>>,
    lock: Mutex<()>,
}

impl Secrets {
    pub fn new(data_dir: &Path) -> Self {
        Self {
            scope: data_dir.display().to_string(),
            file: data_dir.join("tokens.json"),
            memory: Mutex::new(HashMap::new()),
            lock: Mutex::new(()),
        }
    }

    /// Where a newly added profile's token goes.
    pub fn persistent_storage(&self) -> TokenStorage {
        TokenStorage::File {
            path: self.file.display().to_string(),
        }
    }

    fn read_file(&self) -> Result<BTreeMap<String, String>> {
        match std::fs::read(&self.file) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                CoreError::Secrets(format!("{} is not valid: {e}", self.file.display()))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
            Err(e) => Err(CoreError::Secrets(format!(
                "cannot read {}: {e}",
                self.file.display()
            ))),
        }
    }

    fn write_file(&self, tokens: &BTreeMap<String, String>) -> Result<()> {
        let tmp = self.file.with_extension("json.tmp");
        let text = serde_json::to_vec_pretty(tokens).expect("tokens serialize");
        write_private(&tmp, &text)
            .map_err(|e| CoreError::Secrets(format!("cannot write {}: {e}", tmp.display())))?;
        std::fs::rename(&tmp, &self.file)
            .map_err(|e| CoreError::Secrets(format!("cannot write {}: {e}", self.file.display())))
    }

    /// Stores a profile's token where it is safest: the keychain if reachable, else the file.
    pub fn store(&self, profile: &str, token: &str) -> Result<TokenStorage> {
        #[cfg(feature = "keychain")]
        if keychain::set(&self.scope, profile, token).is_ok()
            && keychain::get(&self.scope, profile)
                .ok()
                .flatten()
                .as_deref()
                == Some(token)
        {
            self.remove_from_file(profile)?;
            return Ok(TokenStorage::Keychain);
        }
        self.set(profile, token)?;
        Ok(self.persistent_storage())
    }

    /// Reads a token from where `storage` says it is (memory first).
    pub fn load(&self, profile: &str, storage: &TokenStorage) -> Result<Option<String>> {
        if let Some(t) = self.memory.lock().expect("secrets lock").get(profile) {
            return Ok(Some(t.clone()));
        }
        match storage {
            #[cfg(feature = "keychain")]
            TokenStorage::Keychain => keychain::get(&self.scope, profile),
            #[cfg(not(feature = "keychain"))]
            TokenStorage::Keychain => Err(CoreError::Secrets(
                "this build has no keychain support; add the profile's token again".into(),
            )),
            TokenStorage::Memory => Ok(None),
            TokenStorage::File { .. } => self.get(profile),
        }
    }

    fn remove_from_file(&self, profile: &str) -> Result<()> {
        let _guard = self.lock.lock().expect("secrets lock");
        let mut tokens = self.read_file()?;
        if tokens.remove(profile).is_some() {
            self.write_file(&tokens)?;
        }
        Ok(())
    }

    pub fn set(&self, profile: &str, token: &str) -> Result<()> {
        let _guard = self.lock.lock().expect("secrets lock");
        let mut tokens = self.read_file()?;
        tokens.insert(profile.to_owned(), token.to_owned());
        self.write_file(&tokens)
    }

    pub fn set_memory(&self, profile: &str, token: &str) {
        self.memory
            .lock()
            .expect("secrets lock")
            .insert(profile.to_owned(), token.to_owned());
    }

    pub fn get(&self, profile: &str) -> Result<Option<String>> {
        if let Some(t) = self.memory.lock().expect("secrets lock").get(profile) {
            return Ok(Some(t.clone()));
        }
        let _guard = self.lock.lock().expect("secrets lock");
        Ok(self.read_file()?.remove(profile))
    }

    pub fn remove(&self, profile: &str) -> Result<()> {
        self.memory.lock().expect("secrets lock").remove(profile);
        #[cfg(feature = "keychain")]
        keychain::remove(&self.scope, profile);
        self.remove_from_file(profile)
    }
}

#[cfg(feature = "keychain")]
mod keychain {
    //! The OS keychain through `keyring`. Errors never include the token.

    use crate::error::{CoreError, Result};

    const SERVICE: &str = "switchyard";

    fn entry(scope: &str, profile: &str) -> Result<keyring::Entry> {
        keyring::Entry::new(SERVICE, &format!("{scope}#{profile}"))
            .map_err(|e| CoreError::Secrets(format!("keychain: {e}")))
    }

    pub fn set(scope: &str, profile: &str, token: &str) -> Result<()> {
        entry(scope, profile)?
            .set_password(token)
            .map_err(|e| CoreError::Secrets(format!("keychain: {e}")))
    }

    pub fn get(scope: &str, profile: &str) -> Result<Option<String>> {
        match entry(scope, profile)?.get_password() {
            Ok(t) => Ok(Some(t)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(CoreError::Secrets(format!("keychain: {e}"))),
        }
    }

    pub fn remove(scope: &str, profile: &str) {
        if let Ok(e) = entry(scope, profile) {
            let _ = e.delete_credential();
        }
    }
}

#[cfg(unix)]
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    // `mode` applies only when the file is created: a temp file left by a crash keeps its mode.
    f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    f.write_all(bytes)?;
    f.sync_all()
}

#[cfg(not(unix))]
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::write(path, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(unix)]
    fn token_file_is_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let s = Secrets::new(dir.path());
        s.set("prod", "s3cret-token").unwrap();
        let mode = std::fs::metadata(dir.path().join("tokens.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(s.get("prod").unwrap().as_deref(), Some("s3cret-token"));
        s.remove("prod").unwrap();
        assert_eq!(s.get("prod").unwrap(), None);
    }
}
