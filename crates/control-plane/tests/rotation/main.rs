//! Integration tests of signing-secret rotation against a real control plane and a real
//! loopback receiver: two signatures during the overlap (each verified as a Standard
//! Webhooks receiver would, with the value the API returned), one after; keyed replays;
//! the 409s; the verify step; values kept out of listings, errors, logs and the database.

#[path = "../delivery/support.rs"]
#[allow(dead_code)]
mod support;

use switchyard_test_support::postgres;

use switchyard_test_support::tls;

mod api;
mod cert_keys;
mod certs;
mod logs;
mod races;
mod signatures;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

use support::{Api, Received};

const BIN: &str = env!("CARGO_BIN_EXE_switchyard-control-plane");

/// The real binary serving `db` at debug level, its stderr in `log`, with `extra` arguments;
/// the child is killed when dropped. For the tests that read what the server logged.
pub async fn serve_logged(
    db: &std::path::Path,
    log: &std::path::Path,
    extra: &[&std::ffi::OsStr],
) -> (tokio::process::Child, Api) {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let mut child = tokio::process::Command::new(BIN)
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--allow-private-targets",
        ])
        .arg("--tenant")
        .arg(format!("acme:{}", support::TOKEN))
        .arg("--db")
        .arg(format!("sqlite://{}", db.display()))
        .args(extra)
        .env("RUST_LOG", "debug")
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(log).unwrap())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let url = tokio::time::timeout(std::time::Duration::from_secs(20), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(url) = line.strip_prefix("switchyard control plane listening on ") {
                return url.to_owned();
            }
        }
        panic!("control plane exited before listening");
    })
    .await
    .unwrap();
    (child, Api::new(url))
}

/// A Standard Webhooks verifier written from the specification (not the server's signer):
/// true when one `v1,` entry of the request's `webhook-signature` is the HMAC-SHA256, keyed
/// with the base64 part of `secret`, of `id.timestamp.body`.
pub fn verifies(secret: &str, request: &Received) -> bool {
    let key = STANDARD
        .decode(secret.strip_prefix("whsec_").expect("a whsec_ secret"))
        .unwrap();
    let signed = format!(
        "{}.{}.{}",
        request.header("webhook-id"),
        request.header("webhook-timestamp"),
        request.body
    );
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(signed.as_bytes());
    let expected = STANDARD.encode(mac.finalize().into_bytes());
    request
        .header("webhook-signature")
        .split(' ')
        .filter_map(|entry| entry.strip_prefix("v1,"))
        .any(|sig| sig == expected)
}

/// How many `v1,` signatures a request carries.
pub fn signature_count(request: &Received) -> usize {
    request
        .header("webhook-signature")
        .split(' ')
        .filter(|entry| entry.starts_with("v1,"))
        .count()
}

/// `POST /v1/targets/tg/secrets/rotate` with `body` under `key`.
pub async fn rotate(api: &Api, key: &str, body: Value) -> (u16, Value) {
    api.call(
        "POST",
        "/v1/targets/tg/secrets/rotate",
        Some(body),
        Some(key),
    )
    .await
}

/// `POST /v1/targets/tg/secrets/{id}/expire` under `key`.
pub async fn expire(api: &Api, key: &str, id: &str) -> (u16, Value) {
    api.call(
        "POST",
        &format!("/v1/targets/tg/secrets/{id}/expire"),
        None,
        Some(key),
    )
    .await
}

/// The ids of `GET /v1/targets/tg/secrets`, with the whole body.
pub async fn secrets(api: &Api) -> Value {
    api.get("/v1/targets/tg/secrets").await
}

/// The id of the target's first secret (the one made at creation).
pub async fn first_secret_id(api: &Api) -> String {
    secrets(api).await["items"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

pub fn overlap(seconds: i64) -> Value {
    json!({ "overlap_seconds": seconds })
}
