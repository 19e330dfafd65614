//! Launching the app under tauri-driver and finding things in it.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use serde_json::json;
use switchyard_test_support::driver::{stop, tauri_driver, wait_listening, wait_port_free};
use thirtyfour::prelude::*;

/// Only one app (and one tauri-driver on its port) at a time.
pub static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const DRIVER_PORT: u16 = 4444;
pub const WAIT: Duration = Duration::from_secs(20);

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn app_binary() -> PathBuf {
    std::env::var_os("SWITCHYARD_APP")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_switchyard-desktop")))
}

pub fn screenshot_dir() -> PathBuf {
    std::env::var_os("SCREENSHOT_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("docs/screenshots"))
}

/// A running app with its own throw-away directories.
pub struct App {
    pub driver: WebDriver,
    tauri_driver: Child,
    /// Removed when the app is dropped.
    _dirs: tempfile::TempDir,
}

impl App {
    /// Starts tauri-driver with fresh XDG/data dirs (the app inherits its environment) and
    /// opens a session on the app.
    pub async fn launch() -> Result<Self> {
        let dirs = tempfile::tempdir()?;
        Self::launch_in(dirs).await
    }

    pub async fn launch_in(dirs: tempfile::TempDir) -> Result<Self> {
        Self::launch_in_with(dirs, &[]).await
    }

    /// Like `launch`, with extra environment for the app.
    pub async fn launch_with(env: &[(&str, String)]) -> Result<Self> {
        Self::launch_in_with(tempfile::tempdir()?, env).await
    }

    pub async fn launch_in_with(dirs: tempfile::TempDir, env: &[(&str, String)]) -> Result<Self> {
        let binary = app_binary();
        if !binary.exists() {
            bail!(
                "{} is missing: build it with `cargo build --features custom-protocol`",
                binary.display()
            );
        }
        for sub in ["data", "config", "cache", "switchyard"] {
            std::fs::create_dir_all(dirs.path().join(sub))?;
        }
        wait_port_free(DRIVER_PORT).await;
        wait_port_free(DRIVER_PORT + 1).await;
        let tauri_driver = Command::new(tauri_driver())
            .args(["--port", &DRIVER_PORT.to_string()])
            .env("XDG_DATA_HOME", dirs.path().join("data"))
            .env("XDG_CONFIG_HOME", dirs.path().join("config"))
            .env("XDG_CACHE_HOME", dirs.path().join("cache"))
            .env("SWITCHYARD_DATA_DIR", dirs.path().join("switchyard"))
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("starting tauri-driver (scripts/setup.sh installs it)")?;
        ensure!(
            wait_listening(DRIVER_PORT).await,
            "tauri-driver did not listen on port {DRIVER_PORT}"
        );
        // See the `rustls` dev-dependency in Cargo.toml.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut caps = serde_json::Map::new();
        caps.insert("tauri:options".into(), json!({ "application": binary }));
        // WebKitWebDriver may need a moment after the previous session; try a few times.
        let mut attempt = 0;
        let driver = loop {
            attempt += 1;
            let session = WebDriver::new(format!("http://127.0.0.1:{DRIVER_PORT}"), caps.clone());
            let session = tokio::time::timeout(Duration::from_secs(30), session)
                .await
                .map_err(|_| WebDriverError::FatalError("no session within 30 s".into()));
            match session.and_then(|s| s) {
                Ok(driver) => break driver,
                Err(e) if attempt < 4 => {
                    eprintln!("opening a WebDriver session failed ({e}); trying again");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
                Err(e) => return Err(e).context("opening a WebDriver session on the app"),
            }
        };
        Ok(Self {
            driver,
            tauri_driver,
            _dirs: dirs,
        })
    }

    /// The app's throw-away directories (its data dir is `switchyard/`, its logs under
    /// `data/`), for a test that reads what it left on disk.
    pub fn dirs(&self) -> &std::path::Path {
        self._dirs.path()
    }

    /// The first element with this `data-testid`, waiting for it to appear.
    pub async fn el(&self, testid: &str) -> Result<WebElement> {
        self.css(&format!("[data-testid='{testid}']")).await
    }

    pub async fn css(&self, selector: &str) -> Result<WebElement> {
        match self
            .driver
            .query(By::Css(selector))
            .wait(WAIT, Duration::from_millis(100))
            .first()
            .await
        {
            Ok(element) => Ok(element),
            Err(e) => {
                // Say what the window showed instead, for a failure seen only in CI.
                let name = selector.replace(|c: char| !c.is_ascii_alphanumeric(), "_");
                let shot = std::env::temp_dir().join(format!("e2e-failure-{name}.png"));
                let _ = self.driver.screenshot(&shot).await;
                let text = self.text_of("body").await.unwrap_or_default();
                Err(anyhow::Error::new(e).context(format!(
                    "waiting for {selector}; screenshot {}; window text: {}",
                    shot.display(),
                    &text[..text.len().min(1500)]
                )))
            }
        }
    }

    /// Clicks like a person; while an overlay is still fading in or out (modal, drawer,
    /// palette) the click is intercepted or the element not yet interactable, so it is tried
    /// again for a while. A disabled button is waited for, as a person waits for it: a click
    /// on it does nothing, and the test would go on as if it had (seen on a slow machine:
    /// Next still disabled while a dry run reloads, so the next step never came).
    pub async fn click(&self, testid: &str) -> Result<()> {
        self.wait_still(testid).await;
        let started = Instant::now();
        loop {
            let el = self.el(testid).await?;
            if self.is_disabled(&el).await && started.elapsed() < Duration::from_secs(15) {
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
            match el.click().await {
                Ok(()) => return Ok(()),
                Err(e) if started.elapsed() < Duration::from_secs(15) => {
                    tracing_note(&e);
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                Err(e) => return Err(e).with_context(|| format!("clicking {testid}")),
            }
        }
    }

    /// A `disabled` control, or a Mantine one marked `data-disabled`.
    async fn is_disabled(&self, el: &WebElement) -> bool {
        let marked = el.attr("data-disabled").await.ok().flatten().is_some();
        marked || !el.is_enabled().await.unwrap_or(true)
    }

    /// Waits (at most 3 s) until the element stops moving: a click is aimed at coordinates, so
    /// a button in a drawer still sliding in gets the click meant for it on its neighbour
    /// (seen: "Resolve conflict" clicked, "Discard" hit).
    async fn wait_still(&self, testid: &str) {
        let script = "const el = document.querySelector(`[data-testid='${arguments[0]}']`);\
            if (!el) return null; const r = el.getBoundingClientRect();\
            return `${r.x},${r.y},${r.width},${r.height}`;";
        let rect = async || {
            self.driver
                .execute(script, vec![json!(testid)])
                .await
                .ok()
                .and_then(|r| r.convert::<Option<String>>().ok().flatten())
        };
        let started = Instant::now();
        let mut last = rect().await;
        while started.elapsed() < Duration::from_secs(3) {
            tokio::time::sleep(Duration::from_millis(120)).await;
            let now = rect().await;
            if now.is_some() && now == last {
                return;
            }
            last = now;
        }
    }

    /// Replaces the text of an input.
    pub async fn type_into(&self, testid: &str, text: &str) -> Result<()> {
        self.click(testid).await?;
        let el = self.el(testid).await?;
        el.send_keys(Key::Control + "a").await?;
        el.send_keys(Key::Backspace).await?;
        el.send_keys(text).await?;
        Ok(())
    }

    /// The `textContent` of the first element matching `selector` (WebKitWebDriver's element
    /// text comes back empty for some Mantine components).
    pub async fn text_of(&self, selector: &str) -> Option<String> {
        let script =
            "const el = document.querySelector(arguments[0]); return el ? el.textContent : null;";
        let ret = self
            .driver
            .execute(script, vec![json!(selector)])
            .await
            .ok()?;
        ret.convert::<Option<String>>().ok().flatten()
    }

    /// Waits until `check` holds for the text of the element with this `data-testid`.
    pub async fn wait_text(
        &self,
        testid: &str,
        what: &str,
        check: impl Fn(&str) -> bool,
    ) -> Result<String> {
        self.wait_css_text(&format!("[data-testid='{testid}']"), what, check)
            .await
    }

    /// Waits until `check` holds for the text of the first element matching `selector`.
    pub async fn wait_css_text(
        &self,
        selector: &str,
        what: &str,
        check: impl Fn(&str) -> bool,
    ) -> Result<String> {
        let testid = selector.replace(|c: char| !c.is_ascii_alphanumeric(), "_");
        let started = Instant::now();
        let mut last = String::new();
        while started.elapsed() < WAIT * 3 {
            if let Some(text) = self.text_of(selector).await {
                if check(&text) {
                    return Ok(text);
                }
                last = text;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let shot = std::env::temp_dir().join(format!("e2e-failure-{testid}.png"));
        let _ = self.driver.screenshot(&shot).await;
        let source = self.driver.source().await.unwrap_or_default();
        bail!(
            "{testid}: waited {:?} for {what}; last text: {last:?}; screenshot {}; page: {}",
            WAIT * 3,
            shot.display(),
            &source[..source.len().min(1500)]
        )
    }

    pub async fn wait_online(&self) -> Result<()> {
        self.wait_text("status-online", "the online badge", |t| {
            t.contains("Online")
        })
        .await?;
        Ok(())
    }

    /// Adds a control plane through the switcher and switches to it. A reachable one has its
    /// connection tested first; an unreachable one is saved as it is.
    pub async fn add_profile(&self, name: &str, url: &str, reachable: bool) -> Result<()> {
        self.click("profile-switcher").await?;
        self.click("add-profile").await?;
        tokio::time::sleep(Duration::from_millis(600)).await;
        self.type_into("profile-name", name).await?;
        self.type_into("profile-url", url).await?;
        self.type_into("profile-token", crate::plane::TOKEN).await?;
        if reachable {
            self.click("profile-test").await?;
            self.wait_text("test-result", "a successful connection test", |t| {
                t.starts_with("Connected")
            })
            .await?;
        }
        self.click("profile-save").await?;
        self.wait_text("profile-switcher", "the new profile to be active", |t| {
            t.contains(name)
        })
        .await?;
        // Let the modal finish closing before the next click.
        tokio::time::sleep(Duration::from_millis(500)).await;
        Ok(())
    }

    /// Switches to a profile already added, through the switcher.
    pub async fn switch_profile(&self, name: &str) -> Result<()> {
        self.click("profile-switcher").await?;
        self.click(&format!("profile-{name}")).await?;
        self.wait_text("profile-switcher", "the profile to be active", |t| {
            t.contains(name)
        })
        .await?;
        Ok(())
    }

    /// Closes the open drawer and waits until it is gone.
    pub async fn close_drawer(&self) -> Result<()> {
        let script = "const b = document.querySelector('.mantine-Drawer-close'); if (b) b.click();";
        self.driver.execute(script, vec![]).await?;
        for _ in 0..50 {
            if self.text_of(".mantine-Drawer-content").await.is_none() {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        bail!("the drawer did not close")
    }

    /// Runs a script and converts its result.
    pub async fn eval<T: serde::de::DeserializeOwned>(&self, script: &str) -> Result<T> {
        Ok(self.driver.execute(script, vec![]).await?.convert::<T>()?)
    }

    /// How many elements have this `data-testid` now.
    pub async fn count(&self, testid: &str) -> Result<u64> {
        self.eval(&format!(
            "return document.querySelectorAll(\"[data-testid='{testid}']\").length;"
        ))
        .await
    }

    /// A screenshot of the window into the screenshot dir. WebKitWebDriver's screenshot
    /// waits for a paint; when none comes within 10 s the virtual display is captured instead.
    pub async fn shot(&self, name: &str) -> Result<()> {
        let dir = screenshot_dir();
        std::fs::create_dir_all(&dir)?;
        let path = dir.join(format!("{name}.png"));
        let taken = tokio::time::timeout(Duration::from_secs(10), self.driver.screenshot(&path));
        match taken.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(e.into()),
            Err(_) => {
                eprintln!("the WebDriver screenshot of {name} hung; capturing the display");
                let status = Command::new("import")
                    .args(["-window", "root"])
                    .arg(&path)
                    .status()
                    .context("running ImageMagick's import")?;
                anyhow::ensure!(status.success(), "import failed for {name}");
                Ok(())
            }
        }
    }

    pub async fn quit(mut self) -> Result<()> {
        let quit = self.driver.clone().quit();
        let _ = tokio::time::timeout(Duration::from_secs(10), quit).await;
        stop(&mut self.tauri_driver);
        Ok(())
    }
}

impl Drop for App {
    fn drop(&mut self) {
        stop(&mut self.tauri_driver);
        // The session died with tauri-driver. Left as it is, dropping the WebDriver sends
        // DELETE /session from a blocking thread while the test's runtime shuts down, which
        // panics there ("a Tokio context … is being shutdown") and buries a failed test's
        // error under that backtrace.
        let _ = self.driver.clone().leak();
    }
}

fn tracing_note(e: &WebDriverError) {
    if std::env::var_os("E2E_VERBOSE").is_some() {
        eprintln!("click retried: {e}");
    }
}
