# PostgreSQL for the store's tests (sourced by scripts/setup.sh and its test).
#
# The tests need a server on 127.0.0.1:5432 that lets the role `postgres` in without a
# password over loopback and create databases. When one answers there, nothing is touched.
# Otherwise, on Debian 12: install the `postgresql` package, start its cluster (or create
# one), allow trust authentication on loopback only, and start it.
#
# SWITCHYARD_PG_PORT changes the port looked at (tests of this file use a free one);
# SWITCHYARD_SETUP_DRY_RUN=1 prints the commands instead of running them.

pg_port() { echo "${SWITCHYARD_PG_PORT:-5432}"; }

# Whether something accepts TCP connections on 127.0.0.1:$1 (bash's /dev/tcp: no client
# needed on a fresh machine).
pg_answers() {
  local port=$1
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null
}

pg_run() {
  if [ "${SWITCHYARD_SETUP_DRY_RUN:-0}" = 1 ]; then
    echo "would run: $*"
  else
    "$@"
  fi
}

pg_sudo() {
  if [ "$(id -u)" -eq 0 ]; then pg_run "$@"; else pg_run sudo "$@"; fi
}

# Runs a command as the postgres system user.
pg_as_postgres() {
  if [ "$(id -u)" -eq 0 ]; then pg_run runuser -u postgres -- "$@"; else pg_run sudo -u postgres "$@"; fi
}

# The first cluster on `port` in `pg_lsclusters` output: "VERSION NAME STATUS".
pg_cluster_on_port() {
  local port=$1
  command -v pg_lsclusters >/dev/null 2>&1 || return 1
  pg_lsclusters --no-header 2>/dev/null | awk -v p="$port" '$3 == p { print $1, $2, $4; exit }' | grep .
}

# Trust on loopback only (host lines for 127.0.0.1 and ::1 come first, so they win).
pg_trust_loopback() {
  local hba=$1
  if grep -q "switchyard: trust loopback" "$hba" 2>/dev/null; then return 0; fi
  local rules
  rules="# switchyard: trust loopback (test server; nothing else is opened)
host    all             all             127.0.0.1/32            trust
host    all             all             ::1/128                 trust"
  if [ "${SWITCHYARD_SETUP_DRY_RUN:-0}" = 1 ]; then
    echo "would prepend to $hba: trust for 127.0.0.1/32 and ::1/128"
  else
    local tmp
    tmp=$(mktemp)
    { echo "$rules"; cat "$hba"; } >"$tmp"
    pg_sudo cp "$tmp" "$hba"
    rm -f "$tmp"
  fi
}

ensure_postgres() {
  local port
  port=$(pg_port)
  if pg_answers "$port"; then
    echo "setup: PostgreSQL answers on 127.0.0.1:$port; leaving it as it is"
    return 0
  fi
  echo "setup: no PostgreSQL on 127.0.0.1:$port; installing and starting one for the tests"
  if ! command -v pg_lsclusters >/dev/null 2>&1; then
    pg_sudo apt-get update -qq
    pg_sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql
  fi
  local cluster version name
  cluster=$(pg_cluster_on_port "$port" || true)
  if [ -z "$cluster" ]; then
    version=$(ls /usr/lib/postgresql 2>/dev/null | sort -n | tail -1)
    version=${version:-15}
    name="switchyard"
    pg_sudo pg_createcluster "$version" "$name" --port "$port"
  else
    read -r version name _ <<<"$cluster"
  fi
  pg_trust_loopback "/etc/postgresql/$version/$name/pg_hba.conf"
  # Start it (or reload the new rules if it was already running on another address).
  pg_sudo pg_ctlcluster "$version" "$name" start || pg_sudo pg_ctlcluster "$version" "$name" reload
  if [ "${SWITCHYARD_SETUP_DRY_RUN:-0}" != 1 ]; then
    for _ in $(seq 1 50); do pg_answers "$port" && break; sleep 0.2; done
    pg_answers "$port" || { echo "setup: PostgreSQL did not start on port $port" >&2; return 1; }
    pg_as_postgres psql -p "$port" -qAtc "ALTER ROLE postgres CREATEDB" >/dev/null
  fi
  echo "setup: PostgreSQL $version/$name ready on 127.0.0.1:$port (role postgres, trust on loopback)"
}
