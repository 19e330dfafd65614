//! A 429 decided from the head, before the body has arrived, leaves a keep-alive connection
//! usable: a client that writes its headers and its body separately (Python's
//! `http.client`, many others) sends request after request on one connection and reads an
//! answer to each, never a closed socket.

use std::time::Duration;

use switchyard_control_plane::limits::Rate;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use crate::{TOKEN, start};

/// One answer read off a keep-alive connection: status, headers (lowercased names), body.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Writes a keyed create's head, waits, then writes its body, and reads the answer.
/// `Err` is a transport error: the server closed the connection or sent no answer.
async fn post_in_two_writes(
    conn: &mut BufReader<TcpStream>,
    name: &str,
    pause: Duration,
) -> Result<Answer, String> {
    let body = format!(r#"{{"name":"{name}","spec":{{}}}}"#);
    let head = format!(
        "POST /v1/endpoints HTTP/1.1\r\nHost: cp\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nIdempotency-Key: key-{name}\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    );
    let stream = conn.get_mut();
    stream
        .write_all(head.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    stream.flush().await.map_err(|e| e.to_string())?;
    tokio::time::sleep(pause).await;
    stream
        .write_all(body.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    read_answer(conn).await
}

async fn read_answer(conn: &mut BufReader<TcpStream>) -> Result<Answer, String> {
    let read = async {
        let mut line = String::new();
        if conn.read_line(&mut line).await.map_err(|e| e.to_string())? == 0 {
            return Err("connection closed before an answer".to_owned());
        }
        let status: u16 = line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("not a status line: {line:?}"))?;
        let mut headers = Vec::new();
        loop {
            let mut h = String::new();
            conn.read_line(&mut h).await.map_err(|e| e.to_string())?;
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            let (n, v) = h.split_once(':').ok_or("a bad header line")?;
            headers.push((n.to_ascii_lowercase(), v.trim().to_owned()));
        }
        let len: usize = headers
            .iter()
            .find(|(n, _)| n == "content-length")
            .and_then(|(_, v)| v.parse().ok())
            .ok_or("no content-length")?;
        let mut body = vec![0; len];
        conn.read_exact(&mut body)
            .await
            .map_err(|e| e.to_string())?;
        Ok(Answer {
            status,
            headers,
            body: String::from_utf8_lossy(&body).into_owned(),
        })
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .map_err(|_| "no answer within 10 s".to_owned())?
}

#[tokio::test]
async fn a_429_before_the_body_arrived_keeps_the_connection_usable() {
    // 1/m: the first write passes, every later one is refused from its head alone.
    let plane = start(|limits, _| limits.writes = Rate::per_second(1.0 / 60.0)).await;
    let mut conn = BufReader::new(TcpStream::connect(plane.server.addr).await.unwrap());
    let mut statuses = Vec::new();
    for i in 0..12 {
        let answer = post_in_two_writes(&mut conn, &format!("e{i}"), Duration::from_millis(50))
            .await
            .unwrap_or_else(|e| panic!("request {i}: transport error: {e}"));
        if answer.status == 429 {
            assert_eq!(answer.header("connection"), None, "{}", answer.body);
            assert!(answer.header("retry-after").is_some());
            // The rate reads as it was given, not as a long fraction per second.
            assert!(
                answer.body.contains("(1/m on this server)"),
                "{}",
                answer.body
            );
        }
        statuses.push(answer.status);
    }
    assert_eq!(statuses[0], 201);
    assert!(statuses[1..].iter().all(|s| *s == 429), "{statuses:?}");
}

#[tokio::test]
async fn a_429_whose_body_does_not_come_says_connection_close() {
    let plane = start(|limits, _| limits.writes = Rate::per_second(1.0 / 60.0)).await;
    let mut conn = BufReader::new(TcpStream::connect(plane.server.addr).await.unwrap());
    let first = post_in_two_writes(&mut conn, "e0", Duration::ZERO)
        .await
        .unwrap();
    assert_eq!(first.status, 201);
    // A head announcing a body that never comes: the answer says the connection ends.
    let head = format!(
        "POST /v1/endpoints HTTP/1.1\r\nHost: cp\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
    );
    conn.get_mut().write_all(head.as_bytes()).await.unwrap();
    let refused = read_answer(&mut conn).await.unwrap();
    assert_eq!(refused.status, 429);
    assert_eq!(refused.header("connection"), Some("close"));
}
