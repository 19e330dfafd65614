//! One webhook attempt over HTTP, and the classification of its failure.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use sha2::{Digest, Sha256};
use switchyard_protocol::ErrorClass;

use super::addresses;
use crate::store::ClientIdentity;

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

/// The HTTP client every webhook attempt uses (the control plane's worker, target tests,
/// an edge plane): no redirects (a 3xx is a failure the receiver must fix, and following one
/// could lead anywhere), no proxies (deliveries go where the target says), connection reuse,
/// and the address policy of [`super::addresses`] enforced on the address it connects to.
///
/// A target with an active client certificate (mTLS) is sent to by a client of its own that
/// presents it: one per certificate, built on first use and cached by the certificate's
/// fingerprint (and chain), so its connections are reused too and never shared with another
/// identity.
#[derive(Clone)]
pub struct WebhookClient {
    client: reqwest::Client,
    policy: Arc<addresses::AddressPolicy>,
    resolver: Arc<GuardedResolver>,
    /// CA certificates (PEM) trusted for receivers besides the web PKI's roots.
    roots: Arc<Vec<reqwest::Certificate>>,
    identities: Arc<Mutex<HashMap<String, reqwest::Client>>>,
}

/// The most client-certificate clients kept at once; past it the cache starts over.
const MAX_IDENTITY_CLIENTS: usize = 256;

/// Resolves host names for [`WebhookClient`]; the system resolver unless a test injects
/// one (a name that resolves to loopback, say).
pub type Lookup = Arc<dyn Resolve>;

impl WebhookClient {
    /// A client that refuses forbidden addresses unless `allow_private`, looking names up
    /// with `lookup` (`None`: the system resolver).
    pub fn new(allow_private: bool, lookup: Option<Lookup>) -> Self {
        let policy = addresses::AddressPolicy {
            allow_private,
            forbid: Vec::new(),
        };
        Self::with_roots(policy, lookup, &[])
    }

    /// A client that refuses what `policy` refuses, also trusting the CA certificates
    /// `roots_pem` (PEM, each may hold several) for receivers' server certificates. A
    /// certificate that does not parse is skipped with a warning.
    pub fn with_roots(
        policy: addresses::AddressPolicy,
        lookup: Option<Lookup>,
        roots_pem: &[String],
    ) -> Self {
        let policy = Arc::new(policy);
        let resolver = Arc::new(GuardedResolver {
            lookup,
            policy: policy.clone(),
        });
        let roots: Vec<reqwest::Certificate> = roots_pem
            .iter()
            .flat_map(|pem| match reqwest::Certificate::from_pem_bundle(pem.as_bytes()) {
                Ok(certs) => certs,
                Err(e) => {
                    tracing::warn!(error = %e, "a trusted receiver CA certificate does not parse; skipped");
                    Vec::new()
                }
            })
            .collect();
        let client = build(&resolver, &roots, None).expect("the HTTP client builds");
        Self {
            client,
            policy,
            resolver,
            roots: Arc::new(roots),
            identities: Arc::default(),
        }
    }

    /// Whether this client may connect to private, loopback and other forbidden addresses.
    pub fn allows_private(&self) -> bool {
        self.policy.allow_private
    }

    /// Where this client lets webhooks go.
    pub fn policy(&self) -> &addresses::AddressPolicy {
        &self.policy
    }

    /// The client that presents `identity` (the shared one for `None`).
    fn client_for(&self, identity: Option<&ClientIdentity>) -> Result<reqwest::Client, String> {
        let Some(identity) = identity else {
            return Ok(self.client.clone());
        };
        // By the whole chain, not the leaf only: the same leaf re-uploaded with a corrected
        // chain (a missing intermediate) must be presented with it.
        let cache_key = format!(
            "{}:{}",
            identity.fingerprint,
            hex::encode(Sha256::digest(identity.certificate_pem.as_bytes()))
        );
        let mut cache = self.identities.lock().expect("identity cache lock");
        if let Some(client) = cache.get(&cache_key) {
            return Ok(client.clone());
        }
        let mut pem = identity.private_key_pem.clone();
        pem.push('\n');
        pem.push_str(&identity.certificate_pem);
        // The error says nothing of the key: it is reqwest's parse failure of the PEM.
        let tls = reqwest::Identity::from_pem(pem.as_bytes())
            .map_err(|_| format!("client certificate {} cannot be presented", identity.id))?;
        let client = build(&self.resolver, &self.roots, Some(tls))
            .map_err(|_| format!("client certificate {} cannot be presented", identity.id))?;
        if cache.len() >= MAX_IDENTITY_CLIENTS {
            cache.clear();
        }
        cache.insert(cache_key, client.clone());
        Ok(client)
    }

    /// How many client-certificate clients are cached (tests).
    pub fn identity_clients(&self) -> usize {
        self.identities.lock().expect("identity cache lock").len()
    }
}

fn build(
    resolver: &Arc<GuardedResolver>,
    roots: &[reqwest::Certificate],
    identity: Option<reqwest::Identity>,
) -> reqwest::Result<reqwest::Client> {
    let mut builder = reqwest::Client::builder()
        .use_rustls_tls()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .dns_resolver(resolver.clone())
        .pool_max_idle_per_host(32)
        .user_agent(concat!("switchyard/", env!("CARGO_PKG_VERSION")));
    for root in roots {
        builder = builder.add_root_certificate(root.clone());
    }
    if let Some(identity) = identity {
        builder = builder.identity(identity);
    }
    builder.build()
}

/// The refusal to connect to a forbidden address. The resolver returns it, so it reaches
/// [`classify`] as a source of the request's error.
#[derive(Debug)]
struct ForbiddenAddress(String);

impl std::fmt::Display for ForbiddenAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ForbiddenAddress {}

/// Looks a name up and hands the connector only the permitted addresses, so the address
/// connected to is always one that was checked: a name that resolves to a forbidden
/// address now, whatever it resolved to before (DNS rebinding), connects nowhere.
struct GuardedResolver {
    lookup: Option<Lookup>,
    policy: Arc<addresses::AddressPolicy>,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let lookup = self.lookup.clone();
        let policy = self.policy.clone();
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let found: Vec<SocketAddr> = match lookup {
                Some(lookup) => lookup.resolve(name).await?.collect(),
                None => tokio::net::lookup_host((host.as_str(), 0)).await?.collect(),
            };
            if policy.allows_everything() {
                return Ok(Box::new(found.into_iter()) as Addrs);
            }
            let (permitted, refused): (Vec<SocketAddr>, Vec<SocketAddr>) = found
                .into_iter()
                .partition(|a| policy.refusal(a.ip()).is_none());
            if let (true, Some(first)) = (permitted.is_empty(), refused.first()) {
                // The address a name resolves to goes to the server's log only: shown to the
                // tenant, the error would map the network's internal names for it.
                let why = policy
                    .refusal(first.ip())
                    .map(|r| r.why)
                    .unwrap_or_default();
                tracing::warn!(%host, address = %first.ip(), why,
                    "refused to connect: the name resolves only to forbidden addresses");
                let refusal = ForbiddenAddress(format!(
                    "refused to connect: {host} resolves only to addresses deliveries may not reach"
                ));
                return Err(Box::new(refusal) as Box<dyn std::error::Error + Send + Sync>);
            }
            Ok(Box::new(permitted.into_iter()) as Addrs)
        })
    }
}

/// POSTs `body` with `headers` to `url`; success is a 2xx within `timeout`. A URL whose host
/// is a forbidden IP literal (which no resolver sees) fails before anything is sent.
pub async fn send(
    client: &WebhookClient,
    url: &str,
    timeout: Duration,
    headers: &[(String, String)],
    body: String,
) -> AttemptResult {
    send_as(client, None, url, timeout, headers, body).await
}

/// [`send`], presenting the client certificate `identity` in the TLS handshake (mTLS).
pub async fn send_as(
    client: &WebhookClient,
    identity: Option<&ClientIdentity>,
    url: &str,
    timeout: Duration,
    headers: &[(String, String)],
    body: String,
) -> AttemptResult {
    if let Some(refusal) = client.policy.url_refusal(url) {
        return AttemptResult::failed(
            ErrorClass::ForbiddenAddress,
            format!("refused to connect: {}", refusal.why),
        );
    }
    let http = match client.client_for(identity) {
        Ok(http) => http,
        Err(error) => return AttemptResult::failed(ErrorClass::Tls, error),
    };
    let started = Instant::now();
    let mut request = http.post(url).timeout(timeout).body(body);
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
    let mut raw = String::new();
    let mut source: Option<&dyn std::error::Error> = Some(error);
    while let Some(e) = source {
        let text = e.to_string();
        chain.push_str(&text.to_ascii_lowercase());
        chain.push(' ');
        raw.push_str(&text);
        raw.push(' ');
        if let Some(refusal) = e.downcast_ref::<ForbiddenAddress>() {
            return (ErrorClass::ForbiddenAddress, refusal.0.clone());
        }
        source = e.source();
    }
    if error.is_timeout() {
        return (
            ErrorClass::Timeout,
            format!("no answer within {} ms", timeout.as_millis()),
        );
    }
    let tls = ["certificate", "tls", "handshake", "rustls", "x509", "alert"]
        .iter()
        .any(|w| chain.contains(w));
    if tls {
        return (ErrorClass::Tls, tls_error(&raw));
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

/// What a failed TLS handshake tells: the alert the receiver sent (it refused the client
/// certificate, or required one) or why this side gave up.
fn tls_error(chain: &str) -> String {
    if let Some(at) = chain.find("received fatal alert: ") {
        let alert: String = chain[at + "received fatal alert: ".len()..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        return format!(
            "TLS handshake failed: the receiver sent alert {alert} (it did not accept the \
             client certificate presented, or requires one)"
        );
    }
    if chain
        .to_ascii_lowercase()
        .contains("invalid peer certificate")
    {
        return "TLS handshake failed: the receiver's server certificate is not trusted".into();
    }
    "TLS handshake failed".into()
}

#[cfg(test)]
mod tests {
    use std::net::IpAddr;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// Resolves every name to `ips`.
    struct Fixed(Vec<IpAddr>);

    impl Resolve for Fixed {
        fn resolve(&self, _: Name) -> Resolving {
            let addrs: Vec<SocketAddr> = self.0.iter().map(|ip| SocketAddr::new(*ip, 0)).collect();
            Box::pin(async move { Ok(Box::new(addrs.into_iter()) as Addrs) })
        }
    }

    async fn resolve(ips: &[&str], allow_private: bool) -> Result<Vec<IpAddr>, String> {
        let resolver = GuardedResolver {
            lookup: Some(Arc::new(Fixed(
                ips.iter().map(|i| i.parse().unwrap()).collect(),
            ))),
            policy: Arc::new(addresses::AddressPolicy {
                allow_private,
                forbid: Vec::new(),
            }),
        };
        match resolver
            .resolve("hooks.example.test".parse().unwrap())
            .await
        {
            Ok(addrs) => Ok(addrs.map(|a| a.ip()).collect()),
            Err(e) => Err(e.to_string()),
        }
    }

    #[tokio::test]
    async fn the_resolver_hands_on_only_permitted_addresses() {
        let ip = |t: &str| t.parse::<IpAddr>().unwrap();
        assert_eq!(
            resolve(&["127.0.0.1", "93.184.215.14", "::1"], false).await,
            Ok(vec![ip("93.184.215.14")])
        );
        let refused = resolve(&["10.0.0.7", "::ffff:169.254.169.254"], false)
            .await
            .unwrap_err();
        assert_eq!(
            refused,
            "refused to connect: hooks.example.test resolves only to addresses deliveries may not reach"
        );
        assert_eq!(
            resolve(&["127.0.0.1", "::1"], true).await,
            Ok(vec![ip("127.0.0.1"), ip("::1")])
        );
    }

    /// A listener on loopback that counts the connections it accepts and answers 204.
    async fn counting_listener() -> (String, Arc<AtomicUsize>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let counter = accepted.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                counter.fetch_add(1, Ordering::SeqCst);
                let mut buf = [0u8; 4096];
                let _ = stream.read(&mut buf).await;
                let _ = stream
                    .write_all(b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n")
                    .await;
            }
        });
        (format!("{port}"), accepted)
    }

    #[tokio::test]
    async fn an_ip_literal_url_is_refused_before_connecting() {
        let (port, accepted) = counting_listener().await;
        let forbidding = WebhookClient::new(false, None);
        let allowing = WebhookClient::new(true, None);
        for host in ["127.0.0.1", "[::ffff:127.0.0.1]"] {
            let url = format!("http://{host}:{port}/hook");
            let sent = send(&forbidding, &url, Duration::from_secs(2), &[], "{}".into()).await;
            assert_eq!(
                sent.error_class,
                Some(ErrorClass::ForbiddenAddress),
                "{url}"
            );
            assert!(
                sent.error
                    .as_deref()
                    .is_some_and(|e| e.contains("loopback")),
                "{sent:?}"
            );
            assert_eq!(
                accepted.load(Ordering::SeqCst),
                0,
                "{url}: nothing connected"
            );
        }
        // The control: allowed, the same URL is sent.
        let url = format!("http://127.0.0.1:{port}/hook");
        let sent = send(&allowing, &url, Duration::from_secs(2), &[], "{}".into()).await;
        assert!(sent.succeeded(), "{sent:?}");
        assert_eq!(accepted.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_name_resolving_only_to_forbidden_addresses_is_classed_forbidden_address() {
        let (port, accepted) = counting_listener().await;
        let lookup: Lookup = Arc::new(Fixed(vec!["127.0.0.1".parse().unwrap()]));
        let url = format!("http://hooks.example.test:{port}/hook");
        let forbidding = WebhookClient::new(false, Some(lookup.clone()));
        let sent = send(&forbidding, &url, Duration::from_secs(2), &[], "{}".into()).await;
        assert_eq!(
            sent.error_class,
            Some(ErrorClass::ForbiddenAddress),
            "{sent:?}"
        );
        assert_eq!(accepted.load(Ordering::SeqCst), 0);
        let allowing = WebhookClient::new(true, Some(lookup));
        let sent = send(&allowing, &url, Duration::from_secs(2), &[], "{}".into()).await;
        assert!(sent.succeeded(), "{sent:?}");
        assert_eq!(accepted.load(Ordering::SeqCst), 1);
    }

    fn identity(cn: &str) -> ClientIdentity {
        let key = rcgen::KeyPair::generate().unwrap();
        let params = rcgen::CertificateParams::new(vec![cn.to_owned()]).unwrap();
        let cert = params.self_signed(&key).unwrap();
        ClientIdentity {
            id: cn.to_owned(),
            fingerprint: hex::encode(Sha256::digest(cert.der())),
            certificate_pem: cert.pem(),
            private_key_pem: key.serialize_pem(),
            not_after: i64::MAX,
        }
    }

    #[test]
    fn one_client_per_presented_chain_and_no_key_in_its_errors() {
        let client = WebhookClient::new(true, None);
        let a = identity("a.example");
        client.client_for(None).unwrap();
        assert_eq!(
            client.identity_clients(),
            0,
            "no identity, the shared client"
        );
        client.client_for(Some(&a)).unwrap();
        client.client_for(Some(&a)).unwrap();
        assert_eq!(client.identity_clients(), 1, "cached");
        let mut longer = a.clone();
        longer
            .certificate_pem
            .push_str(&identity("ca.example").certificate_pem);
        client.client_for(Some(&longer)).unwrap();
        assert_eq!(
            client.identity_clients(),
            2,
            "the same leaf with another chain"
        );
        client
            .clone()
            .client_for(Some(&identity("b.example")))
            .unwrap();
        assert_eq!(client.identity_clients(), 3, "clones share the cache");
        let mut broken = identity("c.example");
        broken.private_key_pem =
            "-----BEGIN PRIVATE KEY-----\nc2VjcmV0\n-----END PRIVATE KEY-----\n".into();
        let error = client.client_for(Some(&broken)).unwrap_err();
        assert!(
            error.contains("c.example") && !error.contains("c2VjcmV0"),
            "{error}"
        );
    }
}
