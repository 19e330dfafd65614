#!/usr/bin/env bash
# A release build carries none of the test-only switches: the negative-control claims and
# crash points of the control plane and the console core exist only with the
# `fault-injection` cargo feature, which only the tests turn on (through dev-dependencies).
# This builds the shipped binaries the way a release does and looks for each switch's text.
set -euo pipefail
cd "$(dirname "$0")/.."

# Text that only fault-injection code contains (environment variables and the SQL of the
# unguarded claims), per binary.
control_plane_markers=(
  "SWITCHYARD_TEST_CRASH_AT"
  "SWITCHYARD_TEST_FAULTS"
  "fingerprint = excluded.fingerprint, state = 'in_progress', attempt = 1"
  "AND CAST(\$6 AS TEXT) IS NOT NULL"
  "? IS NOT NULL AND ? IS NOT NULL"
  "\$9::bigint IS NOT NULL"
  "ON CONFLICT (tenant, id) DO UPDATE SET fingerprint = excluded.fingerprint RETURNING id"
  "attempts_made = \$5 RETURNING replay_of"
  "AND CAST(\$11 AS TEXT) IS NOT NULL AND state NOT IN"
  "retirement_before"
)
cli_markers=(
  "SWITCHYARD_TEST_OMIT_IDEMPOTENCY_KEY"
)

# Guard against a vacuous check: every marker must still be in the sources, behind the
# feature; a marker nobody writes any more would pass forever.
for marker in "${control_plane_markers[@]}" "${cli_markers[@]}"; do
  if ! grep -rqF -- "$marker" crates/control-plane/src crates/core/src; then
    echo "check-release-binaries: marker no longer in the sources: $marker (update this script)" >&2
    exit 1
  fi
done

cargo build --release -p switchyard-control-plane --bin switchyard-control-plane -p switchyard-cli --bin switchyard

failed=0
check() {
  local binary=$1
  shift
  for marker in "$@"; do
    if grep -aqF -- "$marker" "$binary"; then
      echo "check-release-binaries: $binary contains test-only text: $marker" >&2
      failed=1
    fi
  done
}
check target/release/switchyard-control-plane "${control_plane_markers[@]}"
# The CLI links the console core; the desktop app links both crates the same way.
check target/release/switchyard "${cli_markers[@]}" "${control_plane_markers[@]}"
if [ "$failed" -ne 0 ]; then
  exit 1
fi
echo "check-release-binaries: no test-only switch in the release binaries"
