//! `switchyard mcp` as an agent host runs it: the real binary over stdio, JSON-RPC lines in
//! and out, killed -9 after a keyed write was sent, then started again and asked again.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use switchyard_control_plane::Server;
use switchyard_core::{Console, ConsoleOptions, OpState, OutboxFilter};
use switchyard_test_support::plane;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::{TOKEN, run};

struct Mcp {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
}

impl Mcp {
    fn spawn(data: &Path) -> Self {
        Self::spawn_with(data, Stdio::null())
    }

    fn spawn_with(data: &Path, stderr: Stdio) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_switchyard"))
            .arg("--data-dir")
            .arg(data)
            .args(["mcp", "--allow-writes"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Self {
            child,
            stdin,
            lines,
        }
    }

    async fn send(&mut self, message: Value) {
        self.send_raw(message.to_string().as_bytes()).await;
    }

    async fn send_raw(&mut self, line: &[u8]) {
        self.stdin.write_all(line).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// The next message, whatever its id.
    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(30), self.lines.next_line())
            .await
            .expect("answered in time, not silence")
            .unwrap()
            .expect("a message");
        serde_json::from_str(&line).unwrap()
    }

    /// The response to request `id` (skipping notifications).
    async fn response(&mut self, id: i64) -> Value {
        let read = async {
            loop {
                let line = self.lines.next_line().await.unwrap().expect("a response");
                let msg: Value = serde_json::from_str(&line).unwrap();
                if msg["id"] == id {
                    return msg;
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(30), read)
            .await
            .expect("answered in time")
    }

    async fn handshake(&mut self) -> Value {
        self.send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "stdio-agent", "version": "2.0"}}}),
        )
        .await;
        let init = self.response(1).await;
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        init
    }
}

fn create_call(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "create_resource",
        "arguments": {"request_key": "agent-change-1", "kind": "endpoint", "name": "orders",
                      "spec": {"description": "Orders"}}}})
}

async fn endpoints_on(url: &str) -> Vec<Value> {
    let page: Value = reqwest::Client::new()
        .get(format!("{url}/v1/endpoints"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    page["items"].as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_over_stdio_survives_kill_9_after_a_keyed_write_was_sent() {
    let dir = tempfile::tempdir().unwrap();
    let config = plane::config(&dir.path().join("cp.db"), &[("acme", TOKEN)]);
    let server = Server::start(config).await.unwrap();
    let url = server.url();
    let data = dir.path().join("console");
    let out = run(
        &data,
        &["profile", "add", "prod", "--url", &url, "--token-stdin"],
        Some(TOKEN),
    );
    assert!(out.status.success());

    let mut mcp = Mcp::spawn(&data);
    let init = mcp.handshake().await;
    assert_eq!(init["result"]["serverInfo"]["name"], "switchyard");
    assert!(
        init["result"]["instructions"]
            .as_str()
            .unwrap()
            .contains("request_key")
    );
    mcp.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
        .await;
    let list = mcp.response(2).await;
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"create_resource") && !names.contains(&"delete_resource"));

    // The call is sent; as soon as its operation is in the outbox, kill -9.
    mcp.send(create_call(3)).await;
    let watcher = Console::open(ConsoleOptions::new(&data, "test"))
        .await
        .unwrap();
    let all = OutboxFilter {
        states: vec![OpState::Pending, OpState::Sending, OpState::Done],
        ..Default::default()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while watcher.list_outbox(all.clone()).await.unwrap().is_empty() {
        assert!(std::time::Instant::now() < deadline, "never queued");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    mcp.child.start_kill().unwrap();
    mcp.child.wait().await.unwrap();

    // A new process; the agent repeats the call with the same key and a new request id.
    let mut mcp = Mcp::spawn(&data);
    mcp.handshake().await;
    mcp.send(create_call(7)).await;
    let answer = mcp.response(7).await;
    let result = &answer["result"]["structuredContent"];
    assert_eq!(result["replayed"], true, "{answer}");
    assert_eq!(result["state"], "confirmed", "{answer}");
    assert_eq!(result["operation"]["via"], "mcp (stdio-agent 2.0)");
    let on_server = endpoints_on(&url).await;
    assert_eq!(on_server.len(), 1);
    assert_eq!(on_server[0]["version"], 1);
    assert_eq!(watcher.list_outbox(all).await.unwrap().len(), 1);

    // Closing stdin ends the server cleanly.
    drop(mcp.stdin);
    let status = tokio::time::timeout(Duration::from_secs(10), mcp.child.wait())
        .await
        .expect("exits when stdin closes")
        .unwrap();
    assert!(status.success());
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_over_stdio_answers_bad_lines_instead_of_dropping_them() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("console");
    let out = run(
        &data,
        &[
            "profile",
            "add",
            "prod",
            "--url",
            "http://127.0.0.1:9",
            "--token-stdin",
        ],
        Some(TOKEN),
    );
    assert!(out.status.success());
    let mut mcp = Mcp::spawn_with(&data, Stdio::piped());
    let error = |msg: &Value, id: Value, code: i64| {
        assert_eq!(
            (&msg["id"], &msg["error"]["code"]),
            (&id, &json!(code)),
            "{msg}"
        );
        msg["error"]["message"].as_str().unwrap().to_owned()
    };

    mcp.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    assert!(error(&mcp.next().await, json!(1), -32600).contains("initialize first"));
    mcp.send_raw(b"{\"jsonrpc\": nope").await;
    error(&mcp.next().await, Value::Null, -32700);
    mcp.send_raw(b"\xc3\x28 not utf-8").await;
    error(&mcp.next().await, Value::Null, -32700);
    // A line over 16 MiB: an answer (not silence until the client's timeout), a log line.
    let mut long = br#"{"jsonrpc":"2.0","id":2,"method":"ping","pad":""#.to_vec();
    long.resize(17 * 1024 * 1024, b'x');
    long.extend_from_slice(br#""}"#);
    mcp.send_raw(&long).await;
    assert!(error(&mcp.next().await, Value::Null, -32600).contains("16 MiB"));

    let init = mcp.handshake().await;
    assert_eq!(init["result"]["serverInfo"]["name"], "switchyard");
    mcp.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                    "params": {"name": "list_resources", "arguments": ["endpoint"]}}))
        .await;
    error(&mcp.response(3).await, json!(3), -32602);

    drop(mcp.stdin);
    let out = tokio::time::timeout(Duration::from_secs(10), mcp.child.wait_with_output())
        .await
        .expect("exits when stdin closes")
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("longer than 16777216 bytes: not read"),
        "{stderr}"
    );
}
