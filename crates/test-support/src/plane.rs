//! The tests' control plane: in process, on a loopback port of its own and a SQLite file the
//! test names, with the tenants it names; [`fast`] makes its deliveries retry within a second
//! instead of within hours.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::time::Duration;

use switchyard_control_plane::ServerConfig;
use switchyard_control_plane::delivery::DeliveryConfig;
use switchyard_control_plane::delivery::schedule::parse_schedule;
use switchyard_control_plane::extract::Tenants;

/// Five attempts within a second.
pub const FAST: &str = "0s,50ms,100ms,200ms,400ms";

/// A control plane on `127.0.0.1:0` and SQLite file `db`, serving each `(tenant, token)`.
pub fn config(db: &Path, tenants: &[(&str, &str)]) -> ServerConfig {
    let mut known = Tenants::default();
    for (tenant, token) in tenants {
        known.add(tenant, token);
    }
    ServerConfig::new(
        SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        format!("sqlite://{}", db.display()),
        known,
    )
    .local_only()
}

/// `config` delivering on `schedule` (e.g. [`FAST`]): leases expire 300 ms after a target's
/// timeout and the worker looks for due work at least every 100 ms.
pub fn fast(mut config: ServerConfig, schedule: &str) -> ServerConfig {
    config.delivery = DeliveryConfig {
        schedule: parse_schedule(schedule).unwrap(),
        lease_margin: Duration::from_millis(300),
        poll_max: Duration::from_millis(100),
        ..config.delivery
    };
    config
}
