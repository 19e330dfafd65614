//! A client certificate's private key goes in once, in its upload, and never comes out: not in
//! any response (upload, replayed upload, list, activation and its keyed replay, the probe,
//! the target), not in a stored response of the idempotency store (read from its table and
//! opened with the main key), not in clear in the database files, and not in the server's log
//! at debug level. Runs the real binary, trusting the receiver's CA with `--target-ca-file`.

use serde_json::{Value, json};
use switchyard_control_plane::sealing::{Sealer, response_aad};

use crate::certs::{activate, probe, upload};
use crate::tls::{Ca, TlsReceiver};

#[tokio::test]
async fn private_keys_stay_out_of_responses_stored_responses_the_database_and_logs() {
    let dir = tempfile::tempdir().unwrap();
    let ca = Ca::new("client CA");
    let receiver = TlsReceiver::start(&[&ca]).await;
    let ca_file = dir.path().join("receiver-ca.pem");
    std::fs::write(&ca_file, &receiver.server_ca_pem).unwrap();
    let log_path = dir.path().join("stderr.log");
    let db = dir.path().join("cp.db");
    let (mut child, api) = crate::serve_logged(
        &db,
        &log_path,
        &["--target-ca-file".as_ref(), ca_file.as_os_str()],
    )
    .await;
    api.route(&receiver.url, json!({"mode": "sync"})).await;
    let cert = ca.client("billing-client", 30);
    let other = ca.client("other-client", 30);

    let mut answers: Vec<Value> = Vec::new();
    let (code, body) = upload(&api, "c1", cert.upload()).await;
    assert_eq!(code, 201, "{body}");
    answers.push(body);
    answers.push(upload(&api, "c1", cert.upload()).await.1);
    answers.push(upload(&api, "c1", other.upload()).await.1); // 422
    let mismatched = json!({"certificate_pem": cert.chain_pem, "private_key_pem": other.key_pem});
    answers.push(upload(&api, "c2", mismatched).await.1); // 400
    let (code, probed) = probe(&api, "probe-1", "c1").await;
    assert_eq!((code, &probed["ok"]), (200, &json!(true)), "{probed}");
    answers.push(probed);
    let (code, activated) = activate(&api, "activate-1", "c1").await;
    assert_eq!(code, 200, "{activated}");
    answers.push(activated);
    answers.push(activate(&api, "activate-1", "c1").await.1);
    answers.push(api.get("/v1/targets/tg/client-certificates").await);
    answers.push(api.get("/v1/targets/tg").await);
    answers.push(api.get("/v1/targets").await);
    let event = api.event_id(1).await;
    assert_eq!(api.delivery_of(&event).await["state"], "succeeded");
    assert_eq!(
        receiver.answered(),
        [cert.fingerprint(), cert.fingerprint()]
    );
    for answer in &answers {
        let text = answer.to_string();
        for key in [&cert, &other] {
            assert!(!text.contains(&key.key_body()), "a key leaked into {text}");
            assert!(!text.contains("PRIVATE KEY"), "a key leaked into {text}");
        }
    }

    child.start_kill().unwrap();
    child.wait().await.unwrap();
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(
        log.contains("client certificate staged"),
        "the log is captured: {log}"
    );
    for key in [&cert, &other] {
        assert!(
            !log.contains(&key.key_body()),
            "a key is in the server's log"
        );
    }

    // The idempotency store's rows: every stored response, opened with the main key.
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    let sealer = Sealer::from_file(&dir.path().join("cp.db.main-key")).unwrap();
    let stored: Vec<(String, String, Vec<u8>)> = sqlx::query_as(
        "SELECT tenant, key, response_body FROM idempotency_keys WHERE response_body IS NOT NULL",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    let mut opened = Vec::new();
    for (tenant, key, body) in &stored {
        let plain = sealer.open(body, &response_aad(tenant, key)).unwrap();
        opened.push((key.clone(), String::from_utf8(plain).unwrap()));
    }
    assert!(
        opened
            .iter()
            .any(|(key, body)| key == "activate-1" && body.contains("c1")),
        "the activation's response is stored: {opened:?}"
    );
    for (key, body) in &opened {
        assert!(
            !body.contains(&cert.key_body()),
            "{key}'s stored response holds the key"
        );
    }
    let keys: Vec<String> = sqlx::query_scalar("SELECT private_key FROM client_certificates")
        .fetch_all(&pool)
        .await
        .unwrap();
    assert_eq!(keys.len(), 1);
    assert!(keys[0].starts_with("sy1:"), "the key is sealed");
    pool.close().await;
    for file in ["cp.db", "cp.db-wal"] {
        let Ok(bytes) = std::fs::read(dir.path().join(file)) else {
            continue;
        };
        for needle in [cert.key_body().as_bytes(), cert.key_der.as_slice()] {
            assert!(
                !bytes.windows(needle.len()).any(|w| w == needle),
                "{file} holds the key in clear"
            );
        }
    }
}
