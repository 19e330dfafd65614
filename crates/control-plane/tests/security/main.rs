//! Secrets at rest, against the real binary: after targets are created (keyed, so their
//! responses are stored), a webhook is signed and the main key is rotated, no signing secret
//! is left in clear in the database, its WAL or the log; the stored responses and the
//! signatures still work; a wrong main key stops start-up with a clear error.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use switchyard_control_plane::sealing::Sealer;
use switchyard_test_support::receiver::Receiver;
use tokio::io::{AsyncBufReadExt, BufReader};

mod roles;
mod startup;

const TOKEN: &str = "acme-token-123";
const BIN: &str = env!("CARGO_BIN_EXE_switchyard-control-plane");

struct Serve {
    child: tokio::process::Child,
    url: String,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

/// `serve` on `dir/cp.db` for tenant acme, private targets allowed, its log appended to
/// `dir/cp.log`.
async fn serve(dir: &Path, extra: &[&str]) -> Result<Serve, String> {
    let tenant = format!("acme:{TOKEN}");
    let mut args = vec![
        "--listen",
        "127.0.0.1:0",
        "--allow-private-targets",
        "--tenant",
        &tenant,
    ];
    args.extend_from_slice(extra);
    spawn(dir, &args, |_| {}).await
}

/// `serve` on `dir/cp.db` with `args` (and a fast retry schedule), its log appended to
/// `dir/cp.log`; `prepare` adjusts the command first. The URL once it listens, or how it
/// exited and its log.
async fn spawn(
    dir: &Path,
    args: &[&str],
    prepare: impl FnOnce(&mut tokio::process::Command),
) -> Result<Serve, String> {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("cp.log"))
        .unwrap();
    let mut command = tokio::process::Command::new(BIN);
    command
        .arg("serve")
        .args(args)
        .arg("--db")
        .arg(format!("sqlite://{}", dir.join("cp.db").display()))
        .args(["--retry-schedule", "0s,50ms,100ms,200ms,400ms"])
        .env("RUST_LOG", "debug")
        .env_remove("SWITCHYARD_TENANTS")
        .stdout(Stdio::piped())
        .stderr(log)
        .kill_on_drop(true);
    prepare(&mut command);
    let mut child = command.spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let url = tokio::time::timeout(Duration::from_secs(20), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(url) = line.strip_prefix("switchyard control plane listening on ") {
                return Some(url.to_owned());
            }
        }
        None
    })
    .await
    .unwrap();
    match url {
        Some(url) => {
            tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
            Ok(Serve { child, url })
        }
        None => {
            let status = child.wait().await.unwrap();
            let log = std::fs::read_to_string(dir.join("cp.log")).unwrap_or_default();
            Err(format!("{status}: {log}"))
        }
    }
}

async fn stop(mut s: Serve) {
    let pid = s.child.id().unwrap().to_string();
    std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    tokio::time::timeout(Duration::from_secs(20), s.child.wait())
        .await
        .unwrap()
        .unwrap();
}

async fn call(url: &str, method: &str, path: &str, body: Value, key: Option<&str>) -> (u16, Value) {
    let client = reqwest::Client::new();
    let mut request = client
        .request(method.parse().unwrap(), format!("{url}{path}"))
        .bearer_auth(TOKEN)
        .json(&body);
    if let Some(key) = key {
        request = request.header("Idempotency-Key", key);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// Every file of `dir` but the main key file, as bytes.
fn files_but_the_key(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.to_string_lossy().ends_with(".main-key"))
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Submits an event to `ep` and waits until the receiver got one more webhook.
async fn deliver_one(url: &str, receiver: &Receiver) {
    let before = receiver.count();
    let (status, body) = call(
        url,
        "POST",
        "/v1/events",
        json!({"endpoint": "ep", "event_type": "t", "payload": {}}),
        None,
    )
    .await;
    assert_eq!(status, 202, "{body}");
    for _ in 0..400 {
        if receiver.count() > before {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the webhook never arrived");
}

async fn create_target(url: &str, name: &str, hook: &str) -> (u16, Value) {
    call(
        url,
        "POST",
        "/v1/targets",
        json!({"name": name, "spec": {"url": hook}}),
        Some(&format!("create-{name}")),
    )
    .await
}

#[tokio::test]
async fn no_signing_secret_stays_in_clear_in_the_database_its_wal_or_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let receiver = Receiver::answering(200);
    let hook = receiver.url.clone();
    let cp = serve(dir.path(), &[]).await.unwrap();
    let mut secrets = Vec::new();
    for name in ["tg-a", "tg-b", "tg-c"] {
        let (status, body) = create_target(&cp.url, name, &hook).await;
        assert_eq!(status, 201, "{body}");
        secrets.push(
            body["status"]["signing_secret"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    assert!(secrets.iter().all(|s| s.starts_with("whsec_")));
    call(
        &cp.url,
        "POST",
        "/v1/endpoints",
        json!({"name": "ep", "spec": {}}),
        Some("ep"),
    )
    .await;
    call(
        &cp.url,
        "POST",
        "/v1/flows",
        json!({"name": "fl", "spec": {"endpoint": "ep", "target": "tg-a"}}),
        Some("fl"),
    )
    .await;
    deliver_one(&cp.url, &receiver).await;
    let verify = |secret: &str| {
        let last = receiver.received().pop().expect("a webhook");
        switchyard_control_plane::delivery::signing::verify(
            secret,
            last.header("webhook-id"),
            last.header("webhook-timestamp").parse().unwrap(),
            last.body.as_bytes(),
            last.header("webhook-signature"),
        )
    };
    assert!(verify(&secrets[0]), "signed with the sealed secret, opened");

    // A keyed replay returns the stored response byte for byte: the same secret, shown again
    // only to the caller that owns the key.
    let (status, again) = create_target(&cp.url, "tg-a", &hook).await;
    assert_eq!(status, 201);
    assert_eq!(again["status"]["signing_secret"], secrets[0].as_str());
    stop(cp).await;

    let out = std::process::Command::new(BIN)
        .arg("rotate-main-key")
        .arg("--db")
        .arg(format!("sqlite://{}", dir.path().join("cp.db").display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("main key rotated"), "{said}");

    let cp = serve(dir.path(), &[]).await.unwrap();
    let (status, again) = create_target(&cp.url, "tg-b", &hook).await;
    assert_eq!(status, 201, "the stored response opens under the new key");
    assert_eq!(again["status"]["signing_secret"], secrets[1].as_str());
    deliver_one(&cp.url, &receiver).await;
    assert!(verify(&secrets[0]), "still signed right after the rotation");
    stop(cp).await;

    let files = files_but_the_key(dir.path());
    assert!(files.iter().any(|(p, _)| p.ends_with("cp.db")));
    assert!(files.iter().any(|(p, _)| p.ends_with("cp.log")));
    for (path, bytes) in &files {
        for secret in &secrets {
            assert!(
                !contains(bytes, secret.as_bytes()),
                "{secret} in clear in {}",
                path.display()
            );
        }
        assert!(
            !contains(bytes, b"whsec_"),
            "a signing secret in clear in {}",
            path.display()
        );
    }
}

#[tokio::test]
async fn a_wrong_main_key_stops_start_up_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let cp = serve(dir.path(), &[]).await.unwrap();
    let (status, _) = create_target(&cp.url, "tg", "http://127.0.0.1:9/hook").await;
    assert_eq!(status, 201);
    stop(cp).await;
    let key_file = dir.path().join("cp.db.main-key");
    let genuine = std::fs::read_to_string(&key_file).unwrap();
    let id = Sealer::from_file(&key_file)
        .unwrap()
        .current_id()
        .to_owned();

    // The same key id with other bytes: the file was swapped for another database's.
    let forged = format!("{id} {}\n", "A".repeat(43) + "=");
    std::fs::write(&key_file, forged).unwrap();
    let refused = serve(dir.path(), &[])
        .await
        .err()
        .expect("start-up refused");
    assert!(
        refused.contains("does not match this database"),
        "{refused}"
    );

    // Another key altogether.
    Sealer::ephemeral().write_file(&key_file).unwrap();
    let refused = serve(dir.path(), &[])
        .await
        .err()
        .expect("start-up refused");
    assert!(
        refused.contains("which the main key file does not hold"),
        "{refused}"
    );

    // A key file named but missing.
    let missing = dir.path().join("nowhere.key");
    let refused = serve(dir.path(), &["--main-key-file", missing.to_str().unwrap()])
        .await
        .err()
        .expect("start-up refused");
    assert!(refused.contains("nowhere.key"), "{refused}");

    std::fs::write(&key_file, genuine).unwrap();
    let cp = serve(dir.path(), &[]).await.unwrap();
    stop(cp).await;
}

#[tokio::test]
async fn an_interrupted_rotation_is_finished_by_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let cp = serve(dir.path(), &[]).await.unwrap();
    for name in ["tg-a", "tg-b"] {
        assert_eq!(
            create_target(&cp.url, name, "http://127.0.0.1:9/h").await.0,
            201
        );
    }
    stop(cp).await;
    let db = format!("sqlite://{}", dir.path().join("cp.db").display());
    let key_file = dir.path().join("cp.db.main-key");
    // A run that wrote its new key and died before re-sealing anything.
    Sealer::from_file(&key_file)
        .unwrap()
        .with_new_key()
        .write_file(&key_file)
        .unwrap();
    let done = switchyard_control_plane::main_key_rotation::rotate(&db, None, true, 2, |_| {})
        .await
        .unwrap();
    assert!(
        !done.added,
        "it finished the earlier run instead of adding a key"
    );
    assert_eq!(done.resealed, 4, "two secrets and two stored responses");
    assert!(done.old_keys.is_empty(), "--drop-old-keys");
    let again = switchyard_control_plane::main_key_rotation::rotate(&db, None, false, 2, |_| {})
        .await
        .unwrap();
    assert!(again.added);
    assert_eq!(again.resealed, 4);
    assert_eq!(again.old_keys.len(), 1);
    let cp = serve(dir.path(), &[]).await.unwrap();
    assert_eq!(
        create_target(&cp.url, "tg-a", "http://127.0.0.1:9/h")
            .await
            .0,
        201
    );
    stop(cp).await;
}
