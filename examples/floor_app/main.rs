//! The platform's floor for `make bench-desktop`: a Tauri 2 app built like the desktop console
//! (same toolchain, same Tauri features, same release profile) with an empty page. Its page
//! says when its first frame is painted, as the console's UI does (`ui_ready`), and the app
//! logs `launch: interactive after N ms` counted from the process's start, so the bench reads
//! both the same way. What the console costs over this is the console's own.

use std::sync::OnceLock;
use std::time::Instant;

static STARTED: OnceLock<Instant> = OnceLock::new();

#[tauri::command]
fn ready() -> u64 {
    let ms = STARTED.get().map_or(0, |s| s.elapsed().as_millis() as u64);
    eprintln!("launch: interactive after {ms} ms");
    ms
}

fn main() {
    STARTED.get_or_init(Instant::now);
    tauri::Builder::default()
        .invoke_handler(tauri::generate_handler![ready])
        .run(tauri::generate_context!(
            "examples/floor_app/tauri.conf.json"
        ))
        .expect("the floor app did not run");
}
