#!/usr/bin/env bash
# `make package`: the desktop console as a .deb (and an AppImage where the AppImage tools are
# available), and release archives of the `switchyard` CLI and the `switchyard-control-plane`
# server, all with SHA-256 checksums, in dist/.
#
# Name and version come from one place: `productName` in tauri.conf.json and the workspace
# version in Cargo.toml (tauri.conf.json has no version of its own).
#
# Signed updates: with TAURI_SIGNING_PRIVATE_KEY (and TAURI_SIGNING_PRIVATE_KEY_PASSWORD) and
# SWITCHYARD_UPDATE_PUBKEY set, the app trusts that public key and the bundler writes a `.sig`
# beside each package (see docs/install.md). Without them the build carries no update key.
#
# Options (environment): PACKAGE_VERSION overrides the version (a test builds a "newer" app):
# the package's, the updater's and the one every binary reports (build-info's SWITCHYARD_VERSION);
# PACKAGE_OUT sets the output folder (default dist/); PACKAGE_SKIP_ARCHIVES=1 builds the app only;
# PACKAGE_EXTRA_CONFIG is one more tauri config (JSON) to merge.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.tools/node/node_modules/node/bin:$PATH"

out="${PACKAGE_OUT:-dist}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
version="${PACKAGE_VERSION:-$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)}"
# The binaries report the package's version (About, --version, the log): see crates/build-info.
if [ -n "${PACKAGE_VERSION:-}" ]; then export SWITCHYARD_VERSION="$version"; fi
arch="$(dpkg --print-architecture 2>/dev/null || echo amd64)"
triple="$(uname -m)-linux-gnu"
tauri=ui/node_modules/.bin/tauri
[ -x "$tauri" ] || { echo "package: $tauri is missing: run scripts/setup.sh" >&2; exit 1; }

# The tauri config to merge: the version, the update key when given, extras.
configs=(--config "{\"version\": \"$version\"}")
if [ -n "${SWITCHYARD_UPDATE_PUBKEY:-}" ]; then
  [ -n "${TAURI_SIGNING_PRIVATE_KEY:-}" ] || { echo "package: SWITCHYARD_UPDATE_PUBKEY needs TAURI_SIGNING_PRIVATE_KEY to sign with" >&2; exit 1; }
  configs+=(--config "{\"bundle\": {\"createUpdaterArtifacts\": true}, \"plugins\": {\"updater\": {\"pubkey\": \"$SWITCHYARD_UPDATE_PUBKEY\"}}}")
fi
[ -n "${PACKAGE_EXTRA_CONFIG:-}" ] && configs+=(--config "$PACKAGE_EXTRA_CONFIG")

echo "package: building Switchyard $version (release, UI embedded)"
start=$SECONDS
"$tauri" build --ci --no-bundle "${configs[@]}"
echo "package: app built in $((SECONDS - start)) s"

# The .deb's dependencies: the packages that provide every shared library the binary links,
# with the versions their symbols need (dpkg-shlibdeps), so apt installs exactly what it needs.
binary=target/release/switchyard-desktop
shlib_dir="$(mktemp -d)"
trap 'rm -rf "$shlib_dir"' EXIT
mkdir -p "$shlib_dir/debian"
printf 'Source: switchyard\n\nPackage: switchyard\nArchitecture: any\n' >"$shlib_dir/debian/control"
depends="$(cd "$shlib_dir" && dpkg-shlibdeps -O "$OLDPWD/$binary" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')"
[ -n "$depends" ] || { echo "package: dpkg-shlibdeps found no dependencies for $binary" >&2; exit 1; }
# Not a library, so dpkg-shlibdeps cannot see it: the updater's HTTP client (reqwest 0.13 with
# rustls-platform-verifier) loads the system's CA certificates and cannot be built without any
# ("builder error", even for a feed on loopback). The console's own client bundles its roots.
depends="$depends, ca-certificates"
json_depends="$(echo "$depends" | tr ',' '\n' | sed 's/^ *//; s/"/\\"/g; s/.*/"&"/' | paste -sd,)"
configs+=(--config "{\"bundle\": {\"linux\": {\"deb\": {\"depends\": [$json_depends]}}}}")
echo "package: deb depends: $depends"

bundles=deb
cache="${XDG_CACHE_HOME:-$HOME/.cache}/tauri"
if [ -x "$cache/linuxdeploy-x86_64.AppImage" ] && [ -f "$cache/AppRun-x86_64" ]; then
  bundles=deb,appimage
else
  echo "package: no AppImage: its tools (linuxdeploy, AppRun and the linuxdeploy plugins) are not in $cache"
  echo "package: and the bundler would download them from outside the package registries (see docs/install.md)"
fi
"$tauri" bundle --ci --bundles "$bundles" "${configs[@]}"
shopt -s nullglob
for f in target/release/bundle/deb/*_"${version}"_*.deb* target/release/bundle/appimage/*_"${version}"_*.AppImage*; do
  cp "$f" "$out/"
done

if [ "${PACKAGE_SKIP_ARCHIVES:-}" != 1 ]; then
  # `tauri build` built every workspace binary with these features; this only makes sure
  # (a different feature set would rebuild half the workspace for nothing).
  cargo build --release --locked --bins --features tauri/custom-protocol
  for bin in switchyard switchyard-control-plane; do
    name="$bin-$version-$triple"
    stage="$(mktemp -d)/$name"
    mkdir -p "$stage"
    cp "target/release/$bin" "$stage/"
    cp README.md "$stage/"
    cp docs/install.md "$stage/INSTALL.md"
    tar -C "$(dirname "$stage")" --owner=0 --group=0 -czf "$out/$name.tar.gz" "$name"
    rm -rf "$(dirname "$stage")"
  done
fi

(cd "$out" && rm -f SHA256SUMS && sha256sum -- *.deb *.AppImage *.tar.gz 2>/dev/null > SHA256SUMS || true)
echo "package: done in $((SECONDS - start)) s:"
ls -la "$out"
