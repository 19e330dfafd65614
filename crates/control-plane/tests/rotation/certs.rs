//! Client certificates (mTLS) against a real TLS receiver on loopback that requires a client
//! certificate from the CAs it trusts: deliveries present the active certificate, the verify
//! probe the staged one; a receiver that trusts only the old CA fails the probe; roll back
//! restores delivery; uploads are validated field by field; the key stays out of every
//! response, the stored responses, the database (sealed) and the log.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use switchyard_control_plane::clock::ManualClock;
use switchyard_control_plane::{Server, ServerConfig};

use crate::support::{Api, FAST, Receiver, config, status};
use crate::tls::{Ca, Issued, TlsReceiver};

/// `PUT /v1/targets/tg/client-certificates/{id}`.
pub async fn upload(api: &Api, id: &str, body: Value) -> (u16, Value) {
    api.call(
        "PUT",
        &format!("/v1/targets/tg/client-certificates/{id}"),
        Some(body),
        None,
    )
    .await
}

/// `POST /v1/targets/tg/client-certificates/{id}/activate` under `key`.
pub async fn activate(api: &Api, key: &str, id: &str) -> (u16, Value) {
    api.call(
        "POST",
        &format!("/v1/targets/tg/client-certificates/{id}/activate"),
        None,
        Some(key),
    )
    .await
}

/// The verify probe presenting certificate `id`, under `key`.
pub async fn probe(api: &Api, key: &str, id: &str) -> (u16, Value) {
    api.call(
        "POST",
        "/v1/targets/tg/test",
        Some(json!({"client_certificate_id": id})),
        Some(key),
    )
    .await
}

/// The states of the target's certificates, by id.
async fn states(api: &Api) -> Vec<(String, String)> {
    let listed = api.get("/v1/targets/tg/client-certificates").await;
    let mut states: Vec<(String, String)> = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_owned(),
                c["state"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    states.sort();
    states
}

/// One sync event; whether its first attempt succeeded.
async fn deliver(api: &Api, n: u64) -> Value {
    let id = api.event_id(n).await;
    api.delivery_of(&id).await
}

/// One attempt per delivery: no retry of a refused delivery lands later, in the middle of what
/// a test counts at the receiver.
const ONE_ATTEMPT: &str = "0s";

fn trusting(mut config: ServerConfig, receiver: &TlsReceiver) -> ServerConfig {
    config.delivery.target_roots_pem = vec![receiver.server_ca_pem.clone()];
    config
}

async fn the_rotation(config: ServerConfig, receiver: TlsReceiver, old_ca: &Ca, new_ca: &Ca) {
    let server = Server::start(config).await.unwrap();
    let api = Api::new(server.url());
    api.route(&receiver.url, json!({"mode": "sync"})).await;
    let old = old_ca.client("billing-client", 20);
    let new = new_ca.client("billing-client-2027", 400);

    // No certificate yet: the receiver refuses the handshake.
    let first = deliver(&api, 1).await;
    assert_ne!(first["state"], "succeeded", "{first:#}");
    assert!(receiver.answered().is_empty());

    let (code, staged) = upload(&api, "old", old.upload()).await;
    assert_eq!(code, 201, "{staged}");
    assert_eq!(staged["state"], "staged");
    assert_eq!(staged["fingerprint_sha256"], old.fingerprint());
    assert_eq!(staged["subject"], "CN=billing-client");
    let (code, active) = activate(&api, "activate-old", "old").await;
    assert_eq!(code, 200, "{active}");
    assert_eq!(active["certificate"]["state"], "active");
    let ok = deliver(&api, 2).await;
    assert_eq!(ok["state"], "succeeded", "{ok:#}");
    assert_eq!(receiver.answered().last(), Some(&old.fingerprint()));

    // Stage the new one; the probe presents it, deliveries keep presenting the old one.
    let (code, _) = upload(&api, "new", new.upload()).await;
    assert_eq!(code, 201);
    let (code, result) = probe(&api, "probe-1", "new").await;
    assert_eq!(code, 200, "{result}");
    assert_eq!(result["ok"], true, "{result}");
    assert_eq!(result["client_certificate_presented"], true, "{result}");
    assert_eq!(receiver.answered().last(), Some(&new.fingerprint()));
    assert_eq!(deliver(&api, 3).await["state"], "succeeded");
    assert_eq!(receiver.answered().last(), Some(&old.fingerprint()));

    // A receiver that only trusts the old CA fails the probe with the new certificate.
    receiver.trust(&[old_ca]);
    let answered = receiver.answered().len();
    let (code, result) = probe(&api, "probe-2", "new").await;
    assert_eq!(code, 200, "{result}");
    assert_eq!(result["ok"], false, "{result}");
    assert_eq!(result["error_class"], "tls", "{result}");
    assert_eq!(result["client_certificate_presented"], false, "{result}");
    let error = result["error"].as_str().unwrap();
    assert!(error.starts_with("TLS handshake failed"), "{error}");
    assert!(
        error.contains("UnknownCA"),
        "the receiver's alert is named: {error}"
    );
    assert_eq!(receiver.answered().len(), answered, "nothing was answered");

    // The receiver is updated; activate the new one.
    receiver.trust(&[old_ca, new_ca]);
    let (code, result) = probe(&api, "probe-3", "new").await;
    assert_eq!((code, &result["ok"]), (200, &json!(true)), "{result}");
    let (code, active) = activate(&api, "activate-new", "new").await;
    assert_eq!(code, 200, "{active}");
    assert_eq!(active["previous"], "old");
    assert_eq!(
        states(&api).await,
        [
            ("new".into(), "active".into()),
            ("old".into(), "retired".into())
        ]
    );
    assert_eq!(deliver(&api, 4).await["state"], "succeeded");
    assert_eq!(receiver.answered().last(), Some(&new.fingerprint()));
    let target = api.get("/v1/targets/tg").await;
    assert_eq!(target["status"]["client_certificate"]["id"], "new");
    assert_eq!(
        target["status"]["client_certificate"]["warn_days"],
        Value::Null
    );
    assert_eq!(
        target["status"]["client_certificates"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // The receiver drops the new CA again: deliveries fail; roll back restores them.
    receiver.trust(&[old_ca]);
    assert_ne!(deliver(&api, 5).await["state"], "succeeded");
    let (code, back) = activate(&api, "rollback", "old").await;
    assert_eq!(code, 200, "{back}");
    assert_eq!(back["previous"], "new");
    assert_eq!(
        states(&api).await,
        [
            ("new".into(), "retired".into()),
            ("old".into(), "active".into())
        ]
    );
    assert_eq!(deliver(&api, 6).await["state"], "succeeded");
    assert_eq!(receiver.answered().last(), Some(&old.fingerprint()));
    let target = api.get("/v1/targets/tg").await;
    assert_eq!(target["status"]["client_certificate"]["warn_days"], 30);

    // A keyed replay of the roll back is the stored answer and changes nothing.
    assert_eq!(activate(&api, "rollback", "old").await, (200, back));
    server.stop().await.unwrap();
}

#[tokio::test]
async fn deliveries_present_the_active_certificate_and_the_probe_the_staged_one() {
    let dir = tempfile::tempdir().unwrap();
    let (old_ca, new_ca) = (Ca::new("old CA"), Ca::new("new CA"));
    let receiver = TlsReceiver::start(&[&old_ca, &new_ca]).await;
    let config = trusting(config(&dir.path().join("cp.db"), ONE_ATTEMPT), &receiver);
    the_rotation(config, receiver, &old_ca, &new_ca).await;
}

#[tokio::test]
async fn the_certificate_rotation_on_postgres() {
    let pg = crate::postgres::TestDatabase::create().await;
    let dir = tempfile::tempdir().unwrap();
    let (old_ca, new_ca) = (Ca::new("old CA"), Ca::new("new CA"));
    let receiver = TlsReceiver::start(&[&old_ca, &new_ca]).await;
    let key_file = dir.path().join("main-key");
    switchyard_control_plane::sealing::Sealer::ephemeral()
        .write_file(&key_file)
        .unwrap();
    let mut config = trusting(
        config(&dir.path().join("unused.db"), ONE_ATTEMPT),
        &receiver,
    );
    config.db_url = pg.url.clone();
    config.main_key_file = Some(key_file);
    the_rotation(config, receiver, &old_ca, &new_ca).await;
}

fn field(answer: &(u16, Value)) -> (u16, &str, &str) {
    (
        answer.0,
        answer.1["code"].as_str().unwrap_or_default(),
        answer.1["field"].as_str().unwrap_or_default(),
    )
}

#[tokio::test]
async fn uploads_are_checked_and_each_refusal_names_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(config(&dir.path().join("cp.db"), FAST))
        .await
        .unwrap();
    let api = Api::new(server.url());
    api.route("http://127.0.0.1:9/hook", json!({})).await;
    let ca = Ca::new("test CA");
    let good = ca.client("good", 30);
    let other = ca.client("other", 30);
    let body = |chain: &str, key: &str| json!({"certificate_pem": chain, "private_key_pem": key});
    let refused = "validation_failed";

    let garbage = upload(&api, "c1", body("not a certificate", &good.key_pem)).await;
    assert_eq!(
        field(&garbage),
        (400, refused, "certificate_pem"),
        "{garbage:?}"
    );
    let broken = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
    let answer = upload(&api, "c1", body(broken, &good.key_pem)).await;
    assert_eq!(
        field(&answer),
        (400, refused, "certificate_pem"),
        "{answer:?}"
    );
    let answer = upload(&api, "c1", body(&good.chain_pem, "garbage")).await;
    assert_eq!(
        field(&answer),
        (400, refused, "private_key_pem"),
        "{answer:?}"
    );
    let mismatch = upload(&api, "c1", body(&good.chain_pem, &other.key_pem)).await;
    assert_eq!(
        field(&mismatch),
        (400, refused, "private_key_pem"),
        "{mismatch:?}"
    );
    assert!(
        mismatch.1["detail"]
            .as_str()
            .unwrap()
            .contains("not the key"),
        "{mismatch:?}"
    );
    let expired = ca.client_valid("expired", -30, -1);
    let answer = upload(&api, "c1", expired.upload()).await;
    assert_eq!(
        field(&answer),
        (400, refused, "certificate_pem"),
        "{answer:?}"
    );
    assert!(answer.1["detail"].as_str().unwrap().contains("expired"));
    let reversed = format!("{}{}", ca.pem(), good.chain_pem.replace(&ca.pem(), ""));
    let answer = upload(&api, "c1", body(&reversed, &good.key_pem)).await;
    assert_eq!(
        field(&answer),
        (400, refused, "certificate_pem"),
        "{answer:?}"
    );
    assert!(answer.1["detail"].as_str().unwrap().contains("issued"));
    let foreign = Ca::new("foreign CA");
    let stray = format!("{}{}", good.chain_pem.replace(&ca.pem(), ""), foreign.pem());
    let answer = upload(&api, "c1", body(&stray, &good.key_pem)).await;
    assert_eq!(
        field(&answer),
        (400, refused, "certificate_pem"),
        "{answer:?}"
    );
    let with_key = format!("{}{}", good.chain_pem, good.key_pem);
    let answer = upload(&api, "c1", body(&with_key, &good.key_pem)).await;
    assert_eq!(
        field(&answer),
        (400, refused, "certificate_pem"),
        "{answer:?}"
    );
    let answer = upload(&api, "c/1", good.upload()).await;
    assert_eq!(answer.0, 404, "a path with a slash is no route: {answer:?}");
    let answer = upload(&api, "c%201", good.upload()).await;
    assert_eq!(field(&answer), (400, refused, "id"), "{answer:?}");
    let answer = upload(&api, "c1", json!({"certificate_pem": good.chain_pem})).await;
    assert_eq!(field(&answer), (400, refused, "body"), "{answer:?}");
    for refusal in [&garbage, &mismatch] {
        assert!(!refusal.1.to_string().contains(&good.key_body()));
    }
    assert!(states(&api).await.is_empty(), "nothing refused was stored");

    // Idempotent by id: the same upload again is 200, another under the id 422.
    let (code, created) = upload(&api, "c1", good.upload()).await;
    assert_eq!(code, 201, "{created}");
    assert_eq!(upload(&api, "c1", good.upload()).await, (200, created));
    let reused = upload(&api, "c1", other.upload()).await;
    assert_eq!(
        (reused.0, reused.1["code"].as_str().unwrap()),
        (422, "certificate_reused")
    );
    assert_eq!(states(&api).await, [("c1".into(), "staged".into())]);
    let (code, missing) = api
        .call(
            "PUT",
            "/v1/targets/nope/client-certificates/c1",
            Some(good.upload()),
            None,
        )
        .await;
    assert_eq!((code, &missing["code"]), (404, &json!("not_found")));
    let (code, missing) = activate(&api, "activate-missing", "c9").await;
    assert_eq!((code, &missing["code"]), (404, &json!("not_found")));
    server.stop().await.unwrap();
}

/// Over http there is no TLS handshake: the receiver's 200 says nothing about the
/// certificate, and the answer says none was presented.
#[tokio::test]
async fn a_probe_over_http_says_no_certificate_was_presented() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(config(&dir.path().join("cp.db"), FAST))
        .await
        .unwrap();
    let api = Api::new(server.url());
    let receiver = Receiver::start(|_| status(200));
    api.route(&receiver.url, json!({})).await;
    let cert = Ca::new("test CA").client("plain", 60);
    assert_eq!(upload(&api, "plain", cert.upload()).await.0, 201);
    let (code, result) = probe(&api, "p-http", "plain").await;
    assert_eq!(code, 200, "{result}");
    assert_eq!(result["ok"], true, "the receiver answered 200: {result}");
    assert_eq!(result["status_code"], 200, "{result}");
    assert_eq!(
        result["client_certificate_presented"], false,
        "no handshake over http: {result}"
    );
    assert_eq!(receiver.count(), 1);
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_retired_certificate_can_be_activated_again_until_it_expires() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(chrono::Utc::now().timestamp_millis());
    let mut config = config(&dir.path().join("cp.db"), FAST);
    config.clock = Arc::new(clock.clone());
    let server = Server::start(config).await.unwrap();
    let api = Api::new(server.url());
    api.route("http://127.0.0.1:9/hook", json!({})).await;
    let ca = Ca::new("test CA");
    let short: Issued = ca.client("short", 3);
    let long = ca.client("long", 60);
    assert_eq!(upload(&api, "short", short.upload()).await.0, 201);
    assert_eq!(upload(&api, "long", long.upload()).await.0, 201);
    assert_eq!(activate(&api, "a-1", "short").await.0, 200);
    let target = api.get("/v1/targets/tg").await;
    let expiry = &target["status"]["client_certificate"];
    assert_eq!(
        (&expiry["id"], &expiry["warn_days"]),
        (&json!("short"), &json!(7))
    );
    assert_eq!(activate(&api, "a-2", "long").await.0, 200);
    assert_eq!(activate(&api, "a-3", "short").await.0, 200, "roll back");
    assert_eq!(activate(&api, "a-4", "long").await.0, 200);

    clock.advance_ms(Duration::from_secs(5 * 86_400).as_millis() as i64);
    let (code, problem) = activate(&api, "a-5", "short").await;
    assert_eq!(
        (code, &problem["code"]),
        (409, &json!("certificate_expired")),
        "{problem}"
    );
    let (code, problem) = probe(&api, "p-1", "short").await;
    assert_eq!(
        (code, &problem["code"]),
        (409, &json!("certificate_expired")),
        "{problem}"
    );
    assert_eq!(
        states(&api).await,
        [
            ("long".into(), "active".into()),
            ("short".into(), "retired".into())
        ]
    );
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_main_key_rotation_reseals_client_certificate_keys() {
    use switchyard_control_plane::sealing::{Sealer, default_key_path};
    use switchyard_control_plane::store::open_with;

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cp.db");
    let url = format!("sqlite://{}", db.display());
    let server = Server::start(config(&db, FAST)).await.unwrap();
    let api = Api::new(server.url());
    api.route("http://127.0.0.1:9/hook", json!({})).await;
    let cert = Ca::new("test CA").client("client", 30);
    assert_eq!(upload(&api, "c1", cert.upload()).await.0, 201);
    server.stop().await.unwrap();

    let rotated = dir.path().join("rotated-key");
    Sealer::from_file(&default_key_path(&url).unwrap())
        .unwrap()
        .with_new_key()
        .write_file(&rotated)
        .unwrap();
    let store = open_with(&url, 2, Arc::new(Sealer::from_file(&rotated).unwrap()))
        .await
        .unwrap();
    let mut resealed = 0;
    loop {
        let n = store.reseal_batch(100).await.unwrap();
        if n == 0 {
            break;
        }
        resealed += n;
    }
    assert!(resealed >= 2, "the signing secret and the key: {resealed}");
    // Only the new main key now: the key still opens.
    let only_new = Arc::new(Sealer::from_file(&rotated).unwrap().only_current());
    let store = open_with(&url, 2, only_new).await.unwrap();
    store.check_sealed().await.unwrap();
    let identity = store
        .client_identity("acme", "tg", "c1")
        .await
        .unwrap()
        .unwrap();
    assert!(identity.private_key_pem.contains(&cert.key_body()));
}
