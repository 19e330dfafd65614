//! One webhook attempt over HTTP, and the classification of its failure.

use std::time::{Duration, Instant};

use switchyard_protocol::ErrorClass;

/// What one attempt observed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptResult {
    pub duration_ms: u64,
    pub status_code: Option<u16>,
    /// `None` on success (a 2xx within the timeout).
    pub error_class: Option<ErrorClass>,
    pub error: Option<String>,
}

impl AttemptResult {
    pub fn succeeded(&self) -> bool {
        self.error_class.is_none()
    }

    pub fn failed(class: ErrorClass, error: impl Into<String>) -> Self {
        Self {
            duration_ms: 0,
            status_code: None,
            error_class: Some(class),
            error: Some(error.into()),
        }
    }
}

/// The client every attempt uses: no redirects (a 3xx is a failure the receiver must fix),
/// no proxies (deliveries go where the target says), connection reuse.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .pool_max_idle_per_host(32)
        .user_agent(concat!("switchyard/", env!("CARGO_PKG_VERSION")))
        .build()
        .expect("the HTTP client builds")
}

/// POSTs `body` with `headers` to `url`; success is a 2xx within `timeout`.
pub async fn send(
    client: &reqwest::Client,
    url: &str,
    timeout: Duration,
    headers: &[(String, String)],
    body: String,
) -> AttemptResult {
    let started = Instant::now();
    let mut request = client.post(url).timeout(timeout).body(body);
    for (name, value) in headers {
        request = request.header(name, value);
    }
    let outcome = request.send().await;
    let duration_ms = started.elapsed().as_millis() as u64;
    match outcome {
        Ok(response) => {
            let status = response.status().as_u16();
            let (error_class, error) = match status {
                200..=299 => (None, None),
                500..=599 => (
                    Some(ErrorClass::Http5xx),
                    Some(format!("receiver answered HTTP {status}")),
                ),
                _ => (
                    Some(ErrorClass::Http4xx),
                    Some(format!("receiver answered HTTP {status}")),
                ),
            };
            AttemptResult {
                duration_ms,
                status_code: Some(status),
                error_class,
                error,
            }
        }
        Err(e) => {
            let (class, error) = classify(&e, timeout);
            AttemptResult {
                duration_ms,
                status_code: None,
                error_class: Some(class),
                error: Some(error),
            }
        }
    }
}

fn classify(error: &reqwest::Error, timeout: Duration) -> (ErrorClass, String) {
    let mut chain = String::new();
    let mut source: Option<&dyn std::error::Error> = Some(error);
    while let Some(e) = source {
        chain.push_str(&e.to_string().to_ascii_lowercase());
        chain.push(' ');
        source = e.source();
    }
    if error.is_timeout() {
        return (
            ErrorClass::Timeout,
            format!("no answer within {} ms", timeout.as_millis()),
        );
    }
    let tls = ["certificate", "tls", "handshake", "rustls", "x509"]
        .iter()
        .any(|w| chain.contains(w));
    if tls {
        return (ErrorClass::Tls, "TLS handshake failed".into());
    }
    if error.is_connect() {
        let why = if chain.contains("refused") {
            "connection refused"
        } else if chain.contains("dns") || chain.contains("resolve") {
            "host name did not resolve"
        } else {
            "could not connect"
        };
        return (ErrorClass::Connect, why.into());
    }
    // The connection broke before a complete answer (reset, closed).
    (
        ErrorClass::Connect,
        "the connection closed before a complete answer".into(),
    )
}
