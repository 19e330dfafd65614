//! A loopback update feed for the updater scenarios: a key pair made with the Tauri CLI's
//! signer (the tool a release uses), an artefact signed with it, and a tiny HTTP server that
//! serves the feed and the artefact as the test says (genuine, tampered, or signed by another key).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result, ensure};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::harness::repo_root;

/// A key pair made by `tauri signer generate` (no password), in `dir`.
pub struct SigningKey {
    private: PathBuf,
    /// What the app is given as its update key (the `.pub` file's text).
    pub public: String,
}

fn tauri_cli() -> PathBuf {
    repo_root().join("ui/node_modules/.bin/tauri")
}

impl SigningKey {
    pub fn generate(dir: &Path, name: &str) -> Result<Self> {
        let private = dir.join(name);
        let out = Command::new(tauri_cli())
            .args(["signer", "generate", "--ci", "-p", "", "-f", "-w"])
            .arg(&private)
            .output()
            .context("running the Tauri CLI's signer (npm --prefix ui ci installs it)")?;
        ensure!(
            out.status.success(),
            "signer generate: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let public = std::fs::read_to_string(private.with_extension("key.pub"))
            .or_else(|_| std::fs::read_to_string(format!("{}.pub", private.display())))?;
        Ok(Self {
            private,
            public: public.trim().to_owned(),
        })
    }

    /// The signature of `file` for `version`, as the feed carries it (the `.sig` file's text).
    pub fn sign(&self, file: &Path, version: &str) -> Result<String> {
        let out = Command::new(tauri_cli())
            .args(["signer", "sign", "-p", "", "--app-version", version, "-f"])
            .arg(&self.private)
            .arg(file)
            .output()?;
        ensure!(
            out.status.success(),
            "signer sign: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Ok(std::fs::read_to_string(format!("{}.sig", file.display()))?
            .trim()
            .to_owned())
    }
}

/// What the server answers: the feed's JSON and the artefact's bytes.
#[derive(Clone, Default)]
pub struct Served {
    pub feed: String,
    pub artefact: Vec<u8>,
}

pub struct FeedServer {
    pub port: u16,
    served: Arc<Mutex<Served>>,
    task: tokio::task::JoinHandle<()>,
}

impl FeedServer {
    pub async fn start() -> Result<Self> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        let served = Arc::new(Mutex::new(Served::default()));
        let shared = served.clone();
        let task = tokio::spawn(async move {
            while let Ok((mut conn, _)) = listener.accept().await {
                let shared = shared.clone();
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 8192];
                    let Ok(n) = conn.read(&mut buf).await else {
                        return;
                    };
                    let head = String::from_utf8_lossy(&buf[..n]).to_string();
                    let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
                    let now = shared.lock().unwrap().clone();
                    let (ctype, body) = if path.starts_with("/latest.json") {
                        ("application/json", now.feed.into_bytes())
                    } else {
                        ("application/octet-stream", now.artefact)
                    };
                    let header = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    );
                    let _ = conn.write_all(header.as_bytes()).await;
                    let _ = conn.write_all(&body).await;
                    let _ = conn.shutdown().await;
                });
            }
        });
        Ok(Self { port, served, task })
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/latest.json", self.port)
    }

    /// Serves `artefact` announced as `version` with `signature`.
    pub fn serve(&self, version: &str, notes: &str, artefact: Vec<u8>, signature: &str) {
        let target = format!("linux-{}", std::env::consts::ARCH);
        let feed = serde_json::json!({
            "version": version,
            "notes": notes,
            "pub_date": "2026-12-01T12:00:00Z",
            "platforms": {
                target: {
                    "url": format!("http://127.0.0.1:{}/artefact", self.port),
                    "signature": signature,
                }
            }
        });
        *self.served.lock().unwrap() = Served {
            feed: feed.to_string(),
            artefact,
        };
    }
}

impl Drop for FeedServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}
