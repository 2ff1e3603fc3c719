//! Where a team's replicas can be reached: each serving replica keeps a row (its name, the URL
//! other replicas reach it at, when it was last seen by the database's clock), so a replica
//! that receives a request for another's session can pass it on to the owner, or say the owner
//! is gone. Times are the database's, so replicas' clocks need not agree.

use std::time::Duration;

use super::{SharedStorage, StorageError};

const COMPONENT: &str = "replicas";
const VERSION: i32 = 1;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS replicas (
    name    TEXT PRIMARY KEY,
    url     TEXT NOT NULL,
    seen_ms BIGINT NOT NULL
);
";

/// The database's clock, in milliseconds since the epoch.
const NOW_MS: &str = "(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT";

/// The replicas of a team, as the shared database knows them.
#[derive(Debug, Clone, Copy)]
pub struct ReplicaTable<'s> {
    shared: &'s SharedStorage,
}

impl<'s> ReplicaTable<'s> {
    /// The table in `shared`.
    pub fn new(shared: &'s SharedStorage) -> Self {
        Self { shared }
    }

    /// Says that replica `name` is alive at `url` now. Returns the other URL a fresh row of
    /// the same name had, when another process announces itself under this name (two
    /// replicas sharing a name see each other's sessions as ended ones). Blocking.
    pub fn announce(&self, name: &str, url: &str, fresh: Duration) -> Result<Option<String>, StorageError> {
        let mut client = self.shared.client(COMPONENT, VERSION, SCHEMA)?;
        let fresh_ms = i64::try_from(fresh.as_millis()).unwrap_or(i64::MAX);
        let other: Option<String> = client
            .query_opt(
                &format!("SELECT url FROM replicas WHERE name = $1 AND url <> $2 AND seen_ms > {NOW_MS} - $3"),
                &[&name, &url, &fresh_ms],
            )
            .map_err(|e| self.shared.error(&e))?
            .map(|row| row.try_get(0))
            .transpose()
            .map_err(|e| self.shared.error(&e))?;
        client
            .execute(
                &format!(
                    "INSERT INTO replicas (name, url, seen_ms) VALUES ($1, $2, {NOW_MS}) \
                     ON CONFLICT (name) DO UPDATE SET url = EXCLUDED.url, seen_ms = EXCLUDED.seen_ms"
                ),
                &[&name, &url],
            )
            .map_err(|e| self.shared.error(&e))?;
        Ok(other)
    }

    /// Says that replica `name`, announced at `url`, has stopped (another process's row of
    /// the same name stays). Blocking.
    pub fn leave(&self, name: &str, url: &str) -> Result<(), StorageError> {
        let mut client = self.shared.client(COMPONENT, VERSION, SCHEMA)?;
        client
            .execute("DELETE FROM replicas WHERE name = $1 AND url = $2", &[&name, &url])
            .map(drop)
            .map_err(|e| self.shared.error(&e))
    }

    /// Where replica `name` is, if it was seen within `fresh`. Blocking.
    pub fn locate(&self, name: &str, fresh: Duration) -> Result<Option<String>, StorageError> {
        let mut client = self.shared.client(COMPONENT, VERSION, SCHEMA)?;
        let fresh_ms = i64::try_from(fresh.as_millis()).unwrap_or(i64::MAX);
        let row = client
            .query_opt(
                &format!("SELECT url FROM replicas WHERE name = $1 AND seen_ms > {NOW_MS} - $2"),
                &[&name, &fresh_ms],
            )
            .map_err(|e| self.shared.error(&e))?;
        row.map(|row| row.try_get(0).map_err(|e| self.shared.error(&e))).transpose()
    }
}
