//! `switchyard gitops …` as CI would use it: `plan --json` exit codes (0 nothing to do, 2
//! changes, 1 error), `apply --wait`, `status`, against a real repository and server.

use std::path::Path;
use std::process::Command;

use switchyard_control_plane::Server;
use switchyard_test_support::plane;

use crate::{TOKEN, json, run};

pub(crate) fn git(repo: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["-c", "user.name=CI", "-c", "user.email=ci@example.invalid"])
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

pub(crate) fn commit(repo: &Path, file: &str, content: &str) {
    std::fs::create_dir_all(repo.join("deploy")).unwrap();
    std::fs::write(repo.join("deploy").join(file), content).unwrap();
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", file]);
}

const MANIFESTS: &str = "kind: endpoint\nname: orders\nspec:\n  description: Orders\n---\nkind: target\nname: billing\nspec:\n  url: https://billing.example/hook\n---\nkind: flow\nname: orders-to-billing\nspec:\n  endpoint: orders\n  target: billing\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_exit_codes_apply_wait_and_status() {
    let dir = tempfile::tempdir().unwrap();
    let config = plane::config(&dir.path().join("cp.db"), &[("acme", TOKEN)]);
    let server = Server::start(config).await.unwrap();
    let data = dir.path().join("console");
    let repo = dir.path().join("config");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    commit(&repo, "delivery.yaml", MANIFESTS);
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
    let repo_arg = repo.display().to_string();
    let source = ["--repo", repo_arg.as_str(), "--path", "deploy"];
    let gitops = |cmd: &str, extra: &[&str]| {
        let mut args = vec!["--json", "gitops", cmd];
        args.extend_from_slice(&source);
        args.extend_from_slice(extra);
        run(&data, &args, None)
    };

    // Changes: exit 2, the plan on stdout.
    let out = gitops("plan", &[]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let plan = json(&out);
    assert_eq!(plan["summary"]["create"], 3);
    assert_eq!(plan["items"][0]["action"], "create");

    // Apply and wait: exit 0 once every wave is confirmed.
    let out = gitops("apply", &["--wait"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = json(&out);
    assert_eq!(report["queued"], 3);
    assert_eq!(report["progress"]["complete"], true);

    // Nothing to do: exit 0; status in sync: exit 0.
    let out = gitops("plan", &[]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(json(&out)["summary"]["unchanged"], 3);
    let out = gitops("status", &[]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(json(&out)["in_sync"], 3);

    // A new commit: status says behind (exit 2).
    commit(
        &repo,
        "more.yaml",
        "kind: endpoint\nname: refunds\nspec: {}\n",
    );
    let out = gitops("status", &[]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(json(&out)["behind"], true);

    // A bad manifest: exit 1, the error names file, document and field.
    commit(
        &repo,
        "bad.yaml",
        "kind: endpoint\nname: ok\nspec: {}\n---\nkind: target\nname: t\nspec:\n  url: ftp://x\n",
    );
    let out = gitops("plan", &[]);
    assert_eq!(out.status.code(), Some(1));
    let error = &json(&out)["error"];
    assert_eq!(error["code"], "invalid_manifest");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("deploy/bad.yaml, document 2: spec.url"),
        "{message}"
    );

    // Human output names what changes.
    git(&repo, &["rm", "-q", "deploy/bad.yaml"]);
    git(&repo, &["commit", "-q", "-m", "fix"]);
    let out = run(
        &data,
        &["gitops", "plan", "--repo", &repo_arg, "--path", "deploy"],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("+ create    endpoint/refunds"), "{text}");
    assert!(text.contains("1 to create"), "{text}");
}

/// A repository with [`MANIFESTS`] committed and a profile `prod` on `server`.
fn setup(dir: &Path, server: &Server) -> (std::path::PathBuf, String) {
    let data = dir.join("console");
    let repo = dir.join("config");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    commit(&repo, "delivery.yaml", MANIFESTS);
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
    (data, repo.display().to_string())
}

async fn version(server: &Server, path: &str) -> i64 {
    let body: serde_json::Value = reqwest::Client::new()
        .get(format!("{}/v1/{path}", server.url()))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    body["version"].as_i64().unwrap()
}

/// D2 of issue 45: an apply reports only the writes it queued itself. Re-applying an applied
/// commit sends nothing and says so (no stale waves of the earlier apply); a self-heal apply
/// of one drifted resource reports that one write, not the commit's resources.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_reports_only_its_own_writes() {
    let dir = tempfile::tempdir().unwrap();
    let config = plane::config(&dir.path().join("cp.db"), &[("acme", TOKEN)]);
    let server = Server::start(config).await.unwrap();
    let (data, repo) = setup(dir.path(), &server);
    let apply = |extra: &[&str]| {
        let mut args = vec!["gitops", "apply", "--repo", &repo, "--path", "deploy"];
        args.extend_from_slice(extra);
        run(&data, &args, None)
    };

    let out = apply(&["--wait"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("wave 1 (targets and endpoints): 2/2 confirmed"),
        "{text}"
    );
    assert!(text.contains("wave 2 (flows): 1/1 confirmed"), "{text}");

    // Again, same commit: nothing queued, nothing sent, no wave lines.
    for _ in 0..2 {
        let out = apply(&["--wait"]);
        assert_eq!(out.status.code(), Some(0));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(!text.contains("wave "), "stale waves: {text}");
        assert!(
            text.contains("nothing to apply: the control plane already matches"),
            "{text}"
        );
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains("wave "),
            "stale progress"
        );
    }
    let out = run(
        &data,
        &[
            "--json", "gitops", "apply", "--repo", &repo, "--path", "deploy",
        ],
        None,
    );
    let report = json(&out);
    assert_eq!(report["queued"], 0);
    assert_eq!(report["op_ids"], serde_json::json!([]));
    let totals: Vec<u64> = report["progress"]["waves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["total"].as_u64().unwrap())
        .collect();
    assert_eq!(totals, [0, 0, 0, 0]);
    assert_eq!(version(&server, "endpoints/orders").await, 1);
    assert_eq!(version(&server, "targets/billing").await, 1);

    // Drift one resource outside Git; --self-heal writes that one back and counts one write.
    let status = reqwest::Client::new()
        .patch(format!("{}/v1/endpoints/orders", server.url()))
        .bearer_auth(TOKEN)
        .header("idempotency-key", "hand-edit-1")
        .json(&serde_json::json!({"spec": {"description": "hand edit"}}))
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, 200);
    let out = apply(&["--self-heal", "--wait"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("wave 1 (targets and endpoints): 1/1 confirmed"),
        "{text}"
    );
    assert!(!text.contains("wave 2"), "{text}");
    assert_eq!(version(&server, "endpoints/orders").await, 3);
    assert_eq!(version(&server, "targets/billing").await, 1);
}

/// D3 and D10 of issue 45: the plan judges target URLs by the address policy the server
/// advertises (`/v1/info`), and names every problem of a commit in one pass — address,
/// reference, field and syntax problems together — so nothing the server would refuse is
/// planned, and CI sees all there is to fix at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_refuses_what_the_server_refuses_and_names_every_problem_at_once() {
    use switchyard_control_plane::delivery::addresses::Cidr;

    let dir = tempfile::tempdir().unwrap();
    let mut config = plane::config(&dir.path().join("cp.db"), &[("acme", TOKEN)]);
    config.delivery.allow_private_targets = false;
    config.delivery.forbid_cidrs = vec![Cidr::parse("203.0.113.0/24").unwrap()];
    let server = Server::start(config).await.unwrap();
    let (data, repo) = setup(dir.path(), &server);
    let repo_path = Path::new(&repo);
    commit(
        repo_path,
        "targets.yaml",
        "kind: target\nname: meta\nspec:\n  url: http://169.254.169.254/latest\n---\nkind: target\nname: lab\nspec:\n  url: https://203.0.113.7/hook\n---\nkind: target\nname: fine\nspec:\n  url: https://hooks.example/h\n",
    );
    commit(
        repo_path,
        "flows.yaml",
        "kind: flow\nname: f1\nspec:\n  endpoint: nope\n  target: fine\n",
    );
    commit(
        repo_path,
        "broken.yaml",
        "kind: endpoint\nname: Bad_Name\nspec: {}\n",
    );
    commit(
        repo_path,
        "syntax.yaml",
        "kind: endpoint\n  name: [unclosed\n",
    );
    let plan = |data: &Path| {
        run(
            data,
            &[
                "--json", "gitops", "plan", "--repo", &repo, "--path", "deploy",
            ],
            None,
        )
    };
    let out = plan(&data);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let error = &json(&out)["error"];
    assert_eq!(error["code"], "invalid_manifest");
    let message = error["message"].as_str().unwrap();
    for expected in [
        "5 problem(s)",
        "deploy/targets.yaml, document 1: spec.url: host 169.254.169.254 is link-local",
        "deploy/targets.yaml, document 2: spec.url: host 203.0.113.7 is in 203.0.113.0/24",
        "target_address_forbidden",
        "deploy/flows.yaml, document 1: spec.endpoint: endpoint \"nope\" is neither declared",
        "deploy/broken.yaml, document 1: name:",
        "deploy/syntax.yaml, document 1: is not valid YAML",
    ] {
        assert!(message.contains(expected), "{expected:?} in {message}");
    }
    assert!(
        !message.contains("deploy/targets.yaml, document 3"),
        "{message}"
    );
    // `apply` plans first: nothing is queued, nothing reaches the server.
    let out = run(
        &data,
        &[
            "gitops", "apply", "--repo", &repo, "--path", "deploy", "--wait",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let targets: serde_json::Value = reqwest::Client::new()
        .get(format!("{}/v1/targets", server.url()))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(targets["items"], serde_json::json!([]));

    // The control: a server that allows private targets plans the same link-local URL (the
    // policy comes from the server, not from the client).
    let other = tempfile::tempdir().unwrap();
    let open = Server::start(plane::config(
        &other.path().join("cp.db"),
        &[("acme", TOKEN)],
    ))
    .await
    .unwrap();
    let (open_data, open_repo) = setup(other.path(), &open);
    commit(
        Path::new(&open_repo),
        "targets.yaml",
        "kind: target\nname: meta\nspec:\n  url: http://169.254.169.254/latest\n",
    );
    let out = run(
        &open_data,
        &[
            "--json", "gitops", "plan", "--repo", &open_repo, "--path", "deploy",
        ],
        None,
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
