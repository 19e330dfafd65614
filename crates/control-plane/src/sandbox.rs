//! The embedded sandbox: a control plane on loopback with demo data, for the desktop app's
//! first launch and the quickstart. Everything lives under one data directory.

use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};

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
        Self::bind(data_dir, None)?.start().await
    }

    /// Binds the sandbox's loopback port without starting it: `port` when it is free (so an
    /// app restarted keeps the URL it registered last time), else any free one. Requests sent
    /// to [`SandboxBinding::url`] before [`SandboxBinding::start`] wait in the socket's
    /// backlog and are answered once the control plane is up.
    pub fn bind(data_dir: &Path, port: Option<u16>) -> std::io::Result<SandboxBinding> {
        let listener = port
            .and_then(|p| TcpListener::bind((Ipv4Addr::LOCALHOST, p)).ok())
            .map_or_else(|| TcpListener::bind((Ipv4Addr::LOCALHOST, 0)), Ok)?;
        let addr = listener.local_addr()?;
        Ok(SandboxBinding {
            data_dir: data_dir.to_owned(),
            listener,
            addr,
        })
    }

    pub fn url(&self) -> String {
        self.server.url()
    }
}

/// The sandbox's port, bound; the control plane not started yet.
pub struct SandboxBinding {
    data_dir: PathBuf,
    listener: TcpListener,
    addr: SocketAddr,
}

impl SandboxBinding {
    /// Where the sandbox will answer (the same as [`Sandbox::url`] once started).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Opens the database, starts the control plane on the bound port and seeds the demo
    /// resources.
    pub async fn start(self) -> anyhow::Result<Sandbox> {
        std::fs::create_dir_all(&self.data_dir)?;
        let db = self.data_dir.join("sandbox-cp.db");
        let mut tenants = Tenants::default();
        tenants.add(DEMO_TENANT, DEMO_TOKEN);
        let mut config =
            ServerConfig::new(self.addr, format!("sqlite://{}", db.display()), tenants)
                // The demo receiver is on loopback and the desktop is its one client.
                .local_only();
        config.listener = Some(self.listener);
        config.delivery.schedule =
            crate::delivery::schedule::parse_schedule(crate::demo::DEMO_SCHEDULE)
                .map_err(anyhow::Error::msg)?;
        // Its token is public: a web page must not reach it by rebinding its own name to
        // loopback (src/host_guard.rs).
        config.loopback_hosts_only = true;
        let server = Server::start(config).await?;
        let demo = crate::demo::start(&server, std::time::Duration::from_secs(3)).await?;
        Ok(Sandbox {
            server,
            token: DEMO_TOKEN.to_owned(),
            demo,
        })
    }
}
