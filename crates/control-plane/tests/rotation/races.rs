//! Racing rotations through the API: copies sent at once to two servers on one database (two
//! replicas on PostgreSQL; two processes' worth of writers on one SQLite file) make one new
//! secret, and the winner's value is the one that signs.

use serde_json::{Value, json};
use switchyard_control_plane::Server;

use crate::support::{Api, FAST, Receiver, config, status};
use crate::{rotate, secrets, signature_count, verifies};

async fn race(servers: [&Server; 2]) {
    let apis = servers.map(|s| Api::new(s.url()));
    let receiver = Receiver::start(|_| status(200));
    let first = apis[0].route(&receiver.url, json!({"mode": "sync"})).await;
    let racers = (0..8).map(|n| {
        let api = apis[n % 2].clone();
        tokio::spawn(async move { rotate(&api, &format!("race-{n}"), json!({})).await })
    });
    let answers: Vec<(u16, Value)> = futures::future::join_all(racers)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let won: Vec<&Value> = answers
        .iter()
        .filter(|(code, _)| *code == 201)
        .map(|(_, body)| body)
        .collect();
    assert_eq!(won.len(), 1, "one rotation wins: {answers:?}");
    for (code, body) in &answers {
        assert!(
            *code == 201 || (*code == 409 && body["code"] == "rotation_in_progress"),
            "{code} {body}"
        );
    }
    let listed = secrets(&apis[1]).await;
    assert_eq!(listed["items"].as_array().unwrap().len(), 2, "{listed}");
    assert_eq!(listed["items"][1]["id"], won[0]["secret"]["id"]);
    apis[1].event_id(1).await;
    let r = receiver.received().pop().unwrap();
    assert_eq!(signature_count(&r), 2);
    assert!(verifies(&first, &r));
    assert!(verifies(won[0]["secret"]["value"].as_str().unwrap(), &r));
}

#[tokio::test]
async fn racing_rotations_on_sqlite_make_one_secret() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cp.db");
    let a = Server::start(config(&db, FAST)).await.unwrap();
    let b = Server::start(config(&db, FAST)).await.unwrap();
    race([&a, &b]).await;
    a.stop().await.unwrap();
    b.stop().await.unwrap();
}

#[tokio::test]
async fn racing_rotations_on_two_postgres_replicas_make_one_secret() {
    let pg = crate::postgres::TestDatabase::create().await;
    let dir = tempfile::tempdir().unwrap();
    let key_file = dir.path().join("main-key");
    switchyard_control_plane::sealing::Sealer::ephemeral()
        .write_file(&key_file)
        .unwrap();
    let replica = || {
        let mut config = config(&dir.path().join("unused.db"), FAST);
        config.db_url = pg.url.clone();
        config.main_key_file = Some(key_file.clone());
        config
    };
    let a = Server::start(replica()).await.unwrap();
    let b = Server::start(replica()).await.unwrap();
    race([&a, &b]).await;
    a.stop().await.unwrap();
    b.stop().await.unwrap();
}

/// Activations of different client certificates of one target, raced through two replicas
/// on PostgreSQL: each answers 200 (they serialise on the target's row, none fails on the
/// one-active index), and one certificate is active afterwards, the others retired.
#[tokio::test]
async fn racing_certificate_activations_on_two_postgres_replicas_leave_one_active() {
    let pg = crate::postgres::TestDatabase::create().await;
    let dir = tempfile::tempdir().unwrap();
    let key_file = dir.path().join("main-key");
    switchyard_control_plane::sealing::Sealer::ephemeral()
        .write_file(&key_file)
        .unwrap();
    let replica = || {
        let mut config = config(&dir.path().join("unused.db"), FAST);
        config.db_url = pg.url.clone();
        config.main_key_file = Some(key_file.clone());
        config
    };
    let servers = [
        Server::start(replica()).await.unwrap(),
        Server::start(replica()).await.unwrap(),
    ];
    let apis = [Api::new(servers[0].url()), Api::new(servers[1].url())];
    apis[0].route("http://127.0.0.1:9/hook", json!({})).await;
    let ca = crate::tls::Ca::new("race CA");
    for n in 0..4 {
        let cert = ca.client(&format!("client-{n}"), 30);
        let (code, body) = crate::certs::upload(&apis[0], &format!("c{n}"), cert.upload()).await;
        assert_eq!(code, 201, "{body}");
    }
    for round in 0..3 {
        let racers = (0..8).map(|n| {
            let api = apis[n % 2].clone();
            let id = format!("c{}", n % 4);
            tokio::spawn(async move {
                crate::certs::activate(&api, &format!("race-{round}-{n}"), &id).await
            })
        });
        let answers: Vec<(u16, Value)> = futures::future::join_all(racers)
            .await
            .into_iter()
            .map(Result::unwrap)
            .collect();
        for (code, body) in &answers {
            assert_eq!(*code, 200, "{body}");
        }
        let listed = apis[1].get("/v1/targets/tg/client-certificates").await;
        let active = listed["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["state"] == "active")
            .count();
        assert_eq!(active, 1, "{listed}");
    }
    for server in servers {
        server.stop().await.unwrap();
    }
}
