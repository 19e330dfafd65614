//! The embedded sandbox: a control plane on loopback with demo data, for the desktop app's
//! first launch and the quickstart. Everything lives under one data directory.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;

use crate::demo::{DEMO_TENANT, DEMO_TOKEN};
use crate::extract::Tenants;
use crate::{Server, ServerConfig};

/// A running sandbox control plane.
pub struct Sandbox {
    pub server: Server,
    pub token: String,
    /// The demo receiver and event trickle (stopped when the sandbox is dropped).
    pub demo: crate::demo::DemoRuntime,
}

impl Sandbox {
    /// Starts the sandbox with its database in `data_dir/sandbox-cp.db`, on a free loopback
    /// port, and seeds the demo resources (a restart keeps earlier data and edits).
    pub async fn start(data_dir: &Path) -> anyhow::Result<Self> {
        std::fs::create_dir_all(data_dir)?;
        let db = data_dir.join("sandbox-cp.db");
        let mut tenants = Tenants::default();
        tenants.add(DEMO_TENANT, DEMO_TOKEN);
        let config = ServerConfig::new(
            SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            format!("sqlite://{}", db.display()),
            tenants,
        );
        let mut config = config;
        config.retry_schedule = crate::demo::DEMO_SCHEDULE
            .split(',')
            .map(str::to_owned)
            .collect();
        config.delivery.schedule =
            crate::delivery::schedule::parse_schedule(crate::demo::DEMO_SCHEDULE)
                .map_err(anyhow::Error::msg)?;
        // The sandbox's demo receiver is on loopback: said here, not left to the default.
        config.delivery.allow_private_targets = true;
        let server = Server::start(config).await?;
        let demo = crate::demo::start(&server, std::time::Duration::from_secs(3)).await?;
        Ok(Self {
            server,
            token: DEMO_TOKEN.to_owned(),
            demo,
        })
    }

    pub fn url(&self) -> String {
        self.server.url()
    }
}
