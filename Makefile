# Switchyard: the two quickstart commands are `make run` and `make test`.
SHELL := /bin/bash
# Node.js 20 installed by scripts/setup.sh when the system's is older (Debian 12 ships 18).
export PATH := $(CURDIR)/.tools/node/node_modules/node/bin:$(PATH)
.DEFAULT_GOAL := help
# Every `cargo test` of `make test` (the Rust tests, the keychain and fuzzing binaries, the
# WebDriver scenarios) is this one invocation's build, so the workspace and the desktop are
# compiled once: the same packages (--workspace, which also settles the dev-dependencies'
# features) and the desktop as the e2e scenarios run it, its UI embedded (custom-protocol,
# which needs the built UI). scripts/api-fuzz.sh reads it from the environment.
export WORKSPACE_TEST := --workspace --features switchyard-desktop/custom-protocol

.PHONY: coverage help setup run run-control-plane test lint check-release test-scripts test-rust test-keychain test-api-fuzz test-mcp-python bench-postgres bench bench-delivery bench-diagnostics test-ui test-e2e ui bench-desktop bench-dlq bench-dlq-scroll bench-gitops package test-package test-package-update

help:
	@echo "make run    - set up and start Switchyard on its embedded sandbox (demo data)"
	@echo "make test   - set up a fresh Debian 12 machine and run every check and test"
	@echo "make bench  - run the benchmarks and print their figures"
	@echo "make test-mcp-python - switchyard mcp driven by the official MCP Python SDK (stdio and HTTP)"
	@echo "make coverage - line and region coverage of the core and the control plane (needs cargo llvm-cov)"
	@echo "make package - the .deb (and AppImage where its tools exist), CLI and control-plane archives, SHA256SUMS in dist/"
	@echo "make test-package - install the .deb into a clean Debian 12 root and launch it, then a signed update over it (root; see docs/install.md)"
	@echo "make test-package-update - only the update case: two signed builds, the old installed, the new installed on restart (root)"
	@echo "make bench-delivery - delivery throughput and DLQ latency (1,000,000 dead deliveries)"
	@echo "make bench-diagnostics - GET /v1/diagnostics p50/p95 at 1,000,000 deliveries (BENCH_DB=postgres://... for PostgreSQL)"
	@echo "make bench-postgres - the same on PostgreSQL, plus throughput by 1 vs 3 replicas"
	@echo "make bench-gitops - GitOps plan time at 1,000 and 10,000 manifests (3 changed)"
	@echo "make bench-dlq - DLQ first page and memory through the console core (100,000 dead deliveries)"
	@echo "make bench-desktop - desktop launch time and memory with 10,000 resources, against an empty Tauri app (the floor)"
	@echo "make bench-dlq-scroll - frame times scrolling the DLQ in the app's webview (100,000 dead deliveries)"

setup:
	./scripts/setup.sh

# The desktop console on its embedded sandbox control plane (demo data, loopback only).
run: setup ui
	cargo run --release -p switchyard-desktop --features custom-protocol

# The reference control plane alone, with demo data, on loopback.
run-control-plane: setup
	cargo run --release -p switchyard-control-plane -- serve --listen 127.0.0.1:8080 --db sqlite://switchyard-demo.db --demo

# The desktop UI bundle the app embeds (ui/dist).
ui:
	npm --prefix ui run build

lint:
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	# The desktop without its embedded sandbox (src-tauri/sandbox.rs) builds too.
	cargo clippy -p switchyard-desktop --lib --no-default-features -- -D warnings
	# No function over 80 lines outside tests (`--all` lists the longest).
	./scripts/check-function-length.py

# Includes the store conformance suite on SQLite and PostgreSQL and the multi-replica tests
# (PostgreSQL from SWITCHYARD_TEST_PG_URL, default postgres://postgres@127.0.0.1:5432).
test-rust: ui
	cargo test $(WORKSPACE_TEST)

# Profile tokens in a real OS keychain (crates/core/tests/keychain.rs): gnome-keyring's Secret
# Service in a private D-Bus session, its login keyring unlocked with a throwaway password and
# kept in a temp dir (never yours). REQUIRE_KEYCHAIN=1: no Secret Service fails, not skips.
# The test binary is the one `cargo test $(WORKSPACE_TEST)` builds (asking cargo for it by the
# same command builds nothing again; `-p switchyard-core --test keychain` would resolve other
# features and compile the dependencies a second time).
test-keychain:
	@command -v dbus-run-session >/dev/null && command -v gnome-keyring-daemon >/dev/null || \
	  { echo "test-keychain: needs dbus-run-session and gnome-keyring-daemon (make setup installs them)" >&2; exit 1; }
	bin=$$(cargo test $(WORKSPACE_TEST) --no-run --message-format=json-render-diagnostics | python3 -c \
	  'import json, sys; print(next(m["executable"] for m in map(json.loads, sys.stdin) if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "keychain" and m.get("executable")))') && \
	keyring_tmp=$$(mktemp -d) && trap 'rm -rf "$$keyring_tmp"' EXIT && mkdir -m 700 "$$keyring_tmp/run" && \
	XDG_DATA_HOME="$$keyring_tmp/data" XDG_RUNTIME_DIR="$$keyring_tmp/run" KEYCHAIN_TEST="$$bin" dbus-run-session -- bash -c \
	  'echo -n test | gnome-keyring-daemon --unlock --components=secrets >/dev/null && \
	   REQUIRE_KEYCHAIN=1 "$$KEYCHAIN_TEST" --nocapture'

# A release build carries none of the tests' fault-injection switches.
check-release:
	./scripts/check-release-binaries.sh

# The setup script's decisions (PostgreSQL detection), without installing anything, and the
# function-length check's.
test-scripts:
	./scripts/test-setup-postgres.sh
	./scripts/test-function-length.sh

# The HTTP API under fuzzing (docs/control-plane.md, "Fuzzing the API"): schemathesis against
# a real control plane's /openapi.json (the debug binary `cargo test $(WORKSPACE_TEST)` built), with
# no 5xx and every status, media type and body as documented. The seed is printed;
# API_FUZZ_SEED=N repeats a run, API_FUZZ_MAX_EXAMPLES=N sets the cases per operation.
test-api-fuzz:
	./scripts/api-fuzz.sh

# `switchyard mcp` driven by the official MCP Python SDK (`mcp` from PyPI, in .tools/mcp-python,
# installed by scripts/setup.sh) over stdio and streamable HTTP (docs/mcp.md, "Tests"). A few
# seconds once the binary is built; not part of `make test`.
test-mcp-python:
	@test -x .tools/mcp-python/bin/python || { echo "test-mcp-python: .tools/mcp-python is missing; run make setup" >&2; exit 1; }
	# The CLI binary `cargo test $(WORKSPACE_TEST)` builds (asking again builds nothing).
	cargo test $(WORKSPACE_TEST) --no-run --quiet
	.tools/mcp-python/bin/python scripts/mcp-python.py target/debug/switchyard

# UI: type check, lint (biome) and component tests (Vitest + mockIPC).
test-ui:
	npm --prefix ui run typecheck
	npm --prefix ui run lint
	npm --prefix ui test

# The desktop app end to end: the real binary over WebDriver under a virtual display.
test-e2e: ui
	xvfb-run -a -s "-screen 0 1280x800x24" cargo test $(WORKSPACE_TEST) --test e2e -- --ignored --test-threads=1

test: setup lint test-scripts test-rust test-keychain test-api-fuzz test-mcp-python check-release test-ui test-e2e
	@echo "make test: all checks passed"

# Line and region coverage of the core and the control plane (cargo llvm-cov; see the script).
coverage:
	./scripts/coverage.sh

# Release packages into dist/ (docs/install.md): heavy (release build), so not part of `make test`.
package: setup
	./scripts/package.sh

# The .deb installed into a clean Debian 12 root (debootstrap, cached in .package-cache/) and
# launched under Xvfb, plus a negative control (a package missing a dependency must fail);
# then the update case (test-package-update).
test-package: package
	./scripts/test-package.sh
	./scripts/test-package-update.sh

# A signed update installed on restart over the installed package, with a queued write kept
# and delivered once; tampered and foreign-signed packages refused. It makes its own two
# signed builds (a throwaway key pair; under nice), so it needs no `make package` first.
test-package-update: setup
	./scripts/test-package-update.sh

# The control plane's idempotency cost, the console's enqueue and drain, and delivery
# throughput (the DLQ's latency at 1,000,000 rows is `make bench-delivery`; the desktop's
# launch needs a display: `make bench-desktop`).
bench:
	cargo run --release -p switchyard-control-plane --bin switchyard-cp-bench
	cargo run --release -p switchyard-core --example bench
	cargo run --release -p switchyard-control-plane --bin switchyard-delivery-bench -- --skip-dlq

bench-delivery:
	cargo run --release -p switchyard-control-plane --bin switchyard-delivery-bench

# The control plane on PostgreSQL (each part on a database of its own, dropped afterwards):
# keyed-create overhead, delivery throughput by 1 and by 3 replicas, DLQ latency at
# 1,000,000 dead deliveries. BENCH_PG_URL names the server.
BENCH_PG_URL ?= postgres://postgres@127.0.0.1:5432
bench-postgres: setup
	BENCH_DB=$(BENCH_PG_URL) cargo run --release -p switchyard-control-plane --bin switchyard-cp-bench
	cargo run --release -p switchyard-control-plane --bin switchyard-delivery-bench -- --db $(BENCH_PG_URL) --replicas 1,3

# GET /v1/metrics/deliveries latency with 1,000,000 recorded attempts (BENCH_DB=postgres://…
# for PostgreSQL), against /healthz in the same run.
bench-diagnostics:
	cargo run --release -p switchyard-control-plane --bin switchyard-diagnostics-bench -- $(if $(BENCH_DB),--db $(BENCH_DB))

bench-health:
	cargo run --release -p switchyard-control-plane --bin switchyard-health-bench -- $(if $(BENCH_DB),--db $(BENCH_DB))

bench-gitops:
	cargo run --release -p switchyard-core --example bench_gitops

bench-dlq:
	cargo run --release -p switchyard-core --example bench_dlq

bench-desktop: setup ui
	cargo build --release -p switchyard-desktop --features custom-protocol --bin switchyard-desktop --example bench_desktop --example floor_app
	xvfb-run -a -s "-screen 0 1280x800x24" ./target/release/examples/bench_desktop

# Frame times while scrolling the DLQ explorer, measured in the release app's webview
# (requestAnimationFrame probe over WebDriver) with 100,000 dead deliveries on the sandbox.
bench-dlq-scroll: setup ui
	cargo build --release -p switchyard-desktop --features custom-protocol --bin switchyard-desktop --example bench_dlq_scroll
	xvfb-run -a -s "-screen 0 1280x800x24" ./target/release/examples/bench_dlq_scroll
