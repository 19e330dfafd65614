//! What the retirement tests share: a fast in-process server, PUT and wait helpers.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use switchyard_control_plane::Server;

use crate::support::{Api, FAST, TOKEN, config};

/// An in-process control plane whose worker advances retirements every 20 ms.
pub async fn server(dir: &Path) -> (Server, Api) {
    let mut config = config(&dir.join("cp.db"), FAST);
    config.delivery.retirement_every = Duration::from_millis(20);
    let server = Server::start(config).await.unwrap();
    let api = Api::new(server.url());
    (server, api)
}

pub async fn retire(api: &Api, id: &str, body: Value) -> (u16, Value) {
    api.call("PUT", &format!("/v1/retirements/{id}"), Some(body), None)
        .await
}

/// `PUT`, tolerating a server that dies while answering: `None` when no answer came.
pub async fn try_retire(api: &Api, id: &str, body: &Value) -> Option<(u16, Value)> {
    let response = api
        .http
        .put(format!("{}/v1/retirements/{id}", api.base))
        .bearer_auth(TOKEN)
        .json(body)
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .ok()?;
    let status = response.status().as_u16();
    let body = response.json().await.ok()?;
    Some((status, body))
}

/// Waits until retirement `id` is in `state`; returns it.
pub async fn wait_retirement(api: &Api, id: &str, state: &str, within: Duration) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let (status, r) = api
            .call("GET", &format!("/v1/retirements/{id}"), None, None)
            .await;
        if status == 200 && r["state"] == state {
            return r;
        }
        assert!(
            Instant::now() < deadline,
            "retirement {id} never reached {state}: {r:#}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The states a retirement entered, in order.
pub fn states(retirement: &Value) -> Vec<String> {
    retirement["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["state"].as_str().unwrap().to_owned())
        .collect()
}

pub fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

pub async fn status_of(api: &Api, path: &str) -> u16 {
    api.call("GET", path, None, None).await.0
}

pub fn event(n: u64) -> Value {
    json!({"endpoint": "ep", "event_type": "thing.happened", "payload": {"n": n}})
}
