//! Prints what a binary built from this source reports (used by `tests/fresh_clone.rs`).
fn main() {
    println!("version={}", switchyard_build_info::VERSION);
    println!(
        "commit={}",
        switchyard_build_info::commit().unwrap_or("(none)")
    );
    println!("build_date={}", switchyard_build_info::BUILD_DATE);
    println!("long={}", switchyard_build_info::LONG_VERSION);
}
