//! What a Switchyard binary reports about itself: `switchyard --version`,
//! `switchyard-control-plane --version`, the server's `GET /v1/info` and the desktop app's
//! About dialog all read it from here, so they agree. The version is the workspace's
//! (`Cargo.toml`, `[workspace.package]`) unless a packager built another one
//! (`SWITCHYARD_VERSION`, set by `scripts/package.sh` from `PACKAGE_VERSION`); `build.rs`
//! records it, the commit and the build date.

mod date;

pub use date::rfc3339_utc;

/// The release version (semver), e.g. `0.1.0`.
pub const VERSION: &str = env!("SWITCHYARD_BUILD_VERSION");

/// `VERSION (commit abcdef123456, built 2026-12-01T07:13:00Z)`: what `--version` prints.
pub const LONG_VERSION: &str = env!("SWITCHYARD_LONG_VERSION");

const COMMIT: &str = env!("SWITCHYARD_BUILD_COMMIT");

/// The git commit the binary was built from (full hex id); `None` when the source had no git
/// metadata and none was given (`SWITCHYARD_GIT_COMMIT`).
pub fn commit() -> Option<&'static str> {
    (!COMMIT.is_empty()).then_some(COMMIT)
}

/// When the binary was built, RFC 3339 UTC (`SOURCE_DATE_EPOCH` for reproducible builds).
pub const BUILD_DATE: &str = env!("SWITCHYARD_BUILD_DATE");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_format_as_rfc3339_utc() {
        assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00Z");
        // A leap day and the end of a leap year.
        assert_eq!(rfc3339_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339_utc(1_735_689_599), "2024-12-31T23:59:59Z");
        assert_eq!(rfc3339_utc(1_798_761_600), "2027-01-01T00:00:00Z");
    }

    #[test]
    fn long_version_names_the_version_commit_and_date() {
        assert!(LONG_VERSION.starts_with(VERSION));
        assert!(LONG_VERSION.contains(BUILD_DATE));
        match commit() {
            Some(c) => assert!(LONG_VERSION.contains(&c[..12])),
            None => assert!(LONG_VERSION.contains("commit unknown")),
        }
    }
}
