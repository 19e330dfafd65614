//! `switchyard mcp`: serve the Model Context Protocol for AI agents, over stdio (what agent
//! hosts launch) or streamable HTTP on loopback. The server lives in `switchyard-mcp`; this
//! module turns flags into its configuration. stdout belongs to the protocol: everything
//! this command says goes to stderr.

use std::io::Read;
use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;
use switchyard_core::Console;
use switchyard_mcp::http::{DEFAULT_MAX_BODY_BYTES, HttpOptions};
use switchyard_mcp::{McpConfig, McpServer, Mode};

use crate::Exit;

#[derive(Args)]
pub struct McpArgs {
    /// Offer the write tools: create, update, apply, enable/disable an endpoint, and replays
    /// of at most --replay-limit dead deliveries.
    #[arg(long)]
    pub allow_writes: bool,
    /// Also offer deletes and larger replays (implies --allow-writes).
    #[arg(long)]
    pub allow_destructive: bool,
    /// Replays of more dead deliveries than this need --allow-destructive.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub replay_limit: u64,
    /// Serve streamable HTTP at http://ADDR/mcp instead of stdio (loopback only, e.g.
    /// 127.0.0.1:8765). Needs a bearer token (--token-file or --token-stdin).
    #[arg(long, value_name = "ADDR", value_parser = parse_listen)]
    pub http: Option<SocketAddr>,
    /// With --http: read the bearer token clients must send from this file.
    #[arg(
        long,
        value_name = "FILE",
        requires = "http",
        conflicts_with = "token_stdin"
    )]
    pub token_file: Option<PathBuf>,
    /// With --http: read the bearer token from standard input.
    #[arg(long, requires = "http")]
    pub token_stdin: bool,
    /// With --http: a browser origin allowed to call (repeatable; e.g.
    /// http://localhost:3000). By default a request carrying any Origin header is refused.
    #[arg(long = "allow-origin", value_name = "ORIGIN", requires = "http")]
    pub allow_origins: Vec<String>,
    /// With --http: the largest request body accepted, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_BODY_BYTES, requires = "http")]
    pub max_body_bytes: usize,
}

impl McpArgs {
    fn mode(&self) -> Mode {
        if self.allow_destructive {
            Mode::Destructive
        } else if self.allow_writes {
            Mode::Writes
        } else {
            Mode::ReadOnly
        }
    }
}

fn read_token(args: &McpArgs) -> anyhow::Result<String> {
    let token = match (&args.token_file, args.token_stdin) {
        (Some(path), false) => std::fs::read_to_string(path)
            .with_context(|| format!("reading the bearer token from {}", path.display()))?,
        (None, true) => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .context("reading the bearer token from standard input")?;
            s
        }
        _ => bail!(
            "--http needs the bearer token clients will send: --token-file FILE or --token-stdin"
        ),
    };
    Ok(token.trim().to_owned())
}

pub async fn mcp_cmd(console: Console, profile: String, args: McpArgs) -> anyhow::Result<Exit> {
    let mut config = McpConfig::new(profile, args.mode());
    config.replay_limit = args.replay_limit;
    let server = McpServer::new(console, config).await?;
    let mode = server.effective_mode().await;
    let marked = if mode < args.mode() {
        " (the profile is marked read-only for agents)"
    } else {
        ""
    };
    let Some(listen) = args.http else {
        errln!(
            "switchyard mcp: profile {}, mode {}{marked}, serving MCP on stdio",
            server.config().profile,
            mode.as_str()
        );
        switchyard_mcp::serve_stdio(server).await?;
        return Ok(Exit::Ok);
    };
    let opts = HttpOptions {
        listen,
        token: read_token(&args)?,
        allowed_origins: args.allow_origins.clone(),
        max_body_bytes: args.max_body_bytes,
    };
    switchyard_mcp::http::check(&opts).map_err(anyhow::Error::msg)?;
    let profile = server.config().profile.clone();
    let running = switchyard_mcp::http::serve_http(server, opts).await?;
    errln!(
        "switchyard mcp: profile {profile}, mode {}{marked}, serving MCP at {}",
        mode.as_str(),
        running.url()
    );
    tokio::select! {
        r = running.wait() => r?,
        () = crate::signals::stop_signal() => {}
    }
    Ok(Exit::Ok)
}

/// `--http`: an IP address and port; a host name gets the address to use instead.
fn parse_listen(text: &str) -> Result<SocketAddr, String> {
    text.parse().map_err(|_| match text.rsplit_once(':') {
        Some((host, port)) if host.eq_ignore_ascii_case("localhost") => {
            format!("give an address, not a host name: 127.0.0.1:{port}")
        }
        _ => "give a loopback address and port, e.g. 127.0.0.1:8765 or [::1]:8765".to_owned(),
    })
}
