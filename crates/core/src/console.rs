//! [`Console`]: the handle the CLI and the desktop app open on a data dir. Profiles, the
//! audit log and the event stream live here; cache, outbox and sync in their own modules.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use sqlx::SqlitePool;
use tokio::sync::broadcast;

use crate::audit::Audit;
use crate::client::ApiClient;
use crate::clock::{Clock, RandomSource, SystemClock, ThreadRandom};
use crate::error::{CoreError, Result};
use crate::queued::{DiscardQueued, QueuedWork};
use crate::retry::RetryPolicy;
use crate::secrets::Secrets;
use crate::types::*;

/// How to open a [`Console`].
#[derive(Clone)]
pub struct ConsoleOptions {
    /// Holds `console.db` and the token file. Shared by the CLI and the desktop app.
    pub data_dir: PathBuf,
    /// Recorded in the audit log: `cli` or `desktop`.
    pub actor: String,
    pub retry: RetryPolicy,
    /// How long a claimed operation is leased to this process.
    pub lease: Duration,
    /// One request's timeout.
    pub request_timeout: Duration,
    /// Operations on different resources sent at once.
    pub concurrency: usize,
    pub clock: Arc<dyn Clock>,
    pub rng: Arc<dyn RandomSource>,
}

impl ConsoleOptions {
    pub fn new(data_dir: impl Into<PathBuf>, actor: &str) -> Self {
        Self {
            data_dir: data_dir.into(),
            actor: actor.to_owned(),
            retry: RetryPolicy::default(),
            lease: Duration::from_secs(60),
            request_timeout: Duration::from_secs(20),
            concurrency: 16,
            clock: Arc::new(SystemClock),
            rng: Arc::new(ThreadRandom),
        }
    }
}

/// The default data dir: the OS app-data dir (`~/.local/share/switchyard` on Linux,
/// `~/Library/Application Support/switchyard` on macOS, `%APPDATA%\switchyard` on Windows).
pub fn default_data_dir() -> PathBuf {
    dirs::data_dir()
        .unwrap_or_else(|| PathBuf::from("."))
        .join("switchyard")
}

/// Creates the data dir readable only by its owner (0700 on unix; its parents are created
/// as usual). An existing data dir that grants group or other access is tightened: those bits
/// are removed (0755 becomes 0700), never added. A shared sticky directory such as `/tmp` is
/// not a data dir of its own and is left as it is, with a warning, as is a directory this
/// user may not change; the files in it are 0600 either way (`console.db` and its `-wal` and
/// `-shm`, `tokens.json`).
fn create_private_dir(dir: &Path) -> Result<()> {
    let cannot =
        |e: std::io::Error| CoreError::io(format!("cannot create {}: {e}", dir.display()), e);
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(cannot)?;
    }
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    match builder.create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => {}
        Err(e) => return Err(cannot(e)),
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir).map_err(cannot)?.permissions().mode() & 0o7777;
        if mode & 0o077 != 0 {
            if mode & 0o1000 != 0 {
                tracing::warn!(
                    dir = %dir.display(),
                    "the data dir is a shared sticky directory (mode {mode:o}); left as it is"
                );
            } else if let Err(e) =
                std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode & 0o700))
            {
                tracing::warn!(
                    dir = %dir.display(),
                    "cannot restrict the data dir (mode {mode:o}) to its owner: {e}"
                );
            }
        }
    }
    Ok(())
}

pub(crate) struct Inner {
    /// Readers (WAL: they never block the writer).
    pub pool: SqlitePool,
    /// The one writer connection of this process: every write transaction goes through it
    /// (`BEGIN IMMEDIATE`), so this process's writers queue instead of spinning on
    /// SQLite's busy handler. Other processes wait on `busy_timeout`.
    pub writer: SqlitePool,
    pub data_dir: PathBuf,
    pub secrets: Secrets,
    pub events: broadcast::Sender<Event>,
    pub opts: ConsoleOptions,
    /// Identifies this process's leases: `boot-id:pid:uuid`.
    pub owner: String,
    /// Set by [`Console::stop_syncs`]: every sync run picks nothing new, waits for what it
    /// sent, records it, releases the rest and returns.
    pub stop: tokio::sync::watch::Sender<bool>,
    /// Signing secrets received and not yet shown (memory only: `shown_once.rs`).
    pub shown_once: std::sync::Mutex<Vec<crate::shown_once::ShownSecret>>,
}

/// The console core. Cheap to clone; all methods take `&self`.
#[derive(Clone)]
pub struct Console {
    pub(crate) inner: Arc<Inner>,
}

impl Console {
    /// Opens (creating if needed) the data dir and its database, and runs migrations.
    pub async fn open(opts: ConsoleOptions) -> Result<Self> {
        create_private_dir(&opts.data_dir)?;
        let (pool, writer) = crate::db::open(&opts.data_dir.join("console.db")).await?;
        let (events, _) = broadcast::channel(1024);
        let owner = format!(
            "{}:{}:{}",
            crate::lease::boot_id(),
            std::process::id(),
            uuid::Uuid::new_v4()
        );
        Ok(Self {
            inner: Arc::new(Inner {
                pool,
                writer,
                data_dir: opts.data_dir.clone(),
                secrets: Secrets::new(&opts.data_dir),
                events,
                opts,
                owner,
                stop: tokio::sync::watch::Sender::new(false),
                shown_once: std::sync::Mutex::new(Vec::new()),
            }),
        })
    }

    /// Asks every sync run of this process to stop gracefully (a stop signal, the app
    /// quitting): no operation is claimed or started any more, those already sent are
    /// waited for and recorded, and those claimed but not sent are released at once for the
    /// next run. Runs started afterwards return at once. Idempotent.
    pub fn stop_syncs(&self) {
        self.inner.stop.send_replace(true);
    }

    /// Whether [`Console::stop_syncs`] was called.
    pub fn syncs_stopped(&self) -> bool {
        *self.inner.stop.borrow()
    }

    /// Resolves once [`Console::stop_syncs`] is called.
    pub(crate) async fn stop_requested(&self) {
        let mut stop = self.inner.stop.subscribe();
        let _ = stop.wait_for(|stopped| *stopped).await;
    }

    pub fn data_dir(&self) -> &Path {
        &self.inner.data_dir
    }

    /// The event stream: sync progress, connectivity, pending counts, op transitions.
    /// A slow receiver may miss events (`RecvError::Lagged`); re-read state then.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.inner.events.subscribe()
    }

    pub(crate) fn emit(&self, event: Event) {
        let _ = self.inner.events.send(event);
    }

    /// Now, in Unix milliseconds, by the console's injected clock.
    pub fn now(&self) -> i64 {
        self.inner.opts.clock.now_ms()
    }

    // ----- profiles -----

    /// Adds a profile; the token goes to the keychain or the 0600 token file.
    pub async fn add_profile(&self, input: NewProfile) -> Result<Profile> {
        switchyard_protocol::validate_name(&input.name)
            .map_err(|e| CoreError::invalid("profile name", e.to_string()))?;
        if input.name == SANDBOX_PROFILE {
            return Err(CoreError::invalid(
                "profile name",
                "\"sandbox\" is reserved for the desktop app's embedded control plane",
            ));
        }
        check_url(&input.url)?;
        check_token(&input.token)?;
        let now = self.now();
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        let inserted = sqlx::query(
            "INSERT INTO profiles (name, url, token_store, sandbox, created_at) VALUES (?, ?, ?, 0, ?) \
             ON CONFLICT (name) DO NOTHING",
        )
        .bind(&input.name)
        .bind(&input.url)
        .bind("pending")
        .bind(now)
        .execute(&mut *tx)
        .await?;
        if inserted.rows_affected() == 0 {
            return Err(CoreError::ProfileExists(input.name));
        }
        let storage = self.inner.secrets.store(&input.name, &input.token)?;
        sqlx::query("UPDATE profiles SET token_store = ? WHERE name = ?")
            .bind(storage_tag(&storage))
            .bind(&input.name)
            .execute(&mut *tx)
            .await?;
        Audit::new(now, &self.inner.opts.actor, "profile.add", "ok")
            .profile(&input.name)
            .detail(input.url.as_str())
            .record(&mut tx)
            .await?;
        tx.commit().await?;
        self.profile(&input.name).await
    }

    /// Registers the desktop app's embedded sandbox as the `sandbox` profile. The token is
    /// kept in memory only; call this on every start (the sandbox's port changes).
    pub async fn register_sandbox(&self, url: &str, token: &str) -> Result<Profile> {
        check_url(url)?;
        let now = self.now();
        sqlx::query(
            "INSERT INTO profiles (name, url, token_store, sandbox, created_at) VALUES (?, ?, 'memory', 1, ?) \
             ON CONFLICT (name) DO UPDATE SET url = excluded.url, token_store = 'memory', sandbox = 1",
        )
        .bind(SANDBOX_PROFILE)
        .bind(url)
        .bind(now)
        .execute(&self.inner.writer)
        .await?;
        self.inner.secrets.set_memory(SANDBOX_PROFILE, token);
        self.profile(SANDBOX_PROFILE).await
    }

    pub async fn edit_profile(&self, name: &str, edit: ProfileEdit) -> Result<Profile> {
        let profile = self.profile(name).await?;
        if profile.sandbox {
            return Err(CoreError::invalid(
                "profile",
                "the sandbox profile is managed by the desktop app",
            ));
        }
        if let Some(url) = &edit.url {
            check_url(url)?;
            sqlx::query("UPDATE profiles SET url = ? WHERE name = ?")
                .bind(url)
                .bind(name)
                .execute(&self.inner.writer)
                .await?;
        }
        if let Some(token) = &edit.token {
            check_token(token)?;
            let storage = self.inner.secrets.store(name, token)?;
            sqlx::query("UPDATE profiles SET token_store = ? WHERE name = ?")
                .bind(storage_tag(&storage))
                .bind(name)
                .execute(&self.inner.writer)
                .await?;
        }
        let detail = match (&edit.url, &edit.token) {
            (Some(u), Some(_)) => format!("url={u}, token replaced"),
            (Some(u), None) => format!("url={u}"),
            (None, Some(_)) => "token replaced".to_owned(),
            (None, None) => "no change".to_owned(),
        };
        Audit::new(self.now(), &self.inner.opts.actor, "profile.edit", "ok")
            .profile(name)
            .detail(detail)
            .insert(&self.inner.writer)
            .await?;
        self.profile(name).await
    }

    /// What removing `name` would lose: the work still queued for it in every table that goes
    /// with the profile (crates/core/src/queued.rs says what counts).
    pub async fn queued_work(&self, name: &str) -> Result<QueuedWork> {
        self.profile(name).await?;
        let mut conn = self.inner.pool.acquire().await?;
        crate::queued::count(&mut conn, name).await
    }

    /// Removes a profile, its cache, its token and everything kept for it. While work is still
    /// queued for it (writes, replays, rotations, …), `discard` decides: [`DiscardQueued::No`]
    /// refuses with [`CoreError::QueuedWork`] naming each kind and count, and nothing is
    /// removed; otherwise it is removed with the profile and returned (empty: nothing was
    /// lost). Counting and deleting are one transaction, so nothing queued meanwhile is lost
    /// uncounted.
    pub async fn remove_profile(&self, name: &str, discard: DiscardQueued) -> Result<QueuedWork> {
        self.profile(name).await?;
        let now = self.now();
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        let queued = crate::queued::count(&mut tx, name).await?;
        let allowed = match &discard {
            DiscardQueued::No => queued.is_empty(),
            DiscardQueued::All => true,
            DiscardQueued::Shown(shown) => queued.covered_by(shown),
        };
        if !allowed {
            return Err(CoreError::QueuedWork {
                profile: name.to_owned(),
                queued,
            });
        }
        // The outbox first: its rows are what `gitops_ops` hangs on. Every other table of
        // the profile goes with it (`ON DELETE CASCADE`).
        for sql in [
            "DELETE FROM outbox WHERE profile = ?",
            "DELETE FROM cache WHERE profile = ?",
            "DELETE FROM profiles WHERE name = ?",
        ] {
            sqlx::query(sql).bind(name).execute(&mut *tx).await?;
        }
        let mut audit =
            Audit::new(now, &self.inner.opts.actor, "profile.remove", "ok").profile(name);
        if !queued.is_empty() {
            audit = audit.detail(format!("discarded {queued}"));
        }
        audit.record(&mut tx).await?;
        tx.commit().await?;
        self.inner.secrets.remove(name)?;
        Ok(queued)
    }

    pub async fn list_profiles(&self) -> Result<Vec<Profile>> {
        let rows: Vec<ProfileRow> = sqlx::query_as(
            "SELECT name, url, token_store, sandbox, created_at, agents_read_only FROM profiles ORDER BY name",
        )
        .fetch_all(&self.inner.pool)
        .await?;
        Ok(rows.into_iter().map(|r| self.profile_of(r)).collect())
    }

    pub async fn profile(&self, name: &str) -> Result<Profile> {
        let row: ProfileRow = sqlx::query_as(
            "SELECT name, url, token_store, sandbox, created_at, agents_read_only FROM profiles WHERE name = ?",
        )
        .bind(name)
        .fetch_optional(&self.inner.pool)
        .await?
        .ok_or_else(|| CoreError::not_found(format!("profile {name:?}")))?;
        Ok(self.profile_of(row))
    }

    fn profile_of(&self, r: ProfileRow) -> Profile {
        Profile {
            name: r.name,
            url: r.url,
            token_storage: match r.token_store.as_str() {
                "keychain" => TokenStorage::Keychain,
                "memory" => TokenStorage::Memory,
                _ => self.inner.secrets.persistent_storage(),
            },
            sandbox: r.sandbox,
            created_at: r.created_at,
            agents_read_only: r.agents_read_only,
        }
    }

    /// Marks a profile read-only for agents (or lifts the mark): while it is set, writes whose
    /// origin is an agent ([`Origin::Mcp`]) are refused with [`CoreError::AgentsReadOnly`]
    /// before anything is queued, whatever flags the agent's server was started with. A
    /// person's writes (desktop, CLI) are not affected.
    pub async fn set_agents_read_only(&self, name: &str, read_only: bool) -> Result<Profile> {
        self.profile(name).await?;
        let now = self.now();
        let mut tx = self.inner.writer.begin_with("BEGIN IMMEDIATE").await?;
        sqlx::query("UPDATE profiles SET agents_read_only = ? WHERE name = ?")
            .bind(read_only as i64)
            .bind(name)
            .execute(&mut *tx)
            .await?;
        Audit::new(now, &self.inner.opts.actor, "profile.agents", "ok")
            .profile(name)
            .detail(if read_only {
                "read-only for agents"
            } else {
                "agents may write"
            })
            .record(&mut tx)
            .await?;
        tx.commit().await?;
        self.profile(name).await
    }

    /// Records an action taken through another front end of the console (e.g. a tool call of
    /// `switchyard mcp`) in the audit log, under `actor`. `action` must not start with one of
    /// the core's own prefixes (`profile.`, `write.`, `op.`, `replay.`).
    pub async fn record_audit(&self, entry: ExternalAudit) -> Result<()> {
        let own = ["profile.", "write.", "op.", "replay."];
        if entry.action.is_empty() || own.iter().any(|p| entry.action.starts_with(p)) {
            return Err(CoreError::invalid(
                "action",
                format!(
                    "{:?} is empty or one of the core's own actions",
                    entry.action
                ),
            ));
        }
        let mut audit = Audit::new(self.now(), &entry.actor, &entry.action, &entry.outcome);
        if let Some(profile) = entry.profile.as_deref() {
            audit = audit.profile(profile);
        }
        if let Some(id) = entry.op_id {
            audit = audit.op(id);
        }
        if let Some(resource) = &entry.resource {
            audit = audit.resource(resource.clone());
        }
        if let Some(detail) = &entry.detail {
            audit = audit.detail(detail.clone());
        }
        audit.insert(&self.inner.writer).await
    }

    /// Tests a profile: health (with latency) and whether the token is accepted.
    pub async fn test_connection(&self, name: &str) -> Result<ConnectionReport> {
        let client = self.client(name).await?;
        let mut report = ConnectionReport {
            profile: name.to_owned(),
            healthy: false,
            authenticated: false,
            latency_ms: None,
            server: None,
            caller: None,
            error: None,
        };
        match client.health().await {
            Ok(rtt) => {
                report.healthy = true;
                report.latency_ms = Some(rtt.as_millis() as u64);
            }
            Err(e) => report.error = Some(e.to_string()),
        }
        if report.healthy {
            match client.info().await {
                Ok(info) => {
                    report.authenticated = true;
                    report.server = Some(info);
                }
                Err(e) => report.error = Some(e.to_string()),
            }
        }
        if report.authenticated {
            match client.whoami().await {
                Ok(caller) => report.caller = caller,
                Err(e) => report.error = Some(e.to_string()),
            }
        }
        self.emit(Event::Connectivity {
            profile: name.to_owned(),
            online: report.healthy,
            detail: report.error.clone(),
        });
        Ok(report)
    }

    pub(crate) async fn client(&self, name: &str) -> Result<ApiClient> {
        let profile = self.profile(name).await?;
        let token = self
            .inner
            .secrets
            .load(name, &profile.token_storage)?
            .ok_or_else(|| CoreError::NoToken(name.to_owned()))?;
        ApiClient::new(name, &profile.url, &token, self.inner.opts.request_timeout)
    }

    // ----- audit -----

    /// Reads the audit log, newest first.
    pub async fn audit(&self, query: AuditQuery) -> Result<Vec<AuditEntry>> {
        crate::audit::query(&self.inner.pool, &query).await
    }
}

/// A `profiles` row. `token_store` says where the token is, never the token itself.
#[derive(sqlx::FromRow)]
struct ProfileRow {
    name: String,
    url: String,
    token_store: String,
    sandbox: bool,
    created_at: i64,
    agents_read_only: bool,
}

fn storage_tag(s: &TokenStorage) -> &'static str {
    match s {
        TokenStorage::Keychain => "keychain",
        TokenStorage::File { .. } => "file",
        TokenStorage::Memory => "memory",
    }
}

fn check_url(url: &str) -> Result<()> {
    let parsed = url::Url::parse(url)
        .map_err(|e| CoreError::invalid("url", format!("{url:?} is not a URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err(CoreError::invalid(
            "url",
            format!("{url:?} must be an http(s) URL with a host"),
        ));
    }
    Ok(())
}

fn check_token(token: &str) -> Result<()> {
    let token = token.trim();
    if token.is_empty() || token.chars().any(|c| c.is_control() || c == ' ') {
        // Never echo the token back.
        return Err(CoreError::invalid(
            "token",
            "must be non-empty, without spaces or control characters",
        ));
    }
    Ok(())
}
