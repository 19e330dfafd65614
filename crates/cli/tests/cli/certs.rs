//! `switchyard targets certs | upload-cert | activate-cert` and `targets test --cert` against a
//! real control plane and a real TLS receiver that requires client certificates: an upload is
//! idempotent by its id and refused with the field named; the staged certificate is verified,
//! activated, and a receiver that trusts only the old CA fails the verify; roll back by
//! activating the retired one. No file of the data dir ever holds a key.

use switchyard_control_plane::Server;
use switchyard_test_support::plane;

use crate::tls::{Ca, Issued, TlsReceiver};
use crate::{TOKEN, json as parse, run};

/// No file of the data dir (console.db, its WAL, the token file) holds a line of `key`.
fn assert_key_not_in_data_dir(data: &std::path::Path, key: &Issued) {
    let needle = key.key_body();
    for entry in std::fs::read_dir(data).unwrap().flatten() {
        let bytes = std::fs::read(entry.path()).unwrap_or_default();
        for needle in [needle.as_bytes(), key.key_der.as_slice()] {
            assert!(
                !bytes.windows(needle.len()).any(|w| w == needle),
                "a private key is in {}",
                entry.path().display()
            );
        }
    }
}

fn write(dir: &std::path::Path, name: &str, cert: &Issued) -> (String, String) {
    let chain = dir.join(format!("{name}.pem"));
    let key = dir.join(format!("{name}.key"));
    std::fs::write(&chain, &cert.chain_pem).unwrap();
    std::fs::write(&key, &cert.key_pem).unwrap();
    (chain.display().to_string(), key.display().to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_certificate_is_uploaded_verified_activated_and_rolled_back() {
    let dir = tempfile::tempdir().unwrap();
    let (old_ca, new_ca) = (Ca::new("old CA"), Ca::new("new CA"));
    let receiver = TlsReceiver::start(&[&old_ca, &new_ca]).await;
    let mut config = plane::config(&dir.path().join("cp.db"), &[("acme", TOKEN)]);
    config.delivery.target_roots_pem = vec![receiver.server_ca_pem.clone()];
    let server = Server::start(config).await.unwrap();
    let data = dir.path().join("console");
    let out = run(
        &data,
        &[
            "profile",
            "add",
            "prod",
            "--url",
            &server.url(),
            "--token-stdin",
        ],
        Some(TOKEN),
    );
    assert!(out.status.success());
    let spec = format!(r#"{{"url":"{}"}}"#, receiver.url);
    let out = run(
        &data,
        &["targets", "create", "tg", "--spec", &spec, "--wait"],
        None,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let old = old_ca.client("billing-client", 20);
    let new = new_ca.client("billing-client-2027", 400);
    let (old_pem, old_key) = write(dir.path(), "old", &old);
    let (new_pem, new_key) = write(dir.path(), "new", &new);

    // Upload: idempotent by the id; a refusal names the field and stores nothing.
    let upload = |id: &str, pem: &str, key: &str| {
        run(
            &data,
            &[
                "--json",
                "targets",
                "upload-cert",
                "tg",
                "--id",
                id,
                "--cert",
                pem,
                "--key",
                key,
            ],
            None,
        )
    };
    let out = upload("old", &old_pem, &old_key);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let up = parse(&out);
    assert_eq!(
        (&up["created"], &up["certificate"]["state"]),
        (&true.into(), &"staged".into())
    );
    assert_eq!(up["certificate"]["fingerprint_sha256"], old.fingerprint());
    let again = parse(&upload("old", &old_pem, &old_key));
    assert_eq!(
        again["created"], false,
        "a resend is the same upload: {again}"
    );
    let out = run(
        &data,
        &[
            "targets",
            "upload-cert",
            "tg",
            "--id",
            "bad",
            "--cert",
            &old_pem,
            "--key",
            &new_key,
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(3), "refused");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("private_key_pem") && said.contains("nothing was stored"),
        "{said}"
    );

    let out = run(
        &data,
        &[
            "--json",
            "targets",
            "activate-cert",
            "tg",
            "old",
            "--key",
            "act-old",
        ],
        None,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(parse(&out)["state"], "done");

    // Stage the new one and verify it: the receiver sees it in the handshake.
    let out = run(
        &data,
        &[
            "targets",
            "upload-cert",
            "tg",
            "--id",
            "new",
            "--cert",
            &new_pem,
            "--key",
            &new_key,
        ],
        None,
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("next: verify with `switchyard targets test tg --cert new`"),
        "{said}"
    );
    let out = run(&data, &["targets", "test", "tg", "--cert", "new"], None);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(receiver.answered().last(), Some(&new.fingerprint()));

    // A receiver that only trusts the old CA: the verify fails (exit 5) and says why.
    receiver.trust(&[&old_ca]);
    let out = run(&data, &["targets", "test", "tg", "--cert", "new"], None);
    assert_eq!(
        out.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("TLS handshake failed"));
    receiver.trust(&[&old_ca, &new_ca]);

    let out = run(&data, &["targets", "certs", "tg"], None);
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(
        listed.contains("active") && listed.contains("staged"),
        "{listed}"
    );
    assert!(listed.contains("targets activate-cert tg new"), "{listed}");
    let out = run(&data, &["targets", "activate-cert", "tg", "new"], None);
    assert_eq!(out.status.code(), Some(0));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("old is retired") && said.contains("targets activate-cert tg old"),
        "the roll back is spelled out: {said}"
    );

    // Roll back.
    let out = run(&data, &["targets", "activate-cert", "tg", "old"], None);
    assert_eq!(out.status.code(), Some(0));
    let certs = parse(&run(&data, &["--json", "targets", "certs", "tg"], None));
    let states: Vec<(&str, &str)> = certs
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].as_str().unwrap(), c["state"].as_str().unwrap()))
        .collect();
    assert!(states.contains(&("old", "active")) && states.contains(&("new", "retired")));
    let out = run(&data, &["targets", "test", "tg"], None);
    assert_eq!(out.status.code(), Some(0), "the active one is presented");
    assert_eq!(receiver.answered().last(), Some(&old.fingerprint()));

    for key in [&old, &new] {
        assert_key_not_in_data_dir(&data, key);
    }
    server.stop().await.unwrap();
}
