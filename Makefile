# Switchyard: the two quickstart commands are `make run` and `make test`.
SHELL := /bin/bash
.DEFAULT_GOAL := help

.PHONY: help setup run run-control-plane test check lint test-rust bench bench-delivery

help:
	@echo "make run    - set up and start Switchyard on its embedded sandbox (demo data)"
	@echo "make test   - set up a fresh Debian 12 machine and run every check and test"
	@echo "make bench  - run the benchmarks and print their figures"
	@echo "make bench-delivery - delivery throughput and DLQ latency (1,000,000 dead deliveries)"

setup:
	./scripts/setup.sh

# Starts the reference control plane with demo data on loopback.
run: setup
	cargo run --release -p switchyard-control-plane -- serve --listen 127.0.0.1:8080 --db sqlite://switchyard-demo.db --demo

lint:
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings

test-rust:
	cargo test --workspace

test: setup lint test-rust
	@echo "make test: all checks passed"

bench:
	cargo run --release -p switchyard-control-plane --bin switchyard-cp-bench
	cargo run --release -p switchyard-core --example bench

bench-delivery:
	cargo run --release -p switchyard-control-plane --bin switchyard-delivery-bench
