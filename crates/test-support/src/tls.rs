//! Certificates made in the test (rcgen) and a real TLS webhook receiver on loopback that
//! requires a client certificate issued by the CAs it trusts, and records the fingerprint of
//! each one presented.

use std::sync::{Arc, Mutex};

use chrono::Datelike;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose,
};
use rustls::RootCertStore;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::WebPkiClientVerifier;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A certificate authority of the test.
pub struct Ca {
    pub cert: rcgen::Certificate,
    pub key: KeyPair,
}

/// An issued certificate: its chain PEM (leaf first) and key PEM.
#[derive(Clone)]
pub struct Issued {
    pub chain_pem: String,
    pub key_pem: String,
    pub der: Vec<u8>,
    /// The key's PKCS#8 DER.
    pub key_der: Vec<u8>,
}

impl Issued {
    /// SHA-256 of the leaf's DER, hex: what the API lists as `fingerprint_sha256`.
    pub fn fingerprint(&self) -> String {
        hex::encode(Sha256::digest(&self.der))
    }

    /// The first base64 line of the key PEM: what would show up, verbatim, in any PEM text
    /// of the key (JSON-escaped or not) if it leaked anywhere.
    pub fn key_body(&self) -> String {
        let line = self
            .key_pem
            .lines()
            .find(|l| !l.starts_with("-----"))
            .unwrap()
            .to_owned();
        assert!(line.len() >= 40, "a key line: {line}");
        line
    }

    /// The upload body of this certificate.
    pub fn upload(&self) -> serde_json::Value {
        serde_json::json!({"certificate_pem": self.chain_pem, "private_key_pem": self.key_pem})
    }
}

/// Valid from `from` to `to` days from now (negative: in the past).
fn validity(params: &mut CertificateParams, from: i64, to: i64) {
    let day = |d: i64| {
        let t = chrono::Utc::now() + chrono::Duration::days(d);
        rcgen::date_time_ymd(t.year(), t.month() as u8, t.day() as u8)
    };
    params.not_before = day(from);
    params.not_after = day(to);
}

impl Ca {
    pub fn new(name: &str) -> Self {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        validity(&mut params, -1, 3650);
        let cert = params.self_signed(&key).unwrap();
        Self { cert, key }
    }

    pub fn pem(&self) -> String {
        self.cert.pem()
    }

    /// A client certificate for `cn`, valid from yesterday for `days` days.
    pub fn client(&self, cn: &str, days: i64) -> Issued {
        self.client_valid(cn, -1, days)
    }

    /// A client certificate for `cn`, valid from `from` to `to` days from now.
    pub fn client_valid(&self, cn: &str, from: i64, to: i64) -> Issued {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name.push(DnType::CommonName, cn);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        validity(&mut params, from, to);
        let cert = params.signed_by(&key, &self.cert, &self.key).unwrap();
        Issued {
            chain_pem: format!("{}{}", cert.pem(), self.cert.pem()),
            key_pem: key.serialize_pem(),
            der: cert.der().to_vec(),
            key_der: key.serialize_der(),
        }
    }

    /// A server certificate for 127.0.0.1.
    fn server(&self) -> (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>) {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(vec!["127.0.0.1".to_owned()]).unwrap();
        params
            .distinguished_name
            .push(DnType::CommonName, "receiver");
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        validity(&mut params, -1, 30);
        let cert = params.signed_by(&key, &self.cert, &self.key).unwrap();
        (
            vec![cert.der().clone()],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        )
    }
}

/// What the receiver saw on one connection.
#[derive(Clone, Debug)]
pub struct Seen {
    /// The leaf the client presented (hex SHA-256), if the handshake got that far.
    pub client: Option<String>,
    /// Whether a request was read and answered 200.
    pub answered: bool,
}

/// An HTTPS receiver requiring client certificates from the CAs it trusts.
pub struct TlsReceiver {
    pub url: String,
    /// The CA of the receiver's server certificate: the control plane must trust it.
    pub server_ca_pem: String,
    config: Arc<Mutex<Arc<rustls::ServerConfig>>>,
    server: (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>),
    seen: Arc<Mutex<Vec<Seen>>>,
    task: tokio::task::JoinHandle<()>,
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn server_config(
    trusted: &[&Ca],
    server: &(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>),
) -> Arc<rustls::ServerConfig> {
    let mut roots = RootCertStore::empty();
    for ca in trusted {
        roots.add(ca.cert.der().clone()).unwrap();
    }
    let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider())
        .build()
        .unwrap();
    Arc::new(
        rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_client_cert_verifier(verifier)
            .with_single_cert(server.0.clone(), server.1.clone_key())
            .unwrap(),
    )
}

impl TlsReceiver {
    /// Listens on 127.0.0.1:0, trusting client certificates issued by `trusted`.
    pub async fn start(trusted: &[&Ca]) -> Self {
        let server_ca = Ca::new("receiver CA");
        let server = server_ca.server();
        let config = Arc::new(Mutex::new(server_config(trusted, &server)));
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("https://{}/hook", listener.local_addr().unwrap());
        let task = {
            let (config, seen) = (config.clone(), seen.clone());
            tokio::spawn(async move {
                loop {
                    let Ok((tcp, _)) = listener.accept().await else {
                        return;
                    };
                    let acceptor = tokio_rustls::TlsAcceptor::from(config.lock().unwrap().clone());
                    let seen = seen.clone();
                    tokio::spawn(async move {
                        let mut tls = match acceptor.accept(tcp).into_fallible().await {
                            Ok(tls) => tls,
                            Err((_, mut tcp)) => {
                                seen.lock().unwrap().push(Seen {
                                    client: None,
                                    answered: false,
                                });
                                // Closing at once with the client's request unread makes the
                                // kernel send a reset, which can reach the client before the
                                // alert (UnknownCA) it must see; read until it hangs up first.
                                // A client on a loaded machine may take seconds to send its
                                // request (CI once saw 'connection closed' with a 2 s limit
                                // here), so wait longer than any test's own patience.
                                let drain = async {
                                    let mut buf = [0u8; 1024];
                                    while tcp.read(&mut buf).await.is_ok_and(|n| n > 0) {}
                                };
                                let _ = tokio::time::timeout(
                                    std::time::Duration::from_secs(120),
                                    drain,
                                )
                                .await;
                                return;
                            }
                        };
                        let client = tls
                            .get_ref()
                            .1
                            .peer_certificates()
                            .and_then(|c| c.first())
                            .map(|c| hex::encode(Sha256::digest(c.as_ref())));
                        let answered = answer(&mut tls).await;
                        seen.lock().unwrap().push(Seen { client, answered });
                    });
                }
            })
        };
        Self {
            url,
            server_ca_pem: server_ca.pem(),
            config,
            server,
            seen,
            task,
        }
    }

    /// From now on trust client certificates of `trusted` only.
    pub fn trust(&self, trusted: &[&Ca]) {
        *self.config.lock().unwrap() = server_config(trusted, &self.server);
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// The fingerprints of the client certificates of the requests answered.
    pub fn answered(&self) -> Vec<String> {
        self.seen()
            .into_iter()
            .filter(|s| s.answered)
            .filter_map(|s| s.client)
            .collect()
    }
}

impl Drop for TlsReceiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Reads one HTTP/1.1 request (headers, then `content-length` bytes) and answers 200,
/// closing the connection so that the next request shakes hands again.
async fn answer<S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin>(stream: &mut S) -> bool {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + length {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let reply = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
    let ok = stream.write_all(reply).await.is_ok();
    let _ = stream.shutdown().await;
    ok
}
