//! `profile remove` never drops queued work silently: with a write and a signing-secret
//! rotation saved locally (the control plane unreachable), it refuses with exit 6 naming both,
//! `--json` carries the code and the counts, and `--discard-queued` removes the profile and
//! names what was lost.

use std::path::Path;

use crate::{json as parse, run};

async fn rows(data: &Path, table: &str) -> i64 {
    let url = format!("sqlite://{}?mode=ro", data.join("console.db").display());
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    let n: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table}"))
        .fetch_one(&pool)
        .await
        .unwrap();
    pool.close().await;
    n
}

/// Profile `off`, at a port nothing listens on: whatever is queued stays queued.
fn add_offline_profile(data: &Path) {
    let add = [
        "profile",
        "add",
        "off",
        "--url",
        "http://127.0.0.1:9",
        "--token-stdin",
    ];
    let out = run(data, &add, Some("a-token-for-a-closed-port"));
    assert!(out.status.success(), "{out:?}");
}

#[tokio::test]
async fn remove_refuses_while_work_is_queued_and_discard_queued_names_the_loss() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("console");
    add_offline_profile(&data);
    let out = run(
        &data,
        &["targets", "rotate-secret", "billing", "--overlap", "1h"],
        None,
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("saved locally"),
        "{out:?}"
    );
    let create = ["endpoints", "create", "orders", "--spec", "{}"];
    assert!(run(&data, &create, None).status.success());

    let out = run(&data, &["profile", "remove", "off"], None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{stderr}");
    assert!(
        stderr.contains("1 write, 1 signing-secret change"),
        "{stderr}"
    );
    // How to send each kind, once, then how to remove losing it.
    assert_eq!(stderr.matches("sync` sends writes").count(), 1, "{stderr}");
    assert!(
        stderr.contains("again with the --key it printed"),
        "{stderr}"
    );
    assert!(stderr.contains("--discard-queued"), "{stderr}");
    assert_eq!(rows(&data, "secret_ops").await, 1, "the rotation is kept");
    assert_eq!(rows(&data, "outbox").await, 1, "the write is kept");

    let out = run(&data, &["--json", "profile", "remove", "off"], None);
    assert_eq!(out.status.code(), Some(6));
    let error = &parse(&out)["error"];
    assert_eq!(error["code"], "queued_work");
    assert_eq!(error["queued"]["total"], 2);
    assert_eq!(error["queued"]["kinds"][0]["kind"], "write");
    assert_eq!(error["queued"]["kinds"][1]["kind"], "secret_change");
    assert_eq!(error["queued"]["kinds"][1]["count"], 1);
    let list = parse(&run(&data, &["--json", "profile", "list"], None));
    assert_eq!(list.as_array().unwrap().len(), 1, "the profile stays");

    let out = run(
        &data,
        &["--json", "profile", "remove", "off", "--discard-queued"],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let removed = parse(&out);
    assert_eq!(removed["removed"], "off");
    assert_eq!(removed["discarded"]["total"], 2);
    assert_eq!(rows(&data, "secret_ops").await, 0);
    assert_eq!(rows(&data, "outbox").await, 0);
    let list = parse(&run(&data, &["--json", "profile", "list"], None));
    assert_eq!(list.as_array().unwrap().len(), 0);
}

#[tokio::test]
async fn discard_queued_names_what_was_lost_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("console");
    add_offline_profile(&data);
    for name in ["orders", "refunds"] {
        let create = ["endpoints", "create", name, "--spec", "{}"];
        assert!(run(&data, &create, None).status.success());
    }
    let out = run(
        &data,
        &["profile", "remove", "off", "--discard-queued"],
        None,
    );
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("removed profile off, discarding 2 writes"),
        "{stdout}"
    );
    // Nothing queued: a plain remove, exit 0.
    add_offline_profile(&data);
    let out = run(&data, &["profile", "remove", "off"], None);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "removed profile off"
    );
}
