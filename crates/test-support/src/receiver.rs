//! The tests' webhook receiver: a real HTTP server on loopback that records every request
//! (path, headers, body, when it came and when it was answered) and answers as the test
//! scripts it: by the request's number, its path or what it carries.
//!
//! It runs on a thread and runtime of its own, so it keeps answering while a test blocks its
//! own runtime (a CLI test waiting for the `switchyard` process, say) and whichever runtime
//! the test uses; dropping it stops it at once, like a receiver that went away.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};

/// What the receiver answers to a request.
#[derive(Clone, Copy, Debug)]
pub struct Reply {
    pub status: u16,
    /// How long it holds the request before answering.
    pub delay: Duration,
}

/// Answers `status` at once.
pub fn status(status: u16) -> Reply {
    Reply {
        status,
        delay: Duration::ZERO,
    }
}

/// One request the receiver got.
#[derive(Clone, Debug)]
pub struct Received {
    pub path: String,
    pub headers: HashMap<String, String>,
    pub body: String,
    pub received_at: Instant,
    /// When the receiver finished its answer (`None`: still holding the request).
    pub answered_at: Option<Instant>,
}

impl Received {
    /// The header's value (names are lower case), `""` when absent.
    pub fn header(&self, name: &str) -> &str {
        self.headers.get(name).map_or("", String::as_str)
    }
}

/// Decides the reply from the request and its number (0-based, over all paths).
type Behaviour = Arc<dyn Fn(&Received, usize) -> Reply + Send + Sync>;

#[derive(Clone)]
struct Shared {
    log: Arc<Mutex<Vec<Received>>>,
    behaviour: Arc<Mutex<Behaviour>>,
}

/// A webhook receiver on loopback. `url` is its `/hook` path; any other path answers too
/// (see [`Receiver::routed`]).
pub struct Receiver {
    pub url: String,
    /// `http://127.0.0.1:PORT`, for the paths of [`Receiver::routed`].
    pub base: String,
    shared: Shared,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

async fn receive(
    State(shared): State<Shared>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let path = uri.path().to_owned();
    let received = Received {
        path,
        headers: headers
            .iter()
            .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
            .collect(),
        body: String::from_utf8_lossy(&body).into_owned(),
        received_at: Instant::now(),
        answered_at: None,
    };
    let behaviour = shared.behaviour.lock().unwrap().clone();
    let index = {
        let mut log = shared.log.lock().unwrap();
        log.push(received.clone());
        log.len() - 1
    };
    let reply = behaviour(&received, index);
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    shared.log.lock().unwrap()[index].answered_at = Some(Instant::now());
    StatusCode::from_u16(reply.status).unwrap()
}

impl Receiver {
    /// Answers the n-th request (0-based) with `behaviour(n)`.
    pub fn start(behaviour: impl Fn(usize) -> Reply + Send + Sync + 'static) -> Self {
        Self::judging(move |_, n| behaviour(n))
    }

    /// Answers every request with `status`.
    pub fn answering(code: u16) -> Self {
        Self::judging(move |_, _| status(code))
    }

    /// Answers each request with `behaviour(path, n)`.
    pub fn routed(behaviour: impl Fn(&str, usize) -> Reply + Send + Sync + 'static) -> Self {
        Self::judging(move |r, n| behaviour(&r.path, n))
    }

    /// Answers each request with `behaviour(request, n)`: a receiver that checks signatures,
    /// say.
    pub fn judging(behaviour: impl Fn(&Received, usize) -> Reply + Send + Sync + 'static) -> Self {
        let shared = Shared {
            log: Arc::default(),
            behaviour: Arc::new(Mutex::new(Arc::new(behaviour))),
        };
        let listener = std::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
            .expect("the receiver binds a loopback port");
        listener.set_nonblocking(true).unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let app = Router::new().fallback(receive).with_state(shared.clone());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                tokio::select! {
                    _ = axum::serve(listener, app) => {}
                    _ = stopped => {}
                }
            });
            // Dropping the runtime drops the connections still open: gone at once.
        });
        Self {
            url: format!("{base}/hook"),
            base,
            shared,
            stop: Some(stop),
        }
    }

    /// Changes what the following requests get.
    pub fn set(&self, behaviour: impl Fn(usize) -> Reply + Send + Sync + 'static) {
        *self.shared.behaviour.lock().unwrap() = Arc::new(move |_: &Received, n| behaviour(n));
    }

    /// Every request so far, in the order they came.
    pub fn received(&self) -> Vec<Received> {
        self.shared.log.lock().unwrap().clone()
    }

    /// How many requests came.
    pub fn count(&self) -> usize {
        self.shared.log.lock().unwrap().len()
    }

    /// How many requests came for each `webhook-id`.
    pub fn ids(&self) -> HashMap<String, u32> {
        let mut ids = HashMap::new();
        for r in self.shared.log.lock().unwrap().iter() {
            *ids.entry(r.header("webhook-id").to_owned()).or_default() += 1;
        }
        ids
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
