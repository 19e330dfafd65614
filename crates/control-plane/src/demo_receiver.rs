//! The built-in demo webhook receiver (loopback only) and the demo's trickle of events, so a
//! new user's deliveries, DLQ and replays have real content.
//!
//! Behaviours, by path: `/healthy` (200 at once), `/slow` (200 after 1-3 s), `/flaky` (503
//! 30 % of the time), `/always-500`, `/timeout` (answers after 60 s, past any demo timeout).

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use axum::routing::post;
use serde_json::json;
use tokio::task::JoinHandle;

/// A running demo receiver.
pub struct DemoReceiver {
    pub addr: SocketAddr,
    /// Requests received so far.
    pub received: Arc<AtomicU64>,
    task: JoinHandle<()>,
}

impl DemoReceiver {
    /// Binds a free loopback port and serves the demo behaviours.
    pub async fn start() -> anyhow::Result<Self> {
        let received = Arc::new(AtomicU64::new(0));
        let count = |r: &Arc<AtomicU64>| {
            let r = r.clone();
            move || {
                r.fetch_add(1, Ordering::Relaxed);
            }
        };
        let (c1, c2, c3, c4, c5) = (
            count(&received),
            count(&received),
            count(&received),
            count(&received),
            count(&received),
        );
        let app = Router::new()
            .route(
                "/healthy",
                post(move || async move {
                    c1();
                    StatusCode::OK
                }),
            )
            .route(
                "/slow",
                post(move || async move {
                    c2();
                    let ms = 1_000 + (rand::random::<f64>() * 2_000.0) as u64;
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    StatusCode::OK
                }),
            )
            .route(
                "/flaky",
                post(move || async move {
                    c3();
                    if rand::random::<f64>() < 0.3 {
                        StatusCode::SERVICE_UNAVAILABLE
                    } else {
                        StatusCode::OK
                    }
                }),
            )
            .route(
                "/always-500",
                post(move || async move {
                    c4();
                    StatusCode::INTERNAL_SERVER_ERROR
                }),
            )
            .route(
                "/timeout",
                post(move || async move {
                    c5();
                    tokio::time::sleep(Duration::from_secs(60)).await;
                    StatusCode::OK
                }),
            );
        let listener =
            tokio::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::warn!(error = %e, "demo receiver stopped");
            }
        });
        Ok(Self {
            addr,
            received,
            task,
        })
    }

    /// The base URL the demo targets point at.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for DemoReceiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Submits a demo event to the server at `base_url` every `every` (with jitter), until the
/// task is aborted. Failures are logged and the trickle goes on.
pub fn spawn_trickle(base_url: String, token: String, every: Duration) -> JoinHandle<()> {
    const EVENTS: [(&str, &str); 7] = [
        ("orders", "order.created"),
        ("orders", "order.paid"),
        ("orders", "order.shipped"),
        ("payments", "payment.succeeded"),
        ("payments", "payment.failed"),
        ("inventory", "stock.low"),
        ("inventory", "stock.out"),
    ];
    tokio::spawn(async move {
        let client = reqwest::Client::builder()
            .no_proxy()
            .build()
            .unwrap_or_default();
        let mut n: u64 = 0;
        loop {
            let pause = every.as_millis() as f64 * (0.5 + rand::random::<f64>());
            tokio::time::sleep(Duration::from_millis(pause as u64)).await;
            n += 1;
            let (endpoint, event_type) =
                EVENTS[(rand::random::<u64>() % EVENTS.len() as u64) as usize];
            let body = json!({
                "endpoint": endpoint,
                "event_type": event_type,
                "payload": {"demo": true, "sequence": n, "amount_cents": rand::random::<u16>()},
            });
            let sent = client
                .post(format!("{base_url}/v1/events"))
                .bearer_auth(&token)
                .json(&body)
                .send()
                .await;
            if let Err(e) = sent {
                tracing::debug!(error = %e, "demo trickle: submit failed");
            }
        }
    })
}
