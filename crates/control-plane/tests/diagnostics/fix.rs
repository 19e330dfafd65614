//! Reading the findings and running their actions as a client does: the action's method,
//! path and body as given, with an Idempotency-Key.

use std::time::{Duration, Instant};

use serde_json::Value;
use switchyard_protocol::{Diagnostics, Finding, FixAction};

use crate::support::{Api, TOKEN};

pub async fn diagnostics(api: &Api) -> Diagnostics {
    serde_json::from_value(api.get("/v1/diagnostics").await).expect("a Diagnostics body")
}

pub async fn finding(api: &Api, id: &str) -> Option<Finding> {
    diagnostics(api)
        .await
        .findings
        .into_iter()
        .find(|f| f.id == id)
}

/// Polls until the finding `id` is there (and satisfies `ready`), at most `within`.
pub async fn wait_finding(
    api: &Api,
    id: &str,
    within: Duration,
    ready: impl Fn(&Finding) -> bool,
) -> Finding {
    let deadline = Instant::now() + within;
    loop {
        let found = finding(api, id).await;
        if let Some(f) = found.filter(|f| ready(f)) {
            return f;
        }
        assert!(
            Instant::now() < deadline,
            "finding {id} never appeared: {:#?}",
            diagnostics(api).await
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// One call of `action` with `key`: status, whether it was a replay, body.
pub async fn run(api: &Api, action: &FixAction, key: &str) -> (u16, bool, Value) {
    let mut request = api
        .http
        .request(
            action.method.parse().unwrap(),
            format!("{}{}", api.base, action.path),
        )
        .bearer_auth(TOKEN)
        .header("idempotency-key", key);
    if let Some(body) = &action.body {
        request = request.json(body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let replayed = response
        .headers()
        .get("idempotent-replayed")
        .is_some_and(|v| v == "true");
    let text = response.text().await.unwrap();
    (
        status,
        replayed,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// Runs `action` twice under one key: the first executes, the second is its stored answer
/// (`Idempotent-Replayed: true`, the same body). Returns the first answer.
pub async fn run_twice(api: &Api, action: &FixAction, key: &str) -> (u16, Value) {
    let (status, replayed, body) = run(api, action, key).await;
    assert!(!replayed, "the first call executes: {body}");
    let (again, replayed_again, body_again) = run(api, action, key).await;
    assert_eq!(again, status, "{body_again}");
    assert!(replayed_again, "the second call is the stored answer");
    assert_eq!(body_again, body);
    (status, body)
}
