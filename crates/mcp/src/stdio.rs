//! The stdio transport: one JSON-RPC message per line. Ours, not rmcp's, because rmcp's
//! drops a line that is not JSON (or not UTF-8, or 16 MiB or longer) without an answer, so
//! the client waits to its timeout; here each gets the JSON-RPC error (see
//! [`crate::jsonrpc`]) and an over-long line is also logged on stderr.
//!
//! Lines are read through `fill_buf`/`consume` with the line kept on the struct: rmcp polls
//! `receive` inside a `select!` and drops it whenever a response is ready, and a read that
//! is dropped halfway must resume where it was. Output goes through one writer task, so an
//! answer is queued whole (never half-written by a cancelled future) and in order.

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::jsonrpc::{self, Checked, MAX_MESSAGE_BYTES, Refusal};

pub struct LineTransport<R> {
    read: BufReader<R>,
    line: Vec<u8>,
    /// Dropping the rest of an over-long line (up to its newline).
    discarding: bool,
    max_line_bytes: usize,
    /// An `initialize` request went through: requests no longer need to come after one.
    initialized: bool,
    out: Option<mpsc::UnboundedSender<Vec<u8>>>,
    writer: Option<JoinHandle<()>>,
}

enum Line {
    Whole,
    TooLong,
    Eof,
}

impl<R: AsyncRead + Unpin + Send> LineTransport<R> {
    pub fn new<W: AsyncWrite + Unpin + Send + 'static>(read: R, write: W) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let writer = tokio::spawn(write_lines(write, rx));
        Self {
            read: BufReader::new(read),
            line: Vec::new(),
            discarding: false,
            max_line_bytes: MAX_MESSAGE_BYTES,
            initialized: false,
            out: Some(tx),
            writer: Some(writer),
        }
    }

    /// Lowers the line cap (tests: a 16 MiB line is slow to build in a debug build).
    pub fn with_max_line_bytes(mut self, max: usize) -> Self {
        self.max_line_bytes = max;
        self
    }

    fn queue(&self, line: Vec<u8>) -> bool {
        self.out.as_ref().is_some_and(|tx| tx.send(line).is_ok())
    }

    fn refuse(&self, refusal: &Refusal) -> bool {
        let mut line = refusal.to_json().to_string().into_bytes();
        line.push(b'\n');
        self.queue(line)
    }

    /// Reads up to the next newline into `self.line`; a line longer than the cap is dropped.
    async fn read_line(&mut self) -> std::io::Result<Line> {
        loop {
            let (used, done) = {
                let buf = self.read.fill_buf().await?;
                if buf.is_empty() {
                    return Ok(Line::Eof);
                }
                let newline = buf.iter().position(|b| *b == b'\n');
                let take = newline.map_or(buf.len(), |i| i + 1);
                let body = newline.unwrap_or(buf.len());
                if self.discarding {
                    if newline.is_some() {
                        self.discarding = false;
                    }
                    (take, None)
                } else if self.line.len() + body > self.max_line_bytes {
                    self.line.clear();
                    self.discarding = newline.is_none();
                    (take, Some(Line::TooLong))
                } else {
                    self.line.extend_from_slice(&buf[..body]);
                    (take, newline.map(|_| Line::Whole))
                }
            };
            self.read.consume(used);
            if let Some(line) = done {
                return Ok(line);
            }
        }
    }
}

async fn write_lines<W: AsyncWrite + Unpin>(mut w: W, mut rx: mpsc::UnboundedReceiver<Vec<u8>>) {
    while let Some(line) = rx.recv().await {
        if let Err(e) = async {
            w.write_all(&line).await?;
            w.flush().await
        }
        .await
        {
            tracing::debug!("stdout closed: {e}");
            return;
        }
    }
}

impl<R: AsyncRead + Unpin + Send + 'static> Transport<RoleServer> for LineTransport<R> {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let queued = serde_json::to_vec(&item)
            .map_err(std::io::Error::other)
            .and_then(|mut line| {
                line.push(b'\n');
                if self.queue(line) {
                    Ok(())
                } else {
                    Err(std::io::Error::new(
                        std::io::ErrorKind::BrokenPipe,
                        "the output is closed",
                    ))
                }
            });
        std::future::ready(queued)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            match self.read_line().await {
                Ok(Line::Whole) => {}
                Ok(Line::TooLong) => {
                    // On stderr, which agent hosts keep as the server's log (`switchyard mcp`
                    // installs no tracing subscriber; stdout is the protocol's).
                    eprintln!(
                        "switchyard mcp: an incoming message was longer than {} bytes: not read, answered with an error (id null)",
                        self.max_line_bytes
                    );
                    if !self.refuse(&Refusal::too_long(self.max_line_bytes)) {
                        return None;
                    }
                    continue;
                }
                Ok(Line::Eof) => return None,
                Err(e) => {
                    tracing::error!("reading stdin: {e}");
                    return None;
                }
            }
            let line = std::mem::take(&mut self.line);
            let text = line.strip_suffix(b"\r").unwrap_or(&line);
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let message = match jsonrpc::check(text) {
                Checked::Message(m) => *m,
                Checked::Ignore => continue,
                Checked::Refuse(r) => {
                    if !self.refuse(&r) {
                        return None;
                    }
                    continue;
                }
            };
            if !self.initialized {
                // rmcp ends the whole session on anything but a request before `initialize`;
                // a notification cannot be answered, so it is dropped instead.
                if !matches!(message, ClientJsonRpcMessage::Request(_)) {
                    continue;
                }
                if let Some(r) = jsonrpc::before_initialize(&message) {
                    if !self.refuse(&r) {
                        return None;
                    }
                    continue;
                }
                self.initialized = matches!(
                    &message,
                    ClientJsonRpcMessage::Request(req)
                        if matches!(req.request, ClientRequest::InitializeRequest(_))
                );
            }
            return Some(message);
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // The writer ends once every queued line is written.
        drop(self.out.take());
        if let Some(writer) = self.writer.take() {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(5), writer).await;
        }
        Ok(())
    }
}
