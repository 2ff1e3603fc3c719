//! Upstream servers' OAuth tokens in the shared database: one sign-in serves every replica of
//! a team (a pod cannot take a browser's redirect; a person signs in once, from anywhere the
//! team's settings reach the database). Each row holds what a token file would hold, under
//! the file's name (the server's name and a digest of its address, so a server named alike
//! at another address never gets the tokens).
//!
//! Refreshes take turns across replicas as they do across processes on one machine: the
//! turn is a transaction-scoped advisory lock, held by a thread of its own on a connection of
//! its own (outside the pool) until the holder lets go ([`HeldLock`]), so it can be held across the refresh's
//! HTTP exchange and released from any thread, async or not.

use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use super::{SharedStorage, StorageError};

const COMPONENT: &str = "oauth_tokens";
const VERSION: i32 = 1;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS oauth_tokens (
    key        TEXT PRIMARY KEY,
    url        TEXT NOT NULL,
    value      TEXT NOT NULL,
    updated_ms BIGINT NOT NULL
);
";

/// How long a turn is waited for, and how long one may be held idle before the server ends it
/// (a process that died holding it lets go then).
const TURN_WAIT: Duration = Duration::from_secs(60);

/// The tokens kept in a shared database.
#[derive(Debug, Clone)]
pub struct TokenTable {
    shared: Arc<SharedStorage>,
}

/// A turn at changing one server's tokens: the others wait until it is dropped.
#[derive(Debug)]
pub struct HeldLock {
    /// Dropped to let go: the thread holding the lock ends its transaction.
    _release: mpsc::Sender<()>,
}

impl TokenTable {
    /// The table in `shared`.
    pub fn new(shared: Arc<SharedStorage>) -> Self {
        Self { shared }
    }

    /// The server, as messages name it.
    pub fn server(&self) -> &str {
        self.shared.server()
    }

    /// What is kept under `key`, if anything. Blocking.
    pub fn read(&self, key: &str) -> Result<Option<String>, StorageError> {
        let mut client = self.shared.client(COMPONENT, VERSION, SCHEMA)?;
        let row = client
            .query_opt("SELECT value FROM oauth_tokens WHERE key = $1", &[&key])
            .map_err(|e| self.shared.error(&e))?;
        row.map(|r| r.try_get(0).map_err(|e| self.shared.error(&e))).transpose()
    }

    /// Keeps `value` under `key` (for the server at `url`), replacing what was there. Blocking.
    pub fn write(&self, key: &str, url: &str, value: &str) -> Result<(), StorageError> {
        let mut client = self.shared.client(COMPONENT, VERSION, SCHEMA)?;
        client
            .execute(
                "INSERT INTO oauth_tokens (key, url, value, updated_ms) \
                 VALUES ($1, $2, $3, (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT) \
                 ON CONFLICT (key) DO UPDATE SET url = EXCLUDED.url, value = EXCLUDED.value, \
                 updated_ms = EXCLUDED.updated_ms",
                &[&key, &url, &value],
            )
            .map(drop)
            .map_err(|e| self.shared.error(&e))
    }

    /// Forgets what is kept under `key`; `false` when nothing was. Blocking.
    pub fn delete(&self, key: &str) -> Result<bool, StorageError> {
        let mut client = self.shared.client(COMPONENT, VERSION, SCHEMA)?;
        let n =
            client.execute("DELETE FROM oauth_tokens WHERE key = $1", &[&key]).map_err(|e| self.shared.error(&e))?;
        Ok(n > 0)
    }

    /// Waits for the turn at changing `key`'s tokens (at most a minute). Blocking.
    pub fn lock(&self, key: &str) -> Result<HeldLock, StorageError> {
        let (acquired, taken) = mpsc::channel::<Result<(), StorageError>>();
        let (release, released) = mpsc::channel::<()>();
        let (shared, key) = (Arc::clone(&self.shared), format!("oauth:{key}"));
        std::thread::Builder::new()
            .name("oauth-turn".into())
            .spawn(move || {
                let err = |e: postgres::Error| shared.error(&e);
                // A connection of its own, outside the pool: the holder reads and writes the
                // tokens on pooled ones meanwhile, and a small pool must not run dry.
                let mut client = match shared.client_once(COMPONENT, VERSION, SCHEMA) {
                    Ok(client) => client,
                    Err(e) => return drop(acquired.send(Err(e))),
                };
                let mut tx = match client.transaction() {
                    Ok(tx) => tx,
                    Err(e) => return drop(acquired.send(Err(err(e)))),
                };
                let wait = TURN_WAIT.as_secs();
                let taken = tx
                    .batch_execute(&format!(
                        "SET LOCAL lock_timeout = '{wait}s'; SET LOCAL idle_in_transaction_session_timeout = '{wait}s'"
                    ))
                    .and_then(|()| tx.execute("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", &[&key]));
                if let Err(e) = taken {
                    return drop(acquired.send(Err(err(e))));
                }
                let _ = acquired.send(Ok(()));
                // Held until the turn is dropped; ending the transaction lets go.
                let _ = released.recv();
                let _ = tx.commit();
            })
            .map_err(|e| self.shared.damaged(format!("no thread to hold the turn: {e}")))?;
        match taken.recv() {
            Ok(Ok(())) => Ok(HeldLock { _release: release }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(self.shared.damaged("the thread holding the turn ended".into())),
        }
    }
}
