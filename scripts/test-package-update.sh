#!/usr/bin/env bash
# `make test-package`, the update case: a signed update installs on restart over an installed
# package, and a write queued before the update survives it and is delivered exactly once.
#
# 1. A throwaway key pair (made here, never kept) signs two release builds made by
#    scripts/package.sh that trust its public key: the workspace version and the next patch
#    version (PACKAGE_VERSION), each with its .sig.
# 2. A clean Debian 12 root (scripts/lib/package-root.sh) gets the old .deb from apt, plus
#    the test's tooling: WebKitWebDriver (webkit2gtk-driver), to drive the app's UI, and
#    `sudo`, which the updater runs `dpkg -i` through (it tries pkexec, then zenity/kdialog +
#    sudo, then sudo: we are root in the root, so plain sudo needs no password; a desktop would
#    show pkexec's password prompt instead).
# 3. The `switchyard` CLI of the same build adds a profile for a control plane that is down
#    and queues a create in the shared outbox. The app opens on that profile, offline.
# 4. A feed on loopback (python3 -m http.server) announces the new version. Through the UI
#    (About → Updates): a tampered package, then one signed by another key, must be refused
#    with dpkg's version unchanged; the genuine one is downloaded, verified and installed
#    with "Restart to install".
# 5. Then, as an operator would see it: dpkg reports the new version; the app restarted and
#    runs the new binary (its log, then its About dialog); the write is still queued; once the
#    control plane starts, the write lands once (the server's own counters) and the outbox
#    empties.
#
# Needs root. UPDATE_TEST_KEEP=DIR keeps the keys and packages in DIR and reuses them on the
# next run (to iterate on the test without two release builds); without it they are deleted.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.tools/node/node_modules/node/bin:$PATH"
log_prefix=test-package-update
# shellcheck source=lib/package-root.sh
. scripts/lib/package-root.sh
ensure_host_tools curl
ensure_base_root

work="${UPDATE_TEST_KEEP:-}"
[ -n "$work" ] || work="$(mktemp -d -p "$cache" update.XXXX)"
mkdir -p "$work"
work="$(cd "$work" && pwd)"
host_pids=()
cleanup() {
  # The app's log outlives the root, for a failure's post-mortem.
  [ -z "$root" ] || cp "$root$applog" "$cache/update-app.log" 2>/dev/null || true
  teardown
  local p
  for p in "${host_pids[@]}" "$xvfb_pid"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  [ -n "${UPDATE_TEST_KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
fail() { log "FAILED: $*"; log "the app's log and WebKitWebDriver's output: $cache/update-app.log, $cache/update-webdriver.log"; exit 1; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wd() { python3 "$repo/scripts/lib/webdriver.py" "$@"; }
in_root() { chroot "$root" env -i HOME=/root PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin LANG=C.UTF-8 "$@"; }
# The CLI in the root, on the app's data folder and the test's profile; `queued_state` is the
# state of the probe's write in the outbox ("" once it is no longer queued).
cli() { in_root switchyard --profile acme "$@"; }
queued_state() { cli outbox list "$@" | awk -v r="endpoint/$probe" '$3 == r { print $4 }'; }

old_version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)"
new_version="$(echo "$old_version" | awk -F. '{ printf "%d.%d.%d", $1, $2, $3 + 1 }')"
tauri=ui/node_modules/.bin/tauri
applog=/root/.local/share/dev.switchyard.console/logs/switchyard.log
probe=queued-before-update

# build VERSION_OR_EMPTY OUT: a signed release package (nice: it takes the machine's CPUs).
build() {
  local t0=$SECONDS
  TAURI_SIGNING_PRIVATE_KEY="$(cat "$work/keys/trusted.key")" TAURI_SIGNING_PRIVATE_KEY_PASSWORD="" \
    SWITCHYARD_UPDATE_PUBKEY="$(cat "$work/keys/trusted.key.pub")" PACKAGE_VERSION="$1" \
    PACKAGE_OUT="$2" PACKAGE_SKIP_ARCHIVES=1 nice -n 19 ./scripts/package.sh >"$2.log" 2>&1 \
    || { tail -20 "$2.log"; fail "building ${1:-$old_version}"; }
  log "built ${1:-$old_version} in $((SECONDS - t0)) s"
}

# The key pairs, the two signed packages and the CLI and control plane of the same build.
make_packages() {
  if ls "$work"/old/*.deb.sig "$work"/new/*.deb.sig "$work/bin/switchyard" >/dev/null 2>&1; then
    log "reusing the keys and packages in $work"
    return 0
  fi
  mkdir -p "$work/keys" "$work/bin"
  local k
  for k in trusted foreign; do
    "$tauri" signer generate --ci -p "" -f -w "$work/keys/$k.key" >/dev/null
  done
  build "" "$work/old"
  # The tools of the old build: every workspace binary is built with the app.
  cp target/release/switchyard target/release/switchyard-control-plane "$work/bin/"
  build "$new_version" "$work/new"
}

# serve_feed DEB SIGNATURE: latest.json announces the new version at DEB with SIGNATURE.
serve_feed() {
  local name
  name="$(basename "$1")"
  [ "$1" -ef "$work/feed/$name" ] || cp "$1" "$work/feed/$name"
  python3 - "$work/feed/latest.json" "$new_version" "http://127.0.0.1:$feed_port/$name" "$2" <<'PY'
import json, sys
path, version, url, signature = sys.argv[1:]
feed = {"version": version, "notes": "The update test's release.", "pub_date": "2026-12-01T12:00:00Z",
        "platforms": {"linux-x86_64-deb": {"url": url, "signature": signature}}}
open(path, "w").write(json.dumps(feed))
PY
}

start_servers() {
  mkdir -p "$work/feed"
  feed_port="$(free_port)"
  python3 -m http.server --bind 127.0.0.1 --directory "$work/feed" "$feed_port" >"$work/feed.log" 2>&1 &
  host_pids+=($!)
  cp_port="$(free_port)"
  cp_token="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
}

# The control plane the queued write is for (down until this is called).
start_control_plane() {
  (umask 077 && printf 'acme:%s\n' "$cp_token" >"$work/tenants.txt")
  "$work/bin/switchyard-control-plane" serve --listen "127.0.0.1:$cp_port" --db "sqlite://$work/cp.db" \
    --tenants-file "$work/tenants.txt" >"$work/control-plane.log" 2>&1 &
  host_pids+=($!)
  local _
  for _ in $(seq 1 60); do
    curl -fsS "http://127.0.0.1:$cp_port/healthz" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  fail "the control plane did not start: $(tail -3 "$work/control-plane.log")"
}

# metric NAME LABEL...: the sum of a counter's series that carry every LABEL (0 when none).
metric() {
  local name="$1"
  shift
  curl -fsS "http://127.0.0.1:$cp_port/metrics" | awk -v name="$name" -v labels="$*" '
    index($0, name "{") == 1 { n = split(labels, want, " "); ok = 1
      for (i = 1; i <= n; i++) if (!index($0, want[i])) ok = 0
      if (ok) s += $NF }
    END { print s + 0 }'
}

# The root with the old package and the test's tools; a write queued for the down plane.
prepare_root() {
  new_root update
  install_in_root update "$(ls "$work"/old/*.deb)" webkit2gtk-driver sudo || fail "installing $old_version"
  [ "$(installed_version)" = "$old_version" ] || fail "dpkg reports $(installed_version), not $old_version"
  cp "$work/bin/switchyard" "$root/usr/local/bin/"
  printf %s "$cp_token" | in_root switchyard profile add acme --url "http://127.0.0.1:$cp_port" --token-stdin >/dev/null
  cli endpoints create "$probe" --spec '{"description": "queued before the update"}'
  [ "$(queued_state)" = pending ] || fail "the write is not queued: $(cli outbox list)"
}

# Starts WebKitWebDriver in the root (stopping the one before) and opens a session on the
# installed app: WebKitWebDriver starts /usr/bin/switchyard-desktop itself.
wd_pid=""
open_app() {
  local wd_port
  [ -z "$wd_pid" ] || { kill "$wd_pid" 2>/dev/null || true; wait "$wd_pid" 2>/dev/null || true; }
  wd_port="$(free_port)"
  # TAURI_WEBVIEW_AUTOMATION: Tauri's own switch that lets a WebDriver drive the webview (what
  # tauri-driver sets); the app itself has no test switch.
  chroot "$root" env -i HOME=/root DISPLAY="$display" PATH=/usr/bin:/bin:/usr/sbin:/sbin LANG=C.UTF-8 \
    TAURI_WEBVIEW_AUTOMATION=true WebKitWebDriver --port="$wd_port" --host=127.0.0.1 \
    >>"$cache/update-webdriver.log" 2>&1 &
  wd_pid=$!
  export WD_URL="http://127.0.0.1:$wd_port"
  WD_SESSION="$(wd session /usr/bin/switchyard-desktop)" || fail "no WebDriver session on the app"
  export WD_SESSION
  wd click about-button
}

# check_and_download: Check → "Version N available" → Download.
check_and_download() {
  wd click update-check
  wd wait-text update-state "Version $new_version available" >/dev/null || fail "no offer of $new_version"
  wd click update-download
}

# Tampered bytes with the genuine signature, then genuine bytes signed by another key.
refusals() {
  local deb sig
  deb="$(ls "$work"/new/*.deb)"
  sig="$(cat "$deb.sig")"
  wd type update-feed "http://127.0.0.1:$feed_port/latest.json"
  wd click update-feed-save
  cp "$deb" "$work/feed/tampered.deb"
  printf '\xff' | dd of="$work/feed/tampered.deb" bs=1 seek=100000 conv=notrunc status=none
  serve_feed "$work/feed/tampered.deb" "$sig"
  check_and_download
  wd wait-text update-state "did not match its signature" >/dev/null || fail "a tampered package was not refused"
  [ "$(installed_version)" = "$old_version" ] || fail "a tampered package changed the installed version"
  log "refused: a tampered package (dpkg still reports $old_version)"

  cp "$deb" "$work/feed/foreign.deb"
  "$tauri" signer sign -p "" --app-version "$new_version" -f "$work/keys/foreign.key" "$work/feed/foreign.deb" >/dev/null
  serve_feed "$work/feed/foreign.deb" "$(cat "$work/feed/foreign.deb.sig")"
  check_and_download
  wd wait-text update-state "did not match its signature" >/dev/null || fail "a package signed by another key was not refused"
  [ "$(installed_version)" = "$old_version" ] || fail "a foreign package changed the installed version"
  log "refused: a package signed by another key (dpkg still reports $old_version)"
}

# The app's processes running the installed binary (not a replaced, deleted one).
app_pids() {
  local p
  for p in $(root_pids); do
    [ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$root/usr/bin/switchyard-desktop" ] && echo "$p"
  done
  return 0
}

# The genuine package: verified, installed on restart; the app comes back as the new version.
install_update() {
  local deb t0 _
  deb="$(ls "$work"/new/*.deb)"
  serve_feed "$deb" "$(cat "$deb.sig")"
  check_and_download
  wd wait-text update-state "signature verified" >/dev/null || fail "the genuine package was not verified"
  t0=$SECONDS
  # The app exits to restart: the click's answer may be cut off.
  WD_TIMEOUT=5 wd click update-install || log "(the restart cut the click's answer off)"
  for _ in $(seq 1 240); do
    [ "$(installed_version)" = "$new_version" ] && grep -q "Switchyard $new_version (.*) starting" "$root$applog" \
      && [ -n "$(app_pids)" ] && break
    sleep 0.5
  done
  [ "$(installed_version)" = "$new_version" ] || fail "dpkg reports $(installed_version) after the update, not $new_version"
  grep -q "Switchyard $new_version (.*) starting" "$root$applog" || fail "the app did not start again as $new_version"
  [ -n "$(app_pids)" ] || fail "no process runs the installed binary after the restart"
  grep -q "update: installing $new_version; 1 queued writes stay in the outbox" "$root$applog" \
    || fail "the app did not report the queued write before installing"
  log "installed on restart in $((SECONDS - t0)) s: dpkg reports $new_version, the app runs it again (pid $(app_pids | head -1))"
}

# The write queued before the update: still queued, then delivered once by the new version.
deliver_queued_write() {
  local _ executed created replayed live
  [ "$(queued_state)" = pending ] || fail "the queued write did not survive the update: $(cli outbox list --all)"
  log "the write queued before the update is still in the outbox; starting the control plane"
  start_control_plane
  for _ in $(seq 1 60); do
    live="$(curl -fsS -H "Authorization: Bearer $cp_token" "http://127.0.0.1:$cp_port/v1/endpoints/$probe" 2>/dev/null)" && break
    sleep 0.5
  done
  echo "$live" | grep -q '"version":1,' || fail "the queued create did not land as version 1: ${live:-nothing}"
  # A few more of the app's sync rounds: a second send would show in the counters.
  sleep 6
  executed="$(metric switchyard_idempotency_requests_total 'outcome="executed"')"
  created="$(metric switchyard_http_requests_total 'route="/v1/endpoints"' 'method="POST"' 'status="201"')"
  replayed="$(metric switchyard_idempotency_requests_total 'outcome="replayed"')"
  [ "$created" = 1 ] && [ "$executed" = 1 ] || fail "expected 1 create and 1 keyed execution on the server, got $created and $executed"
  [ -z "$(queued_state)" ] || fail "the write is still queued: $(cli outbox list)"
  [ "$(queued_state --all)" = done ] || fail "the write is not done: $(cli outbox list --all)"
  log "delivered exactly once after the update (server: $created create, $executed keyed execution, $replayed replays); the outbox shows it done"
}

# A person opening About in the updated app sees the new version.
about_shows_new_version() {
  local p version
  for p in $(app_pids); do kill -TERM "$p" 2>/dev/null || true; done
  sleep 2
  open_app
  version="$(wd wait-text about-version "$new_version")" || fail "About does not show $new_version"
  wd shot "$cache/shots/update-about.png"
  wd quit
  log "About shows version $version (screenshot $cache/shots/update-about.png)"
}

t_start=$SECONDS
rm -f "$cache/update-app.log" "$cache/update-webdriver.log"
make_packages
start_display
start_servers
prepare_root
open_app
wd click updates-tab
refusals
install_update
deliver_queued_write
about_shows_new_version
log "passed in $((SECONDS - t_start)) s: $old_version → $new_version installed on restart; 2 bad packages refused; the queued write delivered once"
