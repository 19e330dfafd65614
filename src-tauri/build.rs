fn main() {
    // tauri-build reruns on tauri.conf.json only; a capability edit must rebuild too.
    println!("cargo:rerun-if-changed=src-tauri/capabilities");
    tauri_build::try_build(
        tauri_build::Attributes::new().capabilities_path_pattern("./src-tauri/capabilities/**/*"),
    )
    .expect("failed to run tauri-build");
}
