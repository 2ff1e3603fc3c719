//! What a request without a protocol session (MCP 2026-07-28) needs from earlier requests,
//! wherever a team's load balancer sends it: the state of its session (the files it read, the
//! grants a person gave, the working directory), and the request states its `input_required`
//! results handed out (the key that seals them, and which are still unspent).
//!
//! * **Session state** is kept by owner (what the requests prove: their bearer token's id) and
//!   slot, each row with the owner's version when it was last written. A write takes the
//!   owner's row `FOR UPDATE` and bumps its version, so one owner's writes commit in version
//!   order, and a reader that asks for what changed after version `v` misses none. A write
//!   names the version it started from, and writes nothing when another came first: the
//!   writer merges and tries again.
//! * **The sealing key** is drawn by the first replica that needs it and read by the others;
//!   whoever can write this database is trusted with the team's grants already.
//! * **Request states** are single-use across the team: a state's nonce is noted when it is
//!   issued, struck off (deleted) when it is redeemed, and lapses at its deadline by the
//!   database's clock.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use postgres::types::ToSql;

use super::{SharedStorage, StorageError};

const COMPONENT: &str = "shared_sessions";
const VERSION: i32 = 1;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS shared_sessions (
    owner   TEXT PRIMARY KEY,
    version BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS shared_session_slots (
    owner   TEXT NOT NULL REFERENCES shared_sessions (owner),
    slot    TEXT NOT NULL,
    version BIGINT NOT NULL,
    value   TEXT NOT NULL,
    PRIMARY KEY (owner, slot)
);
CREATE TABLE IF NOT EXISTS team_secrets (
    name  TEXT PRIMARY KEY,
    value BYTEA NOT NULL
);
CREATE TABLE IF NOT EXISTS request_states (
    nonce       TEXT PRIMARY KEY,
    deadline_ms BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS request_states_by_deadline ON request_states (deadline_ms);
";

/// The database's clock, in milliseconds since the epoch.
const NOW_MS: &str = "(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT";

/// How long a write waits for another replica's write of the same session.
const LOCK_TIMEOUT: &str = "5s";

/// The name of the key that seals request states.
const SEALING_KEY: &str = "request_state_key";

/// Request states this process issued, to sweep lapsed ones now and then.
static ISSUED: AtomicU64 = AtomicU64::new(0);

/// One slot's value, as the database holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedSlot {
    /// The slot's key (`file_ledger`, `cwd`).
    pub slot: String,
    /// The owner's version when it was written.
    pub version: i64,
    /// Its value (JSON text).
    pub value: String,
}

/// The state of sessions without a protocol session, and their request states.
#[derive(Debug, Clone, Copy)]
pub struct SessionTable<'s> {
    shared: &'s SharedStorage,
}

impl<'s> SessionTable<'s> {
    /// The tables in `shared`.
    pub fn new(shared: &'s SharedStorage) -> Self {
        Self { shared }
    }

    fn err(&self) -> impl Fn(postgres::Error) -> StorageError + '_ {
        |e| self.shared.error(&e)
    }

    /// `owner`'s slots written after version `since`. Blocking.
    pub fn changed_since(&self, owner: &str, since: i64) -> Result<Vec<SharedSlot>, StorageError> {
        let mut client = self.shared.client(COMPONENT, VERSION, SCHEMA)?;
        let rows = client
            .query(
                "SELECT slot, version, value FROM shared_session_slots WHERE owner = $1 AND version > $2 \
                 ORDER BY version",
                &[&owner, &since],
            )
            .map_err(self.err())?;
        rows.iter()
            .map(|row| Ok(SharedSlot { slot: row.try_get(0)?, version: row.try_get(1)?, value: row.try_get(2)? }))
            .collect::<Result<_, postgres::Error>>()
            .map_err(self.err())
    }

    /// Writes `slots` (key, JSON text) of `owner` at its next version: `Ok(version)`; or
    /// writes nothing when `owner`'s version is no longer `expected` (another replica wrote
    /// since): `Err(current version)`. Blocking.
    pub fn write(
        &self,
        owner: &str,
        expected: i64,
        slots: &[(String, String)],
    ) -> Result<Result<i64, i64>, StorageError> {
        let mut client = self.shared.client(COMPONENT, VERSION, SCHEMA)?;
        let mut tx = client.transaction().map_err(self.err())?;
        // A replica that dies mid-write lets go of the owner's row soon, not when TCP notices.
        tx.batch_execute(&format!(
            "SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'; SET LOCAL idle_in_transaction_session_timeout = '{LOCK_TIMEOUT}'"
        ))
        .map_err(self.err())?;
        tx.execute("INSERT INTO shared_sessions (owner) VALUES ($1) ON CONFLICT (owner) DO NOTHING", &[&owner])
            .map_err(self.err())?;
        let current: i64 = tx
            .query_one("SELECT version FROM shared_sessions WHERE owner = $1 FOR UPDATE", &[&owner])
            .map_err(self.err())?
            .try_get(0)
            .map_err(self.err())?;
        if current != expected {
            return Ok(Err(current));
        }
        let version = current + 1;
        tx.execute("UPDATE shared_sessions SET version = $2 WHERE owner = $1", &[&owner, &version])
            .map_err(self.err())?;
        let upsert = tx
            .prepare(
                "INSERT INTO shared_session_slots (owner, slot, version, value) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (owner, slot) DO UPDATE SET version = EXCLUDED.version, value = EXCLUDED.value",
            )
            .map_err(self.err())?;
        for (slot, value) in slots {
            let params: [&(dyn ToSql + Sync); 4] = [&owner, slot, &version, value];
            tx.execute(&upsert, &params).map_err(self.err())?;
        }
        tx.commit().map_err(self.err())?;
        Ok(Ok(version))
    }

    /// The key that seals request states, the same for every replica: drawn by the first that
    /// asks. Blocking.
    pub fn sealing_key(&self) -> Result<Vec<u8>, StorageError> {
        let mut fresh = [0u8; 32];
        getrandom::fill(&mut fresh).map_err(|e| self.shared.damaged(format!("no random key: {e}")))?;
        let mut client = self.shared.client(COMPONENT, VERSION, SCHEMA)?;
        client
            .execute(
                "INSERT INTO team_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
                &[&SEALING_KEY, &fresh.as_slice()],
            )
            .map_err(self.err())?;
        let key: Vec<u8> = client
            .query_one("SELECT value FROM team_secrets WHERE name = $1", &[&SEALING_KEY])
            .map_err(self.err())?
            .try_get(0)
            .map_err(self.err())?;
        if key.len() < 32 {
            return Err(self.shared.damaged(format!("the {SEALING_KEY} in team_secrets is shorter than 32 bytes")));
        }
        Ok(key)
    }

    /// Notes request state `nonce` as outstanding for `ttl`; lapsed ones are let go now and
    /// then. Blocking.
    pub fn issue(&self, nonce: &str, ttl: Duration) -> Result<(), StorageError> {
        let ttl_ms = i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX);
        let mut client = self.shared.client(COMPONENT, VERSION, SCHEMA)?;
        client
            .execute(
                &format!("INSERT INTO request_states (nonce, deadline_ms) VALUES ($1, {NOW_MS} + $2)"),
                &[&nonce, &ttl_ms],
            )
            .map_err(self.err())?;
        // One issue in 64 sweeps what lapsed, so the table stays as small as what waits.
        if ISSUED.fetch_add(1, Ordering::Relaxed).is_multiple_of(64) {
            client
                .execute(&format!("DELETE FROM request_states WHERE deadline_ms < {NOW_MS}"), &[])
                .map_err(self.err())?;
        }
        Ok(())
    }

    /// Strikes request state `nonce` off: `true` when it was outstanding (and had not lapsed),
    /// `false` when it was spent already, lapsed, or never issued. Blocking.
    pub fn spend(&self, nonce: &str) -> Result<bool, StorageError> {
        let mut client = self.shared.client(COMPONENT, VERSION, SCHEMA)?;
        let row = client
            .query_opt(
                &format!("DELETE FROM request_states WHERE nonce = $1 RETURNING deadline_ms >= {NOW_MS}"),
                &[&nonce],
            )
            .map_err(self.err())?;
        row.map(|row| row.try_get::<_, bool>(0)).transpose().map(|live| live.unwrap_or(false)).map_err(self.err())
    }
}
