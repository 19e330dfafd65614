#!/usr/bin/env bash
# The HTTP API under fuzzing (`make test-api-fuzz`, docs/control-plane.md "Fuzzing the API"):
# a real control plane on 127.0.0.1 (a free port), a throwaway SQLite database and the demo
# data (`--demo`: real endpoint, target and flow names to hit, and a DLQ), then schemathesis
# (installed by scripts/setup.sh) against its own /openapi.json with four checks:
#   not_a_server_error          no 5xx, whatever the input
#   status_code_conformance     every status answered is documented on its operation
#   content_type_conformance    every answer has the documented media type
#   response_schema_conformance every body matches its documented schema
# Any failure fails the run. The seed is printed; API_FUZZ_SEED=N repeats a run's inputs.
#
# Environment:
#   API_FUZZ_SEED          the seed (default: a random one, printed)
#   API_FUZZ_MAX_EXAMPLES  test cases per operation and phase (default 100: a minute or two)
#   SWITCHYARD_CONTROL_PLANE_BIN  the server binary (default: the one `cargo test
#                          $WORKSPACE_TEST` builds, so `make test` compiles nothing again)
#   WORKSPACE_TEST         that command's arguments (the Makefile sets them; default --workspace)
#
# Where it can, the run has a network namespace of its own with only loopback in it
# (`unshare --user --net`): fuzzed targets name arbitrary hosts, and a control plane sends
# webhooks (target tests, sync flows, the delivery worker); inside the namespace nothing can
# leave the machine. Where user namespaces are not allowed it runs as is and says so.
set -euo pipefail
self=$(realpath "$0")
cd "$(dirname "$self")/.."

venv=$PWD/.tools/schemathesis
if [ ! -x "$venv/bin/schemathesis" ]; then
  echo "api-fuzz: $venv/bin/schemathesis is missing; run make setup (scripts/setup.sh installs it)" >&2
  exit 1
fi

if [ -z "${API_FUZZ_IN_NAMESPACE:-}" ]; then
  if [ -z "${SWITCHYARD_CONTROL_PLANE_BIN:-}" ]; then
    # Asked for by the same command as `make test-rust` (WORKSPACE_TEST, from the Makefile),
    # so nothing is compiled again (the bin target built for the integration tests; its
    # unit-test harness has profile.test).
    # shellcheck disable=SC2086 # WORKSPACE_TEST is a list of arguments
    SWITCHYARD_CONTROL_PLANE_BIN=$(cargo test ${WORKSPACE_TEST:---workspace} --no-run --message-format=json-render-diagnostics |
      python3 -c 'import json, sys
found = [m["executable"] for m in map(json.loads, sys.stdin)  # all of it: cargo must not see EPIPE
         if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "switchyard-control-plane"
         and m["target"]["kind"] == ["bin"] and not m["profile"]["test"] and m.get("executable")]
print(found[0] if found else "")')
  fi
  if [ ! -x "${SWITCHYARD_CONTROL_PLANE_BIN:-}" ]; then
    echo "api-fuzz: no control-plane binary found (SWITCHYARD_CONTROL_PLANE_BIN=${SWITCHYARD_CONTROL_PLANE_BIN:-})" >&2
    exit 1
  fi
  export SWITCHYARD_CONTROL_PLANE_BIN
  if unshare --user --map-root-user --net -- ip link set lo up 2>/dev/null; then
    exec env API_FUZZ_IN_NAMESPACE=1 unshare --user --map-root-user --net -- \
      bash -c 'ip link set lo up && exec "$0"' "$self"
  fi
  echo "api-fuzz: user namespaces are not available here; running without network isolation" >&2
fi

seed=${API_FUZZ_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
max_examples=${API_FUZZ_MAX_EXAMPLES:-100}
work=$(mktemp -d)
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Rate limits off: schemathesis sends as fast as it can, and a run of 429s (documented, so
# not a failure) would leave the handlers behind them untested.
"$SWITCHYARD_CONTROL_PLANE_BIN" serve --listen 127.0.0.1:0 --db "sqlite://$work/cp.db" --demo \
  --rate-limit-writes 0 --rate-limit-events 0 --rate-limit-failed-auth 0 >"$work/server.out" 2>"$work/server.log" &
server_pid=$!

# The server prints its URL once it listens, and the demo tenant's token once the demo data
# is in (src/main.rs).
base= token=
for _ in $(seq 600); do
  base=$(sed -n 's/^switchyard control plane listening on \(http:[^ ]*\)$/\1/p' "$work/server.out")
  token=$(sed -n 's/^demo tenant .*export SWITCHYARD_TOKEN=\(.*\)$/\1/p' "$work/server.out")
  [ -n "$base" ] && [ -n "$token" ] && break
  if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "api-fuzz: the control plane exited during start-up:" >&2
    cat "$work/server.log" >&2
    exit 1
  fi
  sleep 0.1
done
if [ -z "$base" ] || [ -z "$token" ]; then
  echo "api-fuzz: the control plane did not start within 60 s:" >&2
  cat "$work/server.out" "$work/server.log" >&2
  exit 1
fi

echo "api-fuzz: schemathesis $("$venv/bin/schemathesis" --version | sed 's/.*version //') against $base/openapi.json"
echo "api-fuzz: seed $seed, at most $max_examples examples per operation (repeat: API_FUZZ_SEED=$seed make test-api-fuzz)"
started=$(date +%s)
status=0
# From the throwaway directory: schemathesis keeps a cache of earlier failures in its working
# directory and replays them first, and a run is to depend on its seed alone. One worker: with
# two, Python 3.11's AST parser (Hypothesis parses its strategies' source to describe them)
# now and then fails with "SystemError: AST constructor recursion depth mismatch", its depth
# counter being shared between threads; one is fast enough (a few thousand requests a minute).
(cd "$work" && "$venv/bin/schemathesis" run "$base/openapi.json" \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
  --header "Authorization: Bearer $token" \
  --seed "$seed" \
  --max-examples "$max_examples" \
  --workers 1 \
  --request-timeout 30 \
  --generation-database none \
  --no-color) || status=$?
echo "api-fuzz: finished in $(($(date +%s) - started)) s, seed $seed"
if [ "$status" -ne 0 ]; then
  echo "api-fuzz: FAILED (exit $status); the end of the server's log:" >&2
  tail -n 50 "$work/server.log" >&2
  exit "$status"
fi
