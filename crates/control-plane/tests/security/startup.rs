//! What `serve` refuses to start with, and what a loopback-only server refuses to answer:
//! `--demo` beside real tenants or on a reachable listener, a token given to two tenants,
//! and (for `--demo` and the desktop's sandbox) a request whose `Host` is not loopback — what
//! a web page's request carries when the page rebinds its own name to 127.0.0.1.

use super::*;

const DEMO_TOKEN: &str = switchyard_control_plane::demo::DEMO_TOKEN;

#[tokio::test]
async fn demo_is_refused_beside_real_tenants_and_on_a_reachable_listener() {
    let dir = tempfile::tempdir().unwrap();
    let tenant = format!("acme:{TOKEN}");
    let refused = spawn(
        dir.path(),
        &["--demo", "--listen", "127.0.0.1:0", "--tenant", &tenant],
        |_| {},
    )
    .await
    .err()
    .expect("--demo with --tenant refused");
    assert!(
        refused.contains("--demo cannot be combined with --tenant"),
        "{refused}"
    );
    let tenants_env = spawn(dir.path(), &["--demo", "--listen", "127.0.0.1:0"], |c| {
        c.env("SWITCHYARD_TENANTS", &tenant);
    })
    .await
    .err()
    .expect("--demo with SWITCHYARD_TENANTS refused");
    assert!(tenants_env.contains("SWITCHYARD_TENANTS"), "{tenants_env}");
    let refused = spawn(dir.path(), &["--demo", "--listen", "0.0.0.0:0"], |_| {})
        .await
        .err()
        .expect("--demo on 0.0.0.0 refused");
    assert!(
        refused.contains("--demo needs a loopback --listen") && refused.contains("0.0.0.0:0"),
        "{refused}"
    );
    assert!(!refused.contains("panicked"), "{refused}");
}

#[tokio::test]
async fn a_demo_answers_only_requests_addressed_to_loopback() {
    let dir = tempfile::tempdir().unwrap();
    let cp = spawn(dir.path(), &["--demo", "--listen", "127.0.0.1:0"], |_| {})
        .await
        .unwrap();
    let log = std::fs::read_to_string(dir.path().join("cp.log")).unwrap();
    assert!(log.contains("demo mode"), "{log}");
    let port = cp.url.rsplit(':').next().unwrap().to_owned();
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let get = |host: Option<String>| {
        let mut request = client
            .get(format!("{}/v1/flows", cp.url))
            .bearer_auth(DEMO_TOKEN);
        if let Some(host) = host {
            request = request.header("Host", host);
        }
        request.send()
    };
    let ok = get(None).await.unwrap();
    assert_eq!(ok.status(), 200);
    for host in ["localhost", "127.0.0.1", "[::1]"] {
        let ok = get(Some(format!("{host}:{port}"))).await.unwrap();
        assert_eq!(ok.status(), 200, "{host}");
    }
    // A page on rebind.example whose name now resolves to 127.0.0.1.
    let refused = get(Some(format!("rebind.example:{port}"))).await.unwrap();
    assert_eq!(refused.status(), 400);
    let problem: Value = refused.json().await.unwrap();
    assert_eq!(problem["code"], "validation_failed", "{problem}");
    assert_eq!(problem["field"], "Host", "{problem}");
    stop(cp).await;
}

#[tokio::test]
async fn the_sandbox_answers_only_requests_addressed_to_loopback() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = switchyard_control_plane::sandbox::Sandbox::start(dir.path())
        .await
        .unwrap();
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let port = sandbox.server.addr.port();
    let get = |host: String| {
        client
            .get(format!("{}/v1/targets", sandbox.url()))
            .bearer_auth(&sandbox.token)
            .header("Host", host)
            .send()
    };
    assert_eq!(
        get(format!("localhost:{port}")).await.unwrap().status(),
        200
    );
    let refused = get(format!("rebind.example:{port}")).await.unwrap();
    assert_eq!(refused.status(), 400);
    let problem: Value = refused.json().await.unwrap();
    assert_eq!(problem["field"], "Host", "{problem}");
    sandbox.server.stop().await.unwrap();
}

#[tokio::test]
async fn a_token_given_to_two_tenants_stops_start_up() {
    let dir = tempfile::tempdir().unwrap();
    let tenants = dir.path().join("tenants");
    std::fs::write(&tenants, "acme:shared-token-1\nbeta:shared-token-1\n").unwrap();
    let refused = spawn(
        dir.path(),
        &[
            "--listen",
            "127.0.0.1:0",
            "--tenants-file",
            tenants.to_str().unwrap(),
        ],
        |_| {},
    )
    .await
    .err()
    .expect("start-up refused");
    assert!(
        refused.contains("tenants \"acme\" and \"beta\" are given the same token"),
        "{refused}"
    );
    assert!(
        !refused.contains("shared-token-1"),
        "the token is not shown: {refused}"
    );
    // The same line twice (a file and the variable during a rotation) is one tenant.
    let cp = spawn(
        dir.path(),
        &["--listen", "127.0.0.1:0", "--tenant", "acme:shared-token-1"],
        |c| {
            c.env("SWITCHYARD_TENANTS", "acme:shared-token-1");
        },
    )
    .await
    .unwrap();
    stop(cp).await;
}

#[tokio::test]
async fn forbid_cidr_is_checked_at_start_and_holds_beside_allow_private_targets() {
    let dir = tempfile::tempdir().unwrap();
    let refused = serve(dir.path(), &["--forbid-cidr", "10.0.0.0/33"])
        .await
        .err()
        .expect("a bad range refused");
    assert!(
        refused.contains("--forbid-cidr") && refused.contains("10.0.0.0/33"),
        "{refused}"
    );
    let cp = serve(dir.path(), &["--forbid-cidr", "127.0.0.0/8"])
        .await
        .unwrap();
    let (status, body) = create_target(&cp.url, "tg", "http://127.0.0.1:9/hook").await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["code"], "target_address_forbidden", "{body}");
    let (status, body) = create_target(&cp.url, "tg2", "http://10.1.2.3:9/hook").await;
    assert_eq!(status, 201, "other private addresses stay allowed: {body}");
    stop(cp).await;
}
