#!/usr/bin/env bash
# Installs what building and testing Switchyard needs on Debian 12: system packages (as root
# or with sudo), the UI's npm packages, tauri-driver for the WebDriver end-to-end tests, and
# a PostgreSQL server on 127.0.0.1:5432 when none answers there (scripts/lib/postgres.sh).
# gnome-keyring, libsecret-tools and dbus-daemon/dbus-bin (dbus-run-session) are for
# `make test-keychain`: profile tokens in a real Secret Service (python3 finds its test binary).
# python3-venv is for the virtualenv that holds schemathesis (`make test-api-fuzz`), iproute2
# (`ip`) for the loopback of that run's own network namespace (scripts/api-fuzz.sh).
# prometheus ships promtool: `promtool check metrics` lints a real scrape of /metrics
# (crates/control-plane/tests/prometheus/lint.rs).
# Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

# The Rust toolchain is the one thing this script does not install (rustup's, 1.85 or newer).
if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found: install Rust 1.85 or newer with rustup (https://rustup.rs), then rerun." >&2
  exit 1
fi

need_apt=()
for pkg in build-essential pkg-config libssl-dev libwebkit2gtk-4.1-dev libsoup-3.0-dev \
  libjavascriptcoregtk-4.1-dev libgtk-3-dev librsvg2-dev libayatana-appindicator3-dev libxdo-dev \
  xvfb xauth webkit2gtk-driver imagemagick libdbus-1-dev \
  gnome-keyring libsecret-tools dbus-daemon dbus-bin python3 python3-venv iproute2 \
  prometheus; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need_apt+=("$pkg")
done
if ! command -v node >/dev/null 2>&1; then need_apt+=(nodejs npm); fi
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing system packages: ${need_apt[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

# The UI toolchain (Vite 8, Vitest 4) needs Node.js 20.19 or newer; Debian 12's own nodejs is 18.
# Then Node.js 20 comes from the npm registry (the `node` package ships the binary) into
# .tools/node; the Makefile puts .tools/node/node_modules/node/bin first on PATH.
node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
if [ "$(node_major)" -lt 20 ]; then
  echo "setup: Node.js $(node --version 2>/dev/null || echo none) is too old for the UI; installing Node.js 20 into .tools/node"
  npm install --prefix .tools/node --no-audit --no-fund --loglevel=error node@20
  export PATH="$PWD/.tools/node/node_modules/node/bin:$PATH"
fi
if [ "$(node_major)" -lt 20 ]; then
  echo "setup: Node.js 20.19+ is required for the UI (found: $(node --version 2>/dev/null || echo none))." >&2
  echo "setup: installing it into .tools/node did not work; install Node.js 20 or newer, then rerun." >&2
  exit 1
fi

if [ -f ui/package.json ]; then
  if [ ! -d ui/node_modules ] || [ ui/package-lock.json -nt ui/node_modules/.package-lock.json ]; then
    echo "setup: installing UI packages (npm ci)"
    npm --prefix ui ci --no-audit --no-fund --loglevel=error
  fi
fi

if ! command -v tauri-driver >/dev/null 2>&1 && [ ! -x "$HOME/.cargo/bin/tauri-driver" ]; then
  echo "setup: installing tauri-driver"
  cargo install tauri-driver --locked --version '^2' --quiet
fi
# schemathesis (PyPI) for `make test-api-fuzz` (scripts/api-fuzz.sh): a pinned version in a
# virtualenv inside the checkout (.tools/ is git-ignored), installed when that version is not
# there yet. Raise the pin on purpose: a newer schemathesis generates other cases.
SCHEMATHESIS_VERSION=4.32.5
st_venv=.tools/schemathesis
if [ "$("$st_venv/bin/schemathesis" --version 2>/dev/null)" != "schemathesis, version $SCHEMATHESIS_VERSION" ]; then
  echo "setup: installing schemathesis $SCHEMATHESIS_VERSION into $st_venv"
  rm -rf "$st_venv"
  python3 -m venv "$st_venv"
  "$st_venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
fi

# The official MCP Python SDK for `make test-mcp-python` (scripts/mcp-python.py): pinned, in
# its own virtualenv, like schemathesis.
MCP_PYTHON_VERSION=2.3.0
mcp_venv=.tools/mcp-python
if [ "$("$mcp_venv/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))' 2>/dev/null)" != "$MCP_PYTHON_VERSION" ]; then
  echo "setup: installing the MCP Python SDK $MCP_PYTHON_VERSION into $mcp_venv"
  rm -rf "$mcp_venv"
  python3 -m venv "$mcp_venv"
  "$mcp_venv/bin/pip" install --quiet --disable-pip-version-check "mcp==$MCP_PYTHON_VERSION"
fi

# PostgreSQL on 127.0.0.1:5432 for the store's conformance and multi-replica tests.
# shellcheck source=lib/postgres.sh
. scripts/lib/postgres.sh
ensure_postgres

echo "setup: ready"
