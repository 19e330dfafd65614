//! Profile tokens: kept in a 0600 file beside the database (`tokens.json`), because this
//! build has no OS keychain backend; the sandbox token only in memory. Never in SQLite,
//! logs or error messages.
//!
//! Decision: the keychain backend (the `keyring` crate) is not compiled in yet; the file
//! fallback is what the issue asks for when no keychain exists (a headless Linux has no
//! Secret Service), and `TokenStorage::File` tells the UI and the CLI to show the note.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::{CoreError, Result};
use crate::types::TokenStorage;

pub struct Secrets {
    file: PathBuf,
    memory: Mutex<HashMap<String, String>>,
    lock: Mutex<()>,
}

impl Secrets {
    pub fn new(data_dir: &Path) -> Self {
        Self {
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
        let _guard = self.lock.lock().expect("secrets lock");
        let mut tokens = self.read_file()?;
        if tokens.remove(profile).is_some() {
            self.write_file(&tokens)?;
        }
        Ok(())
    }
}

#[cfg(unix)]
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
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
