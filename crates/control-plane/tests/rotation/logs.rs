//! A secret's value is shown once, in the rotate response: never in a listing, an error, the
//! server's log (at debug level) or the database (stored responses are sealed too).

use serde_json::json;

use crate::support::{Receiver, status};
use crate::{expire, first_secret_id, rotate, secrets};

#[tokio::test]
async fn secret_values_stay_out_of_listings_errors_logs_and_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("stderr.log");
    let db = dir.path().join("cp.db");
    let (mut child, api) = crate::serve_logged(&db, &log_path, &[]).await;
    let receiver = Receiver::start(|_| status(200));
    let first = api.route(&receiver.url, json!({"mode": "sync"})).await;
    let first_id = first_secret_id(&api).await;

    let (code, rotated) = rotate(&api, "rotate-1", json!({"overlap_seconds": 600})).await;
    assert_eq!(code, 201, "{rotated}");
    let value = rotated["secret"]["value"].as_str().unwrap().to_owned();
    let id = rotated["secret"]["id"].as_str().unwrap().to_owned();
    let mut answers = vec![
        rotate(&api, "rotate-1", json!({"overlap_seconds": 600}))
            .await
            .1,
    ];
    assert_eq!(
        answers[0], rotated,
        "the replay shows it again, and only it"
    );
    answers.pop();

    // Everything else a client may read about the target and its secrets.
    answers.push(secrets(&api).await);
    answers.push(api.get("/v1/targets/tg").await);
    answers.push(api.get("/v1/targets").await);
    answers.push(rotate(&api, "rotate-2", json!({})).await.1); // 409 rotation_in_progress
    answers.push(
        rotate(&api, "rotate-3", json!({"overlap_seconds": 1e9}))
            .await
            .1,
    ); // 400
    let test = json!({"secret_id": id});
    answers.push(
        api.call("POST", "/v1/targets/tg/test", Some(test), Some("t-1"))
            .await
            .1,
    );
    api.event_id(1).await;
    answers.push(expire(&api, "promote-1", &first_id).await.1);
    answers.push(expire(&api, "expire-last", &id).await.1); // 409 last_secret
    let test = json!({"secret_id": first_id});
    answers.push(
        api.call("POST", "/v1/targets/tg/test", Some(test), Some("t-2"))
            .await
            .1,
    ); // 409
    assert_eq!(receiver.count(), 2, "the verify step and one delivery");
    for answer in &answers {
        let text = answer.to_string();
        assert!(!text.contains(&value), "the value leaked into {text}");
        assert!(!text.contains(&first), "the first value leaked into {text}");
    }

    child.start_kill().unwrap();
    child.wait().await.unwrap();
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(
        log.contains("rotate"),
        "the log is captured (debug level): {log}"
    );
    for secret in [&value, &first] {
        let key = secret.strip_prefix("whsec_").unwrap();
        assert!(!log.contains(key), "a secret is in the server's log");
    }
    // Neither the secrets table nor the stored rotate response holds it in clear.
    for file in ["cp.db", "cp.db-wal"] {
        let Ok(bytes) = std::fs::read(dir.path().join(file)) else {
            continue;
        };
        let key = value.strip_prefix("whsec_").unwrap().as_bytes();
        assert!(
            !bytes.windows(key.len()).any(|w| w == key),
            "{file} holds the secret in clear"
        );
    }
}
