//! Storage several machines share: a PostgreSQL database named by `storage.url`, for what a
//! team's replicas must all see: the task lists, the audit log's chain ([`AuditChain`]),
//! where each replica can be reached ([`ReplicaTable`]), the state of requests without a
//! protocol session ([`SessionTable`]), upstream servers' OAuth tokens ([`TokenTable`]),
//! project trust decisions ([`TrustTable`]), and the durable cron jobs ([`crate::cron::store`]). The embedded default stays the
//! SQLite files of [`crate::sqlite`]; a store that is given a [`SharedStorage`] keeps its data
//! here instead, with the same behaviour.
//!
//! * **The driver.** `postgres` (the blocking face of `tokio-postgres`, by the same authors)
//!   with an `r2d2` pool. The stores run their statements on blocking threads (as they do
//!   with SQLite), where a blocking client fits: each connection drives itself, whatever
//!   runtime (current-thread or not) the front end runs.
//! * **The pool** connects lazily: a command that never touches shared data never reaches the
//!   server, and a server that is down is an error of the calls that need it (naming the
//!   server, never the password), not of start-up. `/readyz` asks [`SharedStorage::check`].
//! * **Migrations.** Each store names its component and schema version; the first use in a
//!   process creates its tables (`IF NOT EXISTS`) under a transaction-scoped advisory lock, so
//!   replicas starting together do not race, and a database a newer toolbelt migrated is
//!   refused with what to do.

mod audit;
mod replicas;
mod sessions;
mod tokens;
mod trust;

pub use audit::{AUDIT_TABLE, AuditChain, ChainHead, ChainLine};
pub use replicas::ReplicaTable;
pub use sessions::{SessionTable, SharedSlot};
pub use tokens::{HeldLock, TokenTable};
pub use trust::TrustTable;

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use postgres::config::SslMode;
use postgres::error::SqlState;
use r2d2_postgres::PostgresConnectionManager;
use tokio_postgres_rustls::MakeRustlsConnect;

/// Runs `f`, which blocks on the database, where blocking is allowed: on this thread, or, when
/// this thread belongs to an async runtime (where the driver's own runtime must not be
/// started), on a thread of its own meanwhile.
pub fn off_runtime<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    if tokio::runtime::Handle::try_current().is_err() {
        return f();
    }
    std::thread::scope(|s| match s.spawn(f).join() {
        Ok(done) => done,
        Err(panic) => std::panic::resume_unwind(panic),
    })
}

/// `text` as PostgreSQL's text can hold it: each NUL replaced (SQLite keeps them).
pub fn no_nul(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains('\0') { text.replace('\0', "\u{FFFD}").into() } else { text.into() }
}

/// How connections are made: TLS (rustls) with `sslmode=require`, plain otherwise.
type Tls = MakeRustlsConnect;

/// A pooled connection.
pub type PooledClient = r2d2::PooledConnection<PostgresConnectionManager<Tls>>;

/// How long a call waits for a connection (the server's answer, or a free one in the pool).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The advisory lock key under which migrations run ("toolbelt" in ASCII).
const MIGRATION_LOCK: i64 = 0x746f_6f6c_6265_6c74;

/// Why shared storage could not be used. Messages name the server as `user@host:port/db`,
/// never the password.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// `storage.url` is not a PostgreSQL URL this can use.
    #[error("storage.url is not a PostgreSQL URL toolbelt can use ({0}); write postgres://USER@HOST:PORT/DATABASE")]
    Url(String),
    /// TLS could not be set up (`storage.ca_file` unreadable or holding no certificate).
    #[error("cannot set up TLS to the PostgreSQL server: {0}")]
    Tls(String),
    /// The server could not be reached, or refused the login.
    #[error(
        "cannot reach the PostgreSQL server {server} ({detail}); check storage.url, the password in the variable \
         storage.password_env names, and that the server runs"
    )]
    Unreachable {
        /// Where.
        server: String,
        /// What the driver said.
        detail: String,
    },
    /// Another writer held the data for longer than the wait allows.
    #[error("the PostgreSQL server {server} is busy: another replica is changing the same data; try again")]
    Busy {
        /// Where.
        server: String,
    },
    /// The server refused a statement.
    #[error("the PostgreSQL server {server} failed: {detail}")]
    Server {
        /// Where.
        server: String,
        /// What it said.
        detail: String,
    },
    /// Stored data that no toolbelt writes.
    #[error("in the PostgreSQL database {server}: {detail}")]
    Damaged {
        /// Where.
        server: String,
        /// What is wrong.
        detail: String,
    },
    /// A newer toolbelt migrated the database.
    #[error(
        "the PostgreSQL database {server} holds {component} at schema version {found}, newer than this toolbelt \
         knows ({known}); use a newer toolbelt on every replica"
    )]
    Newer {
        /// Where.
        server: String,
        /// Whose schema.
        component: String,
        /// The version found.
        found: i32,
        /// The version this one writes.
        known: i32,
    },
}

/// A PostgreSQL database and a pool of connections to it.
pub struct SharedStorage {
    /// Made at the first pooled connection: a command that never asks (or asks once, on a
    /// connection of its own) starts none of the pool's threads.
    pool: std::sync::OnceLock<r2d2::Pool<PostgresConnectionManager<Tls>>>,
    max_connections: u32,
    /// How to connect, for [`SharedStorage::check`]'s own connection.
    config: postgres::Config,
    tls: Tls,
    /// Why the pool's last attempt to connect failed, with the causes (a TLS handshake's
    /// reason), which the pool's own error leaves out.
    last_error: Arc<Mutex<Option<String>>>,
    server: String,
    migrated: Mutex<HashSet<&'static str>>,
    /// Failures seen (unreachable, refused statements), for `/metrics`.
    errors: AtomicU64,
}

impl std::fmt::Debug for SharedStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedStorage").field("server", &self.server).finish_non_exhaustive()
    }
}

impl SharedStorage {
    /// The database at `url` (`postgres://USER@HOST:PORT/DATABASE`, or the key=value form),
    /// logging in with `password` when given (it wins over one in the URL), with at most
    /// `max_connections` connections. Nothing is connected yet.
    pub fn new(url: &str, password: Option<&str>, max_connections: u32) -> Result<Self, StorageError> {
        Self::connect_with(url, password, max_connections, None)
    }

    /// [`SharedStorage::new`], trusting the CA certificates (PEM) in `ca_file` besides the
    /// system's when the URL says `sslmode=require`.
    ///
    /// With `sslmode=require` every connection is TLS, and the server's certificate must chain
    /// to a trusted root and name the host (rustls verifies both; there is no unverified
    /// mode). Without it, connections are plain: libpq's default `prefer` would try TLS
    /// without checking anything, which protects nothing a listener cannot strip.
    pub fn connect_with(
        url: &str,
        password: Option<&str>,
        max_connections: u32,
        ca_file: Option<&std::path::Path>,
    ) -> Result<Self, StorageError> {
        let mut config: postgres::Config =
            url.parse().map_err(|e: postgres::Error| StorageError::Url(e.to_string()))?;
        if config.get_ssl_mode() != SslMode::Require {
            config.ssl_mode(SslMode::Disable);
        }
        let tls = tls(ca_file)?;
        if let Some(password) = password {
            config.password(password);
        }
        config.connect_timeout(CONNECT_TIMEOUT);
        if config.get_application_name().is_none() {
            config.application_name("toolbelt");
        }
        // A server that vanished is noticed in a minute, not in TCP's two hours.
        config.keepalives(true).keepalives_idle(Duration::from_secs(30));
        let server = describe(&config);
        Ok(Self {
            pool: std::sync::OnceLock::new(),
            max_connections: max_connections.max(1),
            last_error: Arc::new(Mutex::new(None)),
            config,
            tls,
            server,
            migrated: Mutex::new(HashSet::new()),
            errors: AtomicU64::new(0),
        })
    }

    /// The server, as messages name it: `user@host:port/database`.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// A connection, with `component`'s schema made (`schema`, at `version`) if this process
    /// has not yet done so.
    pub fn client(&self, component: &'static str, version: i32, schema: &str) -> Result<PooledClient, StorageError> {
        let mut client = self.connection()?;
        let done = self.migrated.lock().unwrap_or_else(PoisonError::into_inner).contains(component);
        if !done {
            self.migrate(&mut client, component, version, schema)?;
            self.migrated.lock().unwrap_or_else(PoisonError::into_inner).insert(component);
        }
        Ok(client)
    }

    /// Runs `f` on a pooled connection with `component`'s schema made, off any async
    /// runtime's thread ([`off_runtime`]): what each store's statements run in.
    pub fn with_client<T: Send, E: From<StorageError> + Send>(
        &self,
        component: &'static str,
        version: i32,
        schema: &str,
        f: impl FnOnce(&mut PooledClient) -> Result<T, E> + Send,
    ) -> Result<T, E> {
        off_runtime(|| {
            let mut client = self.client(component, version, schema)?;
            f(&mut client)
        })
    }

    /// A connection of its own, outside the pool, with `component`'s schema made: for a
    /// command that asks one thing and exits, where a server that refuses should fail at once
    /// (the pool keeps trying for [`CONNECT_TIMEOUT`]).
    pub fn client_once(
        &self,
        component: &'static str,
        version: i32,
        schema: &str,
    ) -> Result<postgres::Client, StorageError> {
        let mut client = self.config.connect(self.tls.clone()).map_err(|e| {
            self.errors.fetch_add(1, Ordering::Relaxed);
            StorageError::Unreachable { server: self.server.clone(), detail: with_causes(&e) }
        })?;
        let done = self.migrated.lock().unwrap_or_else(PoisonError::into_inner).contains(component);
        if !done {
            self.migrate(&mut client, component, version, schema)?;
            self.migrated.lock().unwrap_or_else(PoisonError::into_inner).insert(component);
        }
        Ok(client)
    }

    /// Whether the server answers (`/readyz`), on a connection of its own: a pool whose
    /// connections are all busy (writers waiting on a list) is not an unreachable server, and a
    /// probe counts no storage error.
    pub fn check(&self) -> Result<(), StorageError> {
        let mut config = self.config.clone();
        config.connect_timeout(Duration::from_secs(2));
        let detail =
            |e: postgres::Error| StorageError::Unreachable { server: self.server.clone(), detail: with_causes(&e) };
        let mut client = config.connect(self.tls.clone()).map_err(detail)?;
        client.simple_query("SELECT 1").map(drop).map_err(detail)
    }

    /// How many failures were seen since the storage was set up.
    pub fn errors(&self) -> u64 {
        self.errors.load(Ordering::Relaxed)
    }

    /// A driver error, classified: unreachable, busy, or the server's refusal.
    pub fn error(&self, e: &postgres::Error) -> StorageError {
        self.errors.fetch_add(1, Ordering::Relaxed);
        let server = self.server.clone();
        match e.code() {
            Some(code) if is_busy(code) => StorageError::Busy { server },
            Some(_) => StorageError::Server { server, detail: db_message(e) },
            None if e.is_closed() => StorageError::Unreachable { server, detail: e.to_string() },
            None => StorageError::Server { server, detail: e.to_string() },
        }
    }

    /// Stored data that no toolbelt writes.
    pub fn damaged(&self, detail: String) -> StorageError {
        StorageError::Damaged { server: self.server.clone(), detail }
    }

    fn connection(&self) -> Result<PooledClient, StorageError> {
        let pool = self.pool.get_or_init(|| {
            let manager = PostgresConnectionManager::new(self.config.clone(), self.tls.clone());
            r2d2::Pool::builder()
                .max_size(self.max_connections)
                .min_idle(Some(0))
                .connection_timeout(CONNECT_TIMEOUT)
                .error_handler(Box::new(LastError(Arc::clone(&self.last_error))))
                .build_unchecked(manager)
        });
        pool.get().map_err(|e| {
            let last = self.last_error.lock().unwrap_or_else(PoisonError::into_inner).take();
            self.unreachable(&last.unwrap_or_else(|| e.to_string()))
        })
    }

    fn unreachable(&self, detail: &str) -> StorageError {
        self.errors.fetch_add(1, Ordering::Relaxed);
        StorageError::Unreachable { server: self.server.clone(), detail: detail.to_string() }
    }

    /// Makes `component`'s tables, under the migration lock, and records its version; refuses
    /// a newer one.
    fn migrate(
        &self,
        client: &mut postgres::Client,
        component: &str,
        version: i32,
        schema: &str,
    ) -> Result<(), StorageError> {
        let err = |e: postgres::Error| self.error(&e);
        // Up to date already: nothing to create (a role without CREATE rights works on tables
        // made for it).
        if self.version(client, component)? == Some(version) {
            return Ok(());
        }
        let mut tx = client.transaction().map_err(err)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK]).map_err(err)?;
        tx.batch_execute(
            "CREATE TABLE IF NOT EXISTS toolbelt_schema (component TEXT PRIMARY KEY, version INTEGER NOT NULL)",
        )
        .map_err(err)?;
        let found: Option<i32> = match tx
            .query_opt("SELECT version FROM toolbelt_schema WHERE component = $1", &[&component])
            .map_err(err)?
        {
            Some(row) => {
                Some(row.try_get(0).map_err(|e| self.damaged(format!("toolbelt_schema is not toolbelt's ({e})")))?)
            }
            None => None,
        };
        match found {
            Some(found) if found > version => {
                return Err(StorageError::Newer {
                    server: self.server.clone(),
                    component: component.to_string(),
                    found,
                    known: version,
                });
            }
            Some(found) if found == version => {}
            _ => {
                tx.batch_execute(schema).map_err(err)?;
                tx.execute(
                    "INSERT INTO toolbelt_schema (component, version) VALUES ($1, $2) \
                     ON CONFLICT (component) DO UPDATE SET version = EXCLUDED.version",
                    &[&component, &version],
                )
                .map_err(err)?;
            }
        }
        tx.commit().map_err(err)
    }
}

impl Drop for SharedStorage {
    /// Closes the idle connections on a thread of their own: closing one blocks on the
    /// driver's own runtime, which a thread driving another runtime (a front end's, where the
    /// storage may be dropped) must not do.
    fn drop(&mut self) {
        if let Some(pool) = self.pool.take() {
            let _ = std::thread::spawn(move || drop(pool)).join();
        }
    }
}

impl SharedStorage {
    /// `component`'s schema version, without creating anything: `None` when it has none yet.
    fn version(&self, client: &mut postgres::Client, component: &str) -> Result<Option<i32>, StorageError> {
        let err = |e: postgres::Error| self.error(&e);
        let exists: bool = client
            .query_one("SELECT to_regclass('toolbelt_schema') IS NOT NULL", &[])
            .map_err(err)?
            .try_get(0)
            .map_err(err)?;
        if !exists {
            return Ok(None);
        }
        let row =
            client.query_opt("SELECT version FROM toolbelt_schema WHERE component = $1", &[&component]).map_err(err)?;
        row.map(|row| row.try_get(0).map_err(|e| self.damaged(format!("toolbelt_schema is not toolbelt's ({e})"))))
            .transpose()
    }
}

/// Keeps the pool's last connection error, causes included.
#[derive(Debug)]
struct LastError(Arc<Mutex<Option<String>>>);

impl r2d2::HandleError<postgres::Error> for LastError {
    fn handle_error(&self, error: postgres::Error) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(with_causes(&error));
    }
}

/// An error and what caused it (`error performing TLS handshake: invalid peer certificate:
/// UnknownIssuer`), each cause once.
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(c) = cause {
        let more = c.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        cause = c.source();
    }
    text
}

/// The TLS connector: the system's roots and those of `ca_file`, verified by rustls.
fn tls(ca_file: Option<&std::path::Path>) -> Result<Tls, StorageError> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject as _;
    let mut extra: Vec<CertificateDer<'static>> = Vec::new();
    if let Some(path) = ca_file {
        let shown = path.display();
        let certs = CertificateDer::pem_file_iter(path)
            .map_err(|e| StorageError::Tls(format!("cannot read storage.ca_file {shown}: {e}")))?;
        for cert in certs {
            extra.push(cert.map_err(|e| StorageError::Tls(format!("storage.ca_file {shown}: {e}")))?);
        }
        if extra.is_empty() {
            return Err(StorageError::Tls(format!("storage.ca_file {shown} holds no PEM certificate")));
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = rustls_platform_verifier::Verifier::new_with_extra_roots(extra, Arc::clone(&provider))
        .map_err(|e| StorageError::Tls(e.to_string()))?;
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| StorageError::Tls(e.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

/// `user@host:port/database`, from what the configuration names.
fn describe(config: &postgres::Config) -> String {
    let host = match config.get_hosts().first() {
        Some(postgres::config::Host::Tcp(host)) => host.clone(),
        Some(postgres::config::Host::Unix(path)) => path.display().to_string(),
        None => "localhost".to_string(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config.get_user().unwrap_or("?");
    let db = config.get_dbname().unwrap_or(user);
    format!("{user}@{host}:{port}/{db}")
}

/// A lock or serialization failure: waiting more (or again) resolves it.
fn is_busy(code: &SqlState) -> bool {
    [SqlState::LOCK_NOT_AVAILABLE, SqlState::T_R_SERIALIZATION_FAILURE, SqlState::T_R_DEADLOCK_DETECTED].contains(code)
}

/// The server's message, without the driver's prefix.
fn db_message(e: &postgres::Error) -> String {
    e.as_db_error().map_or_else(|| e.to_string(), |db| db.message().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_is_named_without_its_password() {
        let shared = SharedStorage::new("postgres://team:hunter2@db.internal:6543/tools", None, 4).unwrap();
        assert_eq!(shared.server(), "team@db.internal:6543/tools");
        assert!(!format!("{shared:?}").contains("hunter2"));
        assert!(matches!(SharedStorage::new("mysql://x", None, 1), Err(StorageError::Url(_))));
    }

    #[test]
    fn an_unreachable_server_is_named_in_the_error() {
        // A closed loopback port: refused at once.
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let shared = SharedStorage::new(&format!("postgres://team@127.0.0.1:{port}/tools"), Some("pw"), 2).unwrap();
        let e = shared.check().unwrap_err().to_string();
        assert!(e.starts_with(&format!("cannot reach the PostgreSQL server team@127.0.0.1:{port}/tools")), "{e}");
        assert!(!e.contains("pw"), "{e}");
    }
}
