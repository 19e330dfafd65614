//! Profile tokens in a real OS keychain (the Secret Service on Linux; `make test-keychain`
//! runs this under `dbus-run-session` with an unlocked gnome-keyring): the token goes to the
//! keychain, readable there by the keyring crate and by libsecret's `secret-tool`; no
//! `tokens.json` is created and the token is in no file of the data dir; a reopened console
//! authenticates with it; replacing it replaces the entry; removing the profile removes it.
//!
//! Without a reachable Secret Service the test prints why and passes, so a plain `cargo test`
//! on a machine without one still passes; `REQUIRE_KEYCHAIN=1` makes that a failure.
#![cfg(all(feature = "keychain", target_os = "linux"))]

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::Command;

use switchyard_control_plane::extract::Tenants;
use switchyard_control_plane::{Server, ServerConfig};
use switchyard_core::{
    Console, ConsoleOptions, DiscardQueued, NewProfile, ProfileEdit, TokenStorage,
};

/// The keychain entry the console makes: service `switchyard`, user `<data dir>#<profile>`.
const SERVICE: &str = "switchyard";

/// Whether a Secret Service answers and stores, reads and deletes an item (probed with an
/// entry of its own, deleted again).
fn secret_service() -> Result<(), String> {
    let probe = keyring::Entry::new("switchyard-test-probe", &uuid::Uuid::new_v4().to_string())
        .map_err(|e| e.to_string())?;
    probe.set_password("probe").map_err(|e| e.to_string())?;
    let read = probe.get_password().map_err(|e| e.to_string());
    probe.delete_credential().map_err(|e| e.to_string())?;
    match read? {
        p if p == "probe" => Ok(()),
        _ => Err("the probe item read back differently".into()),
    }
}

fn required() -> bool {
    std::env::var("REQUIRE_KEYCHAIN").is_ok_and(|v| v == "1")
}

fn user(data_dir: &Path, profile: &str) -> String {
    format!("{}#{profile}", data_dir.display())
}

/// The token through the keyring crate (`None`: no such entry).
fn keyring_token(user: &str) -> Option<String> {
    match keyring::Entry::new(SERVICE, user).unwrap().get_password() {
        Ok(t) => Some(t),
        Err(keyring::Error::NoEntry) => None,
        Err(e) => panic!("keychain: {e}"),
    }
}

/// The token through libsecret (`secret-tool lookup`), independently of the keyring crate;
/// `None` when there is no such item. `Err` when secret-tool is not installed.
fn secret_tool_token(user: &str) -> Result<Option<String>, String> {
    let out = Command::new("secret-tool")
        .args(["lookup", "service", SERVICE, "username", user])
        .output()
        .map_err(|e| format!("secret-tool: {e}"))?;
    Ok(out
        .status
        .success()
        .then(|| String::from_utf8(out.stdout).unwrap()))
}

/// Every file under `dir` (the data dir) that contains `needle`.
fn files_containing(dir: &Path, needle: &[u8]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if std::fs::read(&path)
                .unwrap()
                .windows(needle.len())
                .any(|w| w == needle)
            {
                found.push(path);
            }
        }
    }
    found
}

/// Deletes the test's keychain entry however the test ends (a failed assertion included).
struct RemoveEntry(String);

impl Drop for RemoveEntry {
    fn drop(&mut self) {
        if let Ok(e) = keyring::Entry::new(SERVICE, &self.0) {
            let _ = e.delete_credential();
        }
    }
}

async fn control_plane(dir: &Path, token: &str) -> Server {
    let mut tenants = Tenants::default();
    tenants.add("acme", token);
    Server::start(
        ServerConfig::new(
            SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            format!("sqlite://{}", dir.join("cp.db").display()),
            tenants,
        )
        .local_only(),
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn profile_tokens_live_in_the_keychain() {
    if let Err(why) = secret_service() {
        let message = format!(
            "no Secret Service reachable ({why}); the keychain test needs one: run `make test-keychain`"
        );
        assert!(!required(), "REQUIRE_KEYCHAIN=1: {message}");
        // Straight to stderr, not through the test harness's capture: a skip must show.
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED profile_tokens_live_in_the_keychain: {message}"
        );
        return;
    }
    let secret_tool = secret_tool_token("switchyard-test-none").is_ok();
    assert!(
        secret_tool || !required(),
        "REQUIRE_KEYCHAIN=1: secret-tool (libsecret-tools) is not installed"
    );
    if !secret_tool {
        let _ = writeln!(
            std::io::stderr(),
            "note: secret-tool is not installed; the keychain is read through keyring only"
        );
    }

    let tmp = tempfile::tempdir().unwrap();
    let data_dir = tmp.path().join("data");
    let cp_dir = tempfile::tempdir().unwrap();
    let token = format!("kc-test-{}", uuid::Uuid::new_v4().simple());
    let cp = control_plane(cp_dir.path(), &token).await;
    let user = user(&data_dir, "prod");
    let _cleanup = RemoveEntry(user.clone());

    let console = Console::open(ConsoleOptions::new(&data_dir, "test"))
        .await
        .unwrap();
    let profile = console
        .add_profile(NewProfile {
            name: "prod".into(),
            url: cp.url(),
            token: token.clone(),
        })
        .await
        .unwrap();
    assert!(
        matches!(profile.token_storage, TokenStorage::Keychain),
        "the token went to {:?}, not the keychain",
        profile.token_storage
    );
    // (Compared without printing: a token never goes to the test's output either.)
    assert!(
        keyring_token(&user).as_deref() == Some(token.as_str()),
        "the keyring crate reads the token back"
    );
    if secret_tool {
        assert!(
            secret_tool_token(&user).unwrap().as_deref() == Some(token.as_str()),
            "secret-tool reads the token back"
        );
    }
    assert!(!data_dir.join("tokens.json").exists(), "no tokens.json");
    // While the console is open, so the WAL and shared-memory files are searched too.
    assert_eq!(
        files_containing(&data_dir, token.as_bytes()),
        Vec::<PathBuf>::new(),
        "files of the data dir holding the token"
    );
    drop(console);

    // A console opened afresh reads the token from the keychain and is let in with it.
    let console = Console::open(ConsoleOptions::new(&data_dir, "test"))
        .await
        .unwrap();
    let report = console.test_connection("prod").await.unwrap();
    assert!(report.authenticated, "{:?}", report.error);

    // A replaced token replaces the keychain entry; still no file holds either.
    let token2 = format!("kc-test-{}", uuid::Uuid::new_v4().simple());
    let edited = console
        .edit_profile(
            "prod",
            ProfileEdit {
                url: None,
                token: Some(token2.clone()),
            },
        )
        .await
        .unwrap();
    assert!(matches!(edited.token_storage, TokenStorage::Keychain));
    assert!(
        keyring_token(&user).as_deref() == Some(token2.as_str()),
        "the keychain holds the new token"
    );
    assert!(!data_dir.join("tokens.json").exists(), "no tokens.json");
    for t in [&token, &token2] {
        assert_eq!(
            files_containing(&data_dir, t.as_bytes()),
            Vec::<PathBuf>::new()
        );
    }

    // Removing the profile removes its keychain entry.
    console
        .remove_profile("prod", DiscardQueued::No)
        .await
        .unwrap();
    assert!(keyring_token(&user).is_none(), "the keychain entry is gone");
    if secret_tool {
        assert!(
            secret_tool_token(&user).unwrap().is_none(),
            "the keychain item is gone for libsecret too"
        );
    }
    assert!(!data_dir.join("tokens.json").exists(), "no tokens.json");
    cp.stop().await.unwrap();
}
