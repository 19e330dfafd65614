//! Quitting without sending a write twice: closing the window (or any other request to
//! exit) first stops the sync engine gracefully — nothing new is sent, the writes already
//! on the wire are awaited and recorded, the rest stay queued for the next launch — and
//! says "finishing N writes…" in the window when that takes more than a moment.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tauri::{AppHandle, Emitter, Manager};

use crate::ipc::{CORE_EVENT, CoreEvent};
use crate::state::AppState;

/// The longest a quit waits for the writes in flight (a request's own timeout bounds each;
/// what is still unanswered then is sent again, with the same key, after the next launch).
/// Reads under way (a refresh, a probe) are not waited for.
const QUIT_WAITS_AT_MOST: Duration = Duration::from_secs(25);
/// Quits this quick say nothing.
const SAY_AFTER: Duration = Duration::from_millis(300);

static QUITTING: AtomicBool = AtomicBool::new(false);

/// Whether a quit is under way (its own final `exit` must then go through).
pub fn quitting() -> bool {
    QUITTING.load(Ordering::SeqCst)
}

/// Starts the graceful quit once; the caller prevents the close or exit it intercepted.
pub fn begin(app: &AppHandle) {
    if QUITTING.swap(true, Ordering::SeqCst) {
        return;
    }
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        finish_writes(&app).await;
        app.exit(0);
    });
}

async fn finish_writes(app: &AppHandle) {
    let state = app.state::<AppState>();
    state.core.stop_syncs();
    let started = std::time::Instant::now();
    let mut said = false;
    loop {
        let sending = state.core.sending_here().await.unwrap_or(0);
        if sending == 0 {
            return;
        }
        let writes = if sending == 1 { "write" } else { "writes" };
        if started.elapsed() >= QUIT_WAITS_AT_MOST {
            tracing::warn!(
                "quitting before {sending} {writes} in flight were answered; they are sent again, same key, after the next launch"
            );
            return;
        }
        if !said && started.elapsed() >= SAY_AFTER {
            said = true;
            tracing::info!("quitting: finishing {sending} {writes} in flight");
            let sending = u32::try_from(sending).unwrap_or(u32::MAX);
            let _ = app.emit(CORE_EVENT, CoreEvent::Quitting { sending });
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
