//! A control plane that accepts connections and never answers (overloaded, hung): for its
//! first 30 s no page says "empty", no replay is enabled, and the DLQ says how long it has
//! waited. Screenshot: the DLQ of the hung plane.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use anyhow::{Result, ensure};

use crate::harness::{App, ONE_AT_A_TIME};

/// Accepts every connection and never reads or answers; the sockets stay open until the
/// listener's thread ends with the test process.
fn hung_plane() -> Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let url = format!("http://{}", listener.local_addr()?);
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    Ok(url)
}

/// Sentences only an answered DLQ may show.
const EMPTY_WORDS: [&str; 3] = [
    "is empty",
    "Every delivery so far succeeded",
    "No dead deliveries",
];

#[tokio::test]
#[ignore = "needs a display and the built app: run with `make test-e2e`"]
async fn a_hung_control_plane_never_reads_as_empty_and_replay_waits() -> Result<()> {
    let _one = ONE_AT_A_TIME.lock().await;
    let url = hung_plane()?;
    let app = App::launch().await?;
    app.wait_online().await?;
    app.add_profile("hung-cp", &url, false).await?;
    app.click("nav-dlq").await?;
    app.el("dlq-waiting").await?;
    let switched = Instant::now();
    let mut said_how_long = false;
    while switched.elapsed() < Duration::from_secs(30) {
        let text: String = app.eval("return document.body.textContent;").await?;
        for words in EMPTY_WORDS {
            ensure!(
                !text.contains(words),
                "after {:?} the DLQ of a plane that never answered says {words:?}",
                switched.elapsed()
            );
        }
        let loaded = app
            .text_of("[data-testid='dlq-loaded']")
            .await
            .unwrap_or_default();
        ensure!(
            !loaded.contains("shown"),
            "before an answer the DLQ counts rows: {loaded:?}"
        );
        let replay: bool = app
            .eval("const b = document.querySelector(\"[data-testid='replay-filter']\"); return !!b && !b.disabled;")
            .await?;
        ensure!(
            !replay,
            "after {:?} replaying the whole DLQ is enabled",
            switched.elapsed()
        );
        if let Some(waiting) = app.text_of("[data-testid='dlq-waiting']").await
            && waiting.contains("hung-cp has not answered for")
        {
            if !said_how_long {
                app.shot("dlq-unanswered").await?;
            }
            said_how_long = true;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    ensure!(
        said_how_long,
        "the DLQ never said how long hung-cp has not answered"
    );
    // The overview of a plane whose cache was never filled counts nothing as 0.
    app.click("nav-overview").await?;
    app.wait_text("stat-endpoints", "unknown endpoints", |t| {
        t.contains("not loaded yet")
    })
    .await?;
    app.quit().await
}
