//! Problem+json for requests whose head hyper cannot parse.
//!
//! hyper's HTTP/1 parser refuses a request head with a control byte in a header value (or a
//! malformed header name, method, target or version) before any handler runs, and answers
//! with a bare `400` and an empty body of its own (`431` for a head over its buffer). A
//! client then sees no `code` and no `field`. [`ProblemHeads`] wraps each connection's I/O
//! (src/server.rs): it keeps the head of the request being read, and when hyper writes one of
//! those bare answers it writes the problem+json answer instead — `validation_failed` naming
//! the offending header — and hyper closes the connection as it would have.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::error::ApiError;

/// The bare answers hyper writes for a head it could not parse: the start of the status line
/// and its empty body (no response of this server's handlers has both).
const BARE_ANSWERS: [&[u8]; 2] = [
    b"HTTP/1.1 400 Bad Request\r\n",
    b"HTTP/1.1 431 Request Header Fields Too Large\r\n",
];
const EMPTY_BODY: &[u8] = b"\r\ncontent-length: 0\r\n";

pub struct ProblemHeads<S> {
    inner: S,
    /// The start of what was read since the last answer was written: the head of the request
    /// being read (and maybe some of its body), at most `keep` bytes.
    head: Vec<u8>,
    keep: usize,
    max_header_bytes: usize,
    /// The problem answer being written in place of a bare one, and how much of it is out.
    replacing: Option<(Vec<u8>, usize)>,
}

impl<S> ProblemHeads<S> {
    /// `max_header_bytes` is the cap the 431 names (`crate::limits::Limits`).
    pub fn new(inner: S, max_header_bytes: usize) -> Self {
        Self {
            inner,
            head: Vec::new(),
            keep: max_header_bytes.saturating_mul(2).max(8192),
            max_header_bytes,
            replacing: None,
        }
    }

    fn problem_for(&self, bare: &[u8]) -> Option<Vec<u8>> {
        let status_line = BARE_ANSWERS.iter().find(|s| bare.starts_with(s))?;
        let head_end = bare.windows(4).position(|w| w == b"\r\n\r\n")? + 2;
        if !bare[..head_end]
            .to_ascii_lowercase()
            .windows(EMPTY_BODY.len())
            .any(|w| w == EMPTY_BODY)
        {
            return None;
        }
        let error = if status_line.starts_with(b"HTTP/1.1 431") {
            // hyper answers the same bare 431 for a head over its buffer and for one with
            // more header fields than it parses; a head that fit in what was kept and has
            // more fields than that was refused for their number, not its size.
            if self.head.len() < self.keep && header_lines(&self.head) > MAX_HEADERS {
                ApiError::TooManyHeaders { limit: MAX_HEADERS }
            } else {
                ApiError::HeadersTooLarge {
                    limit: self.max_header_bytes,
                }
            }
        } else {
            match bad_header(&self.head) {
                Some(name) => ApiError::validation(
                    name,
                    "is not a valid header: a header value may not contain control characters \
                     (other than tab), and a name is a token",
                ),
                None => {
                    ApiError::validation("request", "the request line or a header is malformed")
                }
            }
        };
        let stored = error.to_stored();
        let mut out = Vec::with_capacity(256 + stored.body.len());
        out.extend_from_slice(status_line);
        for (name, value) in &stored.headers {
            out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
        }
        out.extend_from_slice(
            format!(
                "content-length: {}\r\nconnection: close\r\n\r\n",
                stored.body.len()
            )
            .as_bytes(),
        );
        out.extend_from_slice(&stored.body);
        Some(out)
    }
}

/// The most header fields hyper's HTTP/1 parser reads in one request head (its default,
/// which src/server.rs does not change); one more is answered with a bare 431.
pub const MAX_HEADERS: usize = 100;

/// The header lines of `head` (after the request line, up to the blank line or the end).
fn header_lines(head: &[u8]) -> usize {
    head.split(|&b| b == b'\n')
        .skip(1)
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
        .take_while(|line| !line.is_empty())
        .count()
}

/// The name of the first header line of `head` that hyper refuses: a value with a control
/// byte other than tab, or a name that is not a token. `None` when every complete header
/// line is well formed (then the request line is what failed).
fn bad_header(head: &[u8]) -> Option<String> {
    let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    let mut lines = head
        .split(|&b| b == b'\n')
        .skip(1)
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
        // The blank line ends the head; what follows is the body.
        .take_while(|line| !line.is_empty());
    lines.find_map(|line| {
        let colon = line.iter().position(|&b| b == b':')?;
        let (name, value) = (&line[..colon], &line[colon + 1..]);
        let bad_value = value.iter().any(|&b| (b < 0x20 && b != b'\t') || b == 0x7f);
        let bad_name = name.is_empty() || !name.iter().copied().all(token);
        (bad_value || bad_name).then(|| String::from_utf8_lossy(name).into_owned())
    })
}

impl<S: AsyncRead + Unpin> AsyncRead for ProblemHeads<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        ready!(Pin::new(&mut self.inner).poll_read(cx, buf))?;
        let room = self.keep.saturating_sub(self.head.len());
        let read = &buf.filled()[before..];
        let take = read.len().min(room);
        self.head.extend_from_slice(&read[..take]);
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncWrite + Unpin> ProblemHeads<S> {
    /// Writes the rest of the replacement; `Ready` once all of it is out.
    fn poll_replacement(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some((bytes, sent)) = &mut self.replacing {
            if *sent == bytes.len() {
                self.replacing = None;
                break;
            }
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &bytes[*sent..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            *sent += n;
        }
        Poll::Ready(Ok(()))
    }

    /// `Some` when `first` (what hyper writes first) is a bare answer, which is then replaced.
    fn poll_bare(&mut self, cx: &mut Context<'_>, first: &[u8]) -> Option<Poll<io::Result<()>>> {
        if self.replacing.is_none() {
            let problem = self.problem_for(first)?;
            self.replacing = Some((problem, 0));
        }
        Some(self.poll_replacement(cx))
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for ProblemHeads<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if let Some(done) = this.poll_bare(cx, buf) {
            return done.map_ok(|()| buf.len());
        }
        // An answer is going out: what is read next is the next request.
        this.head.clear();
        Pin::new(&mut this.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        // hyper encodes a response head into one buffer, so it is the first slice.
        let first = bufs
            .iter()
            .find(|b| !b.is_empty())
            .map_or(&[][..], |b| &b[..]);
        if let Some(done) = this.poll_bare(cx, first) {
            return done.map_ok(|()| bufs.iter().map(|b| b.len()).sum());
        }
        this.head.clear();
        Pin::new(&mut this.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_replacement(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_replacement(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::bad_header;

    #[test]
    fn names_the_header_hyper_refuses() {
        let head = b"POST /v1/endpoints/a/disable HTTP/1.1\r\nhost: x\r\nIf-Match: a\x19b\r\n\r\n";
        assert_eq!(bad_header(head).as_deref(), Some("If-Match"));
        let name = b"GET / HTTP/1.1\r\nBad Name: x\r\n\r\n";
        assert_eq!(bad_header(name).as_deref(), Some("Bad Name"));
        let tab_and_obs_text = b"GET / HTTP/1.1\r\nX-A: a\tb \xc3\xa9\r\n\r\n";
        assert_eq!(bad_header(tab_and_obs_text), None);
        let body_after_head = b"POST / HTTP/1.1\r\nX-A: a\r\n\r\n{\"a b\": \"\x01\"}";
        assert_eq!(bad_header(body_after_head), None);
    }
}
