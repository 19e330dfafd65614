# Clean Debian 12 roots for the package tests (sourced by scripts/test-package.sh and
# scripts/test-package-update.sh; run as root from the repository's top folder).
#
# - A minimal Debian 12 root (debootstrap --variant=minbase, from Debian's package registry)
#   is made once and kept as a tarball in .package-cache/ (git-ignored); `new_root` unpacks a
#   fresh copy for each case, so every case starts from a clean system.
# - `install_in_root` lets apt install a .deb into it: only what the package declares comes
#   with it (the downloaded archives are kept in .package-cache/apt-archives).
# - The app runs in the root (chroot) on a virtual display that runs outside it (Xvfb on the
#   host, its socket bind-mounted), so no test tool installed in the root can mask a missing
#   dependency of the package.
# - `teardown` stops what runs in the root and undoes the mounts before anything is deleted
#   (rm never crosses into a mount: --one-file-system, and it checks).

repo="$PWD"
cache="$repo/.package-cache"
base="$cache/debian12-minbase.tar.gz"
root=""
xvfb_pid=""
display=""

log() { echo "${log_prefix:-test-package}: $*"; }

# The host tools the tests use, installed when missing.
ensure_host_tools() {
  [ "$(id -u)" -eq 0 ] || { log "needs root (debootstrap, chroot, mounts)" >&2; exit 1; }
  mkdir -p "$cache/apt-archives/partial" "$cache/roots" "$cache/shots"
  local need=() pkg
  for pkg in debootstrap xvfb xauth x11-utils imagemagick tesseract-ocr tesseract-ocr-eng "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need+=("$pkg")
  done
  if [ ${#need[@]} -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  fi
}

# The minimal Debian 12 root's tarball, made once.
ensure_base_root() {
  [ -f "$base" ] && return 0
  log "making a minimal Debian 12 root (once; kept in $base)"
  local t0=$SECONDS tmp="$cache/roots/debootstrap.$$"
  debootstrap --variant=minbase bookworm "$tmp" http://deb.debian.org/debian >"$cache/debootstrap.log" 2>&1 \
    || { tail -20 "$cache/debootstrap.log"; exit 1; }
  cat >"$tmp/etc/apt/sources.list" <<'SOURCES'
deb http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
SOURCES
  rm -rf "$tmp"/var/cache/apt/archives/*.deb
  tar -C "$tmp" -czf "$base.part" . && mv "$base.part" "$base"
  rm -rf --one-file-system "$tmp"
  log "root made in $((SECONDS - t0)) s ($(du -h "$base" | cut -f1) compressed)"
}

# A virtual display for the app in the root; its socket is bind-mounted into each root.
start_display() {
  display=":$((90 + RANDOM % 9))"
  Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
  xvfb_pid=$!
  sleep 1
}

# new_root NAME: a fresh root with /proc, /sys, /dev, the X socket and the apt cache mounted.
new_root() {
  root="$(mktemp -d -p "$cache/roots" "$1.XXXX")"
  tar -C "$root" -xzf "$base"
  mount -t proc proc "$root/proc"
  mount --bind /sys "$root/sys"
  mount --bind /dev "$root/dev"
  mount --bind /dev/pts "$root/dev/pts"
  mount --bind /dev/shm "$root/dev/shm"
  mkdir -p "$root/tmp/.X11-unix"
  mount --bind /tmp/.X11-unix "$root/tmp/.X11-unix"
  mount --bind "$cache/apt-archives" "$root/var/cache/apt/archives"
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  chroot "$root" apt-get update -qq
}

# install_in_root NAME DEB [MORE PACKAGES]: apt installs the .deb (and what it declares).
install_in_root() {
  local name="$1" deb="$2" t0=$SECONDS
  shift 2
  cp "$deb" "$root/tmp/switchyard.deb"
  log "$name: installing $(basename "$deb") and what it declares${*:+ (and: $*)}"
  DEBIAN_FRONTEND=noninteractive chroot "$root" apt-get install -y -qq --no-install-recommends \
    /tmp/switchyard.deb "$@" >"$cache/$name-apt.log" 2>&1 || { tail -20 "$cache/$name-apt.log"; return 1; }
  rm -f "$root/tmp/switchyard.deb"
  log "$name: installed in $((SECONDS - t0)) s ($(du -sh --one-file-system "$root" | cut -f1) root)"
}

# The version of the package `switchyard` dpkg has installed in the root.
installed_version() {
  chroot "$root" dpkg-query -W -f='${Version}' switchyard 2>/dev/null || true
}

# The ids of the processes running in the root.
root_pids() {
  local p
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && echo "${p#/proc/}"
  done
  return 0
}

teardown() {
  [ -n "$root" ] || return 0
  # Processes this script started in the root (the app, its WebKit helpers): by their ids.
  local p m
  for p in $(root_pids); do kill -TERM "$p" 2>/dev/null || true; done
  sleep 0.5
  for p in $(root_pids); do kill -KILL "$p" 2>/dev/null || true; done
  for m in tmp/.X11-unix dev/shm dev/pts dev sys proc var/cache/apt/archives; do
    mountpoint -q "$root/$m" && umount -l "$root/$m" || true
  done
  if findmnt -rn -o TARGET | grep -q "^$root"; then
    echo "${log_prefix:-test-package}: mounts remain under $root; not deleting it" >&2
  else
    rm -rf --one-file-system "$root"
  fi
  root=""
}
