// Prevents an extra console window on Windows in release.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    switchyard_desktop::malloc::limit_arenas();
    switchyard_desktop::webkit_env::prepare();
    switchyard_desktop::run();
}
