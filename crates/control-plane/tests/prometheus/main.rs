//! `GET /metrics` as a Prometheus scraper sees it: a control plane in-process (and the real
//! binary for the flags), a loopback receiver that answers 200 on `/ok` and 500 on `/fail`,
//! a one-attempt retry schedule so failures die at once, and the exposition text read with
//! a real parser (`prometheus-parse`).

use switchyard_test_support::postgres;
mod support;

mod access;
mod counts;
mod lint;
mod on_postgres;
