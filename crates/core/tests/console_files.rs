//! The console's files are its owner's alone: the data dir 0700, `console.db` and its `-wal`
//! and `-shm` 0600 — created so, and tightened when an existing one is looser. Each case runs
//! in a child process (this binary re-run with one test selected) under umask 000, so that
//! nothing but the console's own control keeps the files private: with the control removed,
//! the dir comes out 0777 and the database 0644 (SQLite's default) and the test fails.
#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use switchyard_core::{Console, ConsoleOptions};

/// The data dir the child opens; without it the child tests do nothing.
const CHILD_DIR_ENV: &str = "SWITCHYARD_TEST_FILES_CHILD_DIR";

#[track_caller]
fn assert_mode(path: &Path, expected: u32) {
    let got = mode(path);
    assert!(
        got == expected,
        "{}: mode {got:o}, expected {expected:o}",
        path.display()
    );
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o7777
}

/// Re-runs this binary with only `test` selected, under umask 000.
fn run_child(test: &str, data_dir: &Path) {
    let status = Command::new("sh")
        .arg("-c")
        .arg(r#"umask 000 && exec "$0" "$@""#)
        .arg(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_DIR_ENV, data_dir)
        .status()
        .unwrap();
    assert!(status.success(), "the child test {test} failed: {status}");
}

/// The child's side: checks that the umask really is 000 (else the test would prove
/// nothing), opens a console on the dir, writes, and checks every mode while it is open
/// (the `-wal` and `-shm` files exist only then).
async fn open_write_and_check(data_dir: &Path) {
    let probe = data_dir
        .ancestors()
        .find(|p| p.is_dir())
        .unwrap()
        .join("umask-probe");
    std::fs::write(&probe, b"").unwrap();
    assert_mode(&probe, 0o666); // the child runs under umask 000
    std::fs::remove_file(&probe).unwrap();

    let console = Console::open(ConsoleOptions::new(data_dir, "test"))
        .await
        .unwrap();
    // A write (the sandbox's token stays in memory, so no keychain or token file is involved).
    console
        .register_sandbox("http://127.0.0.1:9", "sandbox-token-0123")
        .await
        .unwrap();
    assert_eq!(console.list_profiles().await.unwrap().len(), 1);

    assert_mode(data_dir, 0o700);
    for name in ["console.db", "console.db-wal", "console.db-shm"] {
        assert_mode(&data_dir.join(name), 0o600);
    }
    // Nothing else in the data dir is open to anyone else either.
    let mut stack: Vec<PathBuf> = vec![data_dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let m = mode(&path);
            assert!(
                m & 0o077 == 0,
                "{}: mode {m:o} is not private",
                path.display()
            );
            if path.is_dir() {
                stack.push(path);
            }
        }
    }
}

#[test]
fn new_data_dir_and_database_are_owner_only() {
    let tmp = tempfile::tempdir().unwrap();
    // Two levels the console creates: the parent as usual, the data dir itself 0700.
    run_child(
        "new_data_dir_and_database_are_owner_only_child",
        &tmp.path().join("share").join("switchyard"),
    );
}

#[tokio::test]
async fn new_data_dir_and_database_are_owner_only_child() {
    let Some(dir) = std::env::var_os(CHILD_DIR_ENV) else {
        return;
    };
    let dir = PathBuf::from(dir);
    assert!(!dir.exists());
    open_write_and_check(&dir).await;
}

#[test]
fn existing_loose_data_dir_and_database_are_tightened() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("switchyard");
    // What an older version (or a looser umask) left: a 0755 dir with a 0644 database, and a
    // WAL and shared-memory file from a crashed process, 0664. The database is empty (SQLite
    // takes it as it finds it); the WAL and shared-memory files are not, since SQLite itself
    // resets the mode of an empty one it opens (stale contents: SQLite ignores a WAL without
    // a valid header and rebuilds the shared memory).
    std::fs::create_dir(&dir).unwrap();
    for (name, loose) in [
        ("", 0o755),
        ("console.db", 0o644),
        ("console.db-wal", 0o664),
        ("console.db-shm", 0o664),
    ] {
        let path = dir.join(name);
        if !name.is_empty() {
            let stale: &[u8] = if name == "console.db" { b"" } else { &[0; 64] };
            std::fs::write(&path, stale).unwrap();
        }
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(loose)).unwrap();
    }
    run_child(
        "existing_loose_data_dir_and_database_are_tightened_child",
        &dir,
    );
}

#[tokio::test]
async fn existing_loose_data_dir_and_database_are_tightened_child() {
    let Some(dir) = std::env::var_os(CHILD_DIR_ENV) else {
        return;
    };
    let dir = PathBuf::from(dir);
    assert_mode(&dir, 0o755);
    assert_mode(&dir.join("console.db"), 0o644);
    assert_mode(&dir.join("console.db-wal"), 0o664);
    open_write_and_check(&dir).await;
}
