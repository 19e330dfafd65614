//! Raw JSON-RPC, as a client that gets it wrong sends it: over the stdio line transport (a
//! pipe) and over streamable HTTP. Each bad message gets an answer with the code JSON-RPC
//! 2.0 gives it, and the server goes on serving.

use std::time::Duration;

use serde_json::{Value, json};
use switchyard_mcp::stdio::LineTransport;
use switchyard_mcp::{McpConfig, McpServer, Mode};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};

use crate::*;

struct Pipe {
    to_server: DuplexStream,
    from_server: Lines<BufReader<DuplexStream>>,
}

impl Pipe {
    async fn start(console: &Console, max_line: usize) -> Self {
        let server = McpServer::new(console.clone(), McpConfig::new("p", Mode::Writes))
            .await
            .unwrap();
        let (client_in, server_out) = tokio::io::duplex(1024 * 1024);
        let (server_in, client_out) = tokio::io::duplex(1024 * 1024);
        let transport = LineTransport::new(server_in, server_out).with_max_line_bytes(max_line);
        tokio::spawn(switchyard_mcp::serve_transport(server, transport));
        Self {
            to_server: client_out,
            from_server: BufReader::new(client_in).lines(),
        }
    }

    async fn send_raw(&mut self, bytes: &[u8]) {
        self.to_server.write_all(bytes).await.unwrap();
        self.to_server.write_all(b"\n").await.unwrap();
        self.to_server.flush().await.unwrap();
    }

    async fn send(&mut self, message: Value) {
        self.send_raw(message.to_string().as_bytes()).await;
    }

    /// The next message from the server.
    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(20), self.from_server.next_line())
            .await
            .expect("an answer in time (not silence)")
            .unwrap()
            .expect("the server is still there");
        serde_json::from_str(&line).unwrap()
    }
}

fn initialize(id: i64) -> Value {
    initialize_request(id, "raw")
}

/// `answer` is an error with this id and code; its message.
fn error_of(answer: &Value, id: Value, code: i64) -> String {
    assert_eq!(answer["id"], id, "{answer}");
    assert_eq!(answer["error"]["code"], code, "{answer}");
    answer["error"]["message"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_answers_every_bad_line_with_its_json_rpc_error() {
    let dir = tempfile::tempdir().unwrap();
    let c = console_with_profile(dir.path(), "http://127.0.0.1:9").await;
    let mut pipe = Pipe::start(&c, 64 * 1024).await;

    // Before initialize: a notification is dropped (rmcp would end the session on it), a
    // request is told what to do first.
    pipe.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    pipe.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    let msg = error_of(&pipe.next().await, json!(1), -32600);
    assert!(msg.contains("initialize first"), "{msg}");

    pipe.send_raw(b"this is not json").await;
    let msg = error_of(&pipe.next().await, Value::Null, -32700);
    assert!(msg.contains("not JSON"), "{msg}");
    pipe.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"\xff\xfe\"}")
        .await;
    let msg = error_of(&pipe.next().await, Value::Null, -32700);
    assert!(msg.contains("UTF-8"), "{msg}");

    // A line over the cap: answered (id unknown), and the line after it is read as usual.
    let long = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",\"pad\":\"{}\"}}",
        "x".repeat(200 * 1024)
    );
    pipe.send_raw(long.as_bytes()).await;
    let msg = error_of(&pipe.next().await, Value::Null, -32600);
    assert!(msg.contains("longer than 65536 bytes"), "{msg}");

    pipe.send(initialize(4)).await;
    let init = pipe.next().await;
    assert_eq!(init["id"], 4);
    assert_eq!(init["result"]["serverInfo"]["name"], "switchyard", "{init}");
    pipe.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;

    // Params of the wrong shape for a known method: -32602, not "method not found".
    pipe.send(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {}}))
        .await;
    let msg = error_of(&pipe.next().await, json!(5), -32602);
    assert!(msg.contains("params.name"), "{msg}");
    pipe.send(
        json!({"jsonrpc": "2.0", "id": "six", "method": "tools/call",
                     "params": {"name": "list_resources", "arguments": ["endpoint"]}}),
    )
    .await;
    let msg = error_of(&pipe.next().await, json!("six"), -32602);
    assert!(msg.contains("arguments must be a JSON object"), "{msg}");
    pipe.send(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": [1]}))
        .await;
    error_of(&pipe.next().await, json!(7), -32602);
    pipe.send_raw(br#"[{"jsonrpc":"2.0","id":8,"method":"ping"}]"#)
        .await;
    error_of(&pipe.next().await, Value::Null, -32600);

    // An unknown method is still -32601, and good requests still work.
    pipe.send(json!({"jsonrpc": "2.0", "id": 9, "method": "tools/frobnicate"}))
        .await;
    error_of(&pipe.next().await, json!(9), -32601);
    pipe.send(json!({"jsonrpc": "2.0", "id": 10, "method": "tools/list"}))
        .await;
    let list = pipe.next().await;
    assert_eq!(list["id"], 10);
    assert!(
        list["result"]["tools"].as_array().unwrap().len() > 5,
        "{list}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_answers_bad_bodies_with_json_rpc_errors_and_delete_is_204() {
    let dir = tempfile::tempdir().unwrap();
    let running = read_only_http(dir.path(), vec![]).await;
    let url = running.url();
    let http = reqwest::Client::new();
    let post = |body: Vec<u8>, session: Option<&str>| {
        let mut req = http
            .post(&url)
            .bearer_auth(HTTP_TOKEN)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body);
        if let Some(s) = session {
            req = req.header("mcp-session-id", s);
        }
        req.send()
    };
    let answer = |resp: reqwest::Response| async move {
        let status = resp.status().as_u16();
        let body: Value = resp.json().await.expect("a JSON-RPC error body");
        (status, body)
    };

    let (status, body) = answer(post(b"{not json".to_vec(), None).await.unwrap()).await;
    assert_eq!(status, 400);
    error_of(&body, Value::Null, -32700);
    let (status, body) = answer(post(b"\xff\xfe\xfd".to_vec(), None).await.unwrap()).await;
    assert_eq!(status, 400);
    error_of(&body, Value::Null, -32700);
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let (status, body) = answer(post(list.clone().into(), None).await.unwrap()).await;
    assert_eq!(status, 400);
    let msg = error_of(&body, json!(2), -32600);
    assert!(msg.contains("initialize first"), "{msg}");
    let no_name = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {}});
    let (status, body) = answer(post(no_name.to_string().into(), None).await.unwrap()).await;
    assert_eq!(status, 200);
    error_of(&body, json!(3), -32602);
    let huge = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"pad\":\"{}\"}}",
        "x".repeat(100 * 1024)
    );
    let (status, body) = answer(post(huge.into(), None).await.unwrap()).await;
    assert_eq!(status, 413);
    error_of(&body, Value::Null, -32600);

    // A session: initialize, use it, end it with DELETE (204), then it is gone (404).
    let init = post(initialize(1).to_string().into(), None).await.unwrap();
    assert_eq!(init.status(), 200);
    let session = init.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(init.text().await.unwrap().contains("\"switchyard\""));
    let inited = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let resp = post(inited.into(), Some(&session)).await.unwrap();
    assert_eq!(resp.status(), 202);
    let resp = post(list.clone().into(), Some(&session)).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert!(resp.text().await.unwrap().contains("list_resources"));
    let bad = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                     "params": {"name": "list_resources", "arguments": [1]}});
    let (status, body) = answer(post(bad.to_string().into(), Some(&session)).await.unwrap()).await;
    assert_eq!(status, 200);
    error_of(&body, json!(4), -32602);

    let delete = http
        .delete(&url)
        .bearer_auth(HTTP_TOKEN)
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(delete.status(), 204);
    assert!(delete.bytes().await.unwrap().is_empty());
    let again = post(list.into(), Some(&session)).await.unwrap();
    assert_eq!(again.status(), 404);
    running.stop().await.unwrap();
}
