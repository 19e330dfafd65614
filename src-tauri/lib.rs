//! The Switchyard desktop console (Tauri 2). Commands stay thin: they call `switchyard-core`.

pub fn run() {
    tauri::Builder::default()
        .run(tauri::generate_context!("tauri.conf.json"))
        .expect("error while running the Switchyard desktop console");
}
