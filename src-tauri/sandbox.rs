//! The embedded sandbox: a control plane with demo data inside the app, behind the `sandbox`
//! feature (on by default). A build without it (`--no-default-features`) does not compile the
//! control plane at all and works only with the control planes a person adds.

#[cfg(feature = "sandbox")]
use std::sync::Arc;

use switchyard_core::{Console, SANDBOX_PROFILE};

use crate::ipc::{IpcError, IpcErrorCode};

/// The running sandbox, once started; its lock is held while it starts.
#[cfg(feature = "sandbox")]
#[derive(Clone)]
pub struct Slot(Arc<tokio::sync::Mutex<Option<switchyard_control_plane::sandbox::Sandbox>>>);

/// Nothing to hold: this build has no sandbox.
#[cfg(not(feature = "sandbox"))]
#[derive(Clone)]
pub struct Slot;

impl Slot {
    pub fn empty() -> Self {
        #[cfg(feature = "sandbox")]
        return Self(Arc::default());
        #[cfg(not(feature = "sandbox"))]
        Self
    }
}

/// The longest the sandbox control plane's start waits for the UI's first screen.
pub const START_WAITS_AT_MOST: std::time::Duration = std::time::Duration::from_secs(2);

/// Whether this build carries the embedded sandbox.
pub const BUILT_IN: bool = cfg!(feature = "sandbox");

/// Starts the sandbox (once) and registers it as the `sandbox` profile; `started` runs once
/// its control plane answers.
///
/// Only the port is bound here (the one registered last time when it is free, so the
/// profile's URL stays put) and registered; the control plane itself — its database,
/// migrations, demo data, delivery workers — starts in the background once `after` resolves
/// (at launch: once the first screen shows, which reads the local cache only), so neither
/// the window nor the first screen waits for it or shares the CPU with it. What the console
/// sends it meanwhile waits in the socket's backlog and is answered once it is up; a caller
/// of this function during the start waits for the start.
#[cfg(feature = "sandbox")]
pub async fn ensure(
    core: &Console,
    slot: &Slot,
    after: impl std::future::Future<Output = ()> + Send + 'static,
    started: impl FnOnce() + Send + 'static,
) -> Result<(), IpcError> {
    use switchyard_control_plane::demo::DEMO_TOKEN;
    use switchyard_control_plane::sandbox::Sandbox;

    let mut slot = slot.0.clone().lock_owned().await;
    if slot.is_some() {
        return Ok(());
    }
    let previous_port = match core.profile(SANDBOX_PROFILE).await {
        Ok(p) => tauri::Url::parse(&p.url).ok().and_then(|u| u.port()),
        Err(_) => None,
    };
    let binding = Sandbox::bind(&core.data_dir().join("sandbox"), previous_port).map_err(|e| {
        IpcError::new(
            IpcErrorCode::Internal,
            format!("the embedded sandbox could not bind a loopback port: {e}"),
        )
    })?;
    core.register_sandbox(&binding.url(), DEMO_TOKEN)
        .await
        .map_err(IpcError::from)?;
    tauri::async_runtime::spawn(async move {
        after.await;
        let url = binding.url();
        match binding.start().await {
            Ok(sandbox) => {
                tracing::info!(
                    "sandbox control plane on {url}, started after {} ms",
                    crate::started().elapsed().as_millis()
                );
                *slot = Some(sandbox);
                started();
            }
            // The slot stays empty: the next switch to the sandbox tries again.
            Err(e) => tracing::error!("the embedded sandbox did not start: {e:#}"),
        }
    });
    Ok(())
}

#[cfg(not(feature = "sandbox"))]
pub async fn ensure(
    _core: &Console,
    _slot: &Slot,
    _after: impl std::future::Future<Output = ()> + Send + 'static,
    _started: impl FnOnce() + Send + 'static,
) -> Result<(), IpcError> {
    Err(IpcError::new(
        IpcErrorCode::NotFound,
        format!(
            "this build of Switchyard has no embedded {SANDBOX_PROFILE} (built without the \
             `sandbox` feature): add a control plane under Control planes, or with \
             `switchyard profile add`"
        ),
    ))
}
