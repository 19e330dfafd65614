// Rebuild when a migration is added (sqlx::migrate! embeds them).
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
