#!/usr/bin/env bash
# Tests scripts/lib/postgres.sh's decisions without installing anything: a server that
# answers is left alone; on a port where none answers, setup plans the install, the cluster,
# the loopback trust rules and the start (printed, not run).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/postgres.sh
. scripts/lib/postgres.sh

fail() { echo "test-setup-postgres: $*" >&2; exit 1; }

# A port nobody listens on, and one that a throwaway listener answers on.
free_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
print(s.getsockname()[1], flush=True)
time.sleep(30)
' >"${TMPDIR:-/tmp}/sy-pg-listener.$$" &
listener=$!
trap 'kill $listener 2>/dev/null || true; rm -f "${TMPDIR:-/tmp}/sy-pg-listener.$$"' EXIT
for _ in $(seq 1 50); do [ -s "${TMPDIR:-/tmp}/sy-pg-listener.$$" ] && break; sleep 0.1; done
busy_port=$(head -1 "${TMPDIR:-/tmp}/sy-pg-listener.$$")

pg_answers "$busy_port" || fail "a listening port must count as answering"
! pg_answers "$free_port" || fail "a free port must not count as answering"

out=$(SWITCHYARD_PG_PORT=$busy_port SWITCHYARD_SETUP_DRY_RUN=1 ensure_postgres)
grep -q "leaving it as it is" <<<"$out" || fail "an answering server must be left alone: $out"
! grep -q "would run" <<<"$out" || fail "nothing may run when a server answers: $out"

out=$(SWITCHYARD_PG_PORT=$free_port SWITCHYARD_SETUP_DRY_RUN=1 ensure_postgres)
grep -q "no PostgreSQL on 127.0.0.1:$free_port" <<<"$out" || fail "missing server not detected: $out"
grep -q "pg_createcluster .* --port $free_port" <<<"$out" || fail "no cluster planned on the port: $out"
grep -q "trust for 127.0.0.1/32 and ::1/128" <<<"$out" || fail "loopback trust not planned: $out"
grep -q "pg_ctlcluster .* start" <<<"$out" || fail "start not planned: $out"

# The rules go first in pg_hba.conf, once.
hba=$(mktemp)
printf 'local all postgres peer\nhost all all 0.0.0.0/0 scram-sha-256\n' >"$hba"
pg_sudo() { "$@"; }
pg_trust_loopback "$hba"
pg_trust_loopback "$hba"
[ "$(grep -c 'trust$' "$hba")" = 2 ] || fail "rules added twice or not at all: $(cat "$hba")"
head -2 "$hba" | grep -q "switchyard: trust loopback" || fail "rules must come first"
rm -f "$hba"
echo "test-setup-postgres: ok"
