//! The audit log's hash chain in the shared database: one chain every replica appends to.
//!
//! Records are rows of `audit_log` (`seq`, `line`), each line exactly as a file log would
//! hold it (`{"seq":N,"prev":"<sha256 of line N-1>",…}`), so the same check verifies both.
//! `audit_head` is the anchor: the last `seq` and its line's digest. An append takes that
//! row `FOR UPDATE`, chains its records after it, inserts them and moves the anchor, in one
//! transaction: appends from any number of replicas go one after the other, and a replica
//! that dies mid-append leaves nothing behind (no gap, no fork; `seq` is the primary key).
//! Each record carries an id of its writer's (`rid`, unique): a batch sent again after a
//! commit whose outcome was lost (the connection dropped as it committed) skips what landed.

use std::sync::Arc;

use super::{SharedStorage, StorageError};

/// The component name and schema version recorded in `toolbelt_schema`.
const COMPONENT: &str = "audit";
const VERSION: i32 = 2;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS audit_log (
    seq  BIGINT PRIMARY KEY,
    line TEXT NOT NULL,
    rid  TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS audit_head (
    id     SMALLINT PRIMARY KEY CHECK (id = 1),
    seq    BIGINT NOT NULL,
    sha256 TEXT NOT NULL,
    first  BIGINT NOT NULL
);
INSERT INTO audit_head (id, seq, sha256, first) VALUES (1, 0, repeat('0', 64), 0) ON CONFLICT (id) DO NOTHING;
-- Version 1 had no record ids.
ALTER TABLE audit_log ADD COLUMN IF NOT EXISTS rid TEXT UNIQUE;
";

/// How long an append waits for another replica's append.
const LOCK_TIMEOUT: &str = "10s";

/// How many rows a verification reads at a time.
const PAGE: i64 = 5_000;

/// The table, as messages name it.
pub const AUDIT_TABLE: &str = "audit_log";

/// Makes the line of the record after `seq` (whose line's digest is `prev`) from a body.
pub type ChainLine = fn(u64, &str, &[u8]) -> Vec<u8>;

/// Where the chain stands: the anchor row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainHead {
    /// The last record's `seq` (0 before the first).
    pub seq: u64,
    /// Its line's SHA-256.
    pub sha256: String,
    /// The `seq` of the first record kept (0 before the first).
    pub first: u64,
}

/// The audit chain in a shared database.
#[derive(Debug, Clone)]
pub struct AuditChain {
    shared: Arc<SharedStorage>,
}

impl AuditChain {
    /// The chain in `shared`.
    pub fn new(shared: Arc<SharedStorage>) -> Self {
        Self { shared }
    }

    /// The database, for messages.
    pub fn server(&self) -> &str {
        self.shared.server()
    }

    /// Appends the records `(id, body)`, in order, after whatever any replica appended last;
    /// `line` forms each line. A record whose id is already in the chain (sent before, its
    /// commit's answer lost) is not appended again. Returns how many were appended. Blocking:
    /// run it on a thread of its own.
    pub fn append(&self, records: &[(String, Vec<u8>)], line: ChainLine) -> Result<usize, StorageError> {
        let shared = &*self.shared;
        let err = |e: postgres::Error| shared.error(&e);
        let mut client = shared.client(COMPONENT, VERSION, SCHEMA)?;
        let mut tx = client.transaction().map_err(err)?;
        tx.batch_execute(&format!(
            "SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'; SET LOCAL idle_in_transaction_session_timeout = '{LOCK_TIMEOUT}'"
        ))
        .map_err(err)?;
        let row =
            tx.query_one("SELECT seq, sha256, first FROM audit_head WHERE id = 1 FOR UPDATE", &[]).map_err(err)?;
        let head = head_of(shared, &row)?;
        let ids: Vec<&str> = records.iter().map(|(id, _)| id.as_str()).collect();
        let landed: std::collections::HashSet<String> = tx
            .query("SELECT rid FROM audit_log WHERE rid = ANY($1)", &[&ids])
            .map_err(err)?
            .iter()
            .filter_map(|row| row.try_get(0).ok())
            .collect();
        let (mut seq, mut sha) = (head.seq, head.sha256);
        let mut seqs: Vec<i64> = Vec::with_capacity(records.len());
        let mut lines: Vec<String> = Vec::with_capacity(records.len());
        let mut rids: Vec<&str> = Vec::with_capacity(records.len());
        for (id, body) in records.iter().filter(|(id, _)| !landed.contains(id)) {
            let text = String::from_utf8(line(seq, &sha, body))
                .map_err(|_| shared.damaged("an audit record is not UTF-8".to_string()))?;
            sha = toolbelt_core::sha256_hex(text.as_bytes());
            seq += 1;
            seqs.push(i64::try_from(seq).unwrap_or(i64::MAX));
            lines.push(text);
            rids.push(id);
        }
        if lines.is_empty() {
            return Ok(0);
        }
        tx.execute(
            "INSERT INTO audit_log (seq, line, rid) SELECT * FROM unnest($1::BIGINT[], $2::TEXT[], $3::TEXT[])",
            &[&seqs, &lines, &rids],
        )
        .map_err(err)?;
        let first = if head.first == 0 { head.seq + 1 } else { head.first };
        let (last, first) = (i64::try_from(seq).unwrap_or(i64::MAX), i64::try_from(first).unwrap_or(i64::MAX));
        tx.execute("UPDATE audit_head SET seq = $1, sha256 = $2, first = $3 WHERE id = 1", &[&last, &sha, &first])
            .map_err(err)?;
        tx.commit().map_err(err)?;
        Ok(lines.len())
    }

    /// Reads the chain in one snapshot: the anchor, handed to `head`, then every line oldest
    /// first, each handed to `visit` (which returns `false` to stop). Blocking.
    pub fn read(
        &self,
        head: &mut dyn FnMut(ChainHead),
        visit: &mut dyn FnMut(&str) -> bool,
    ) -> Result<(), StorageError> {
        let shared = &*self.shared;
        let err = |e: postgres::Error| shared.error(&e);
        let mut client = shared.client(COMPONENT, VERSION, SCHEMA)?;
        let mut tx = client
            .build_transaction()
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .map_err(err)?;
        let row = tx.query_one("SELECT seq, sha256, first FROM audit_head WHERE id = 1", &[]).map_err(err)?;
        head(head_of(shared, &row)?);
        let mut after: i64 = -1;
        loop {
            let rows = tx
                .query("SELECT seq, line FROM audit_log WHERE seq > $1 ORDER BY seq LIMIT $2", &[&after, &PAGE])
                .map_err(err)?;
            for row in &rows {
                after = row.try_get(0).map_err(err)?;
                let line: &str = row.try_get(1).map_err(err)?;
                if !visit(line) {
                    return Ok(());
                }
            }
            if rows.len() < usize::try_from(PAGE).unwrap_or(usize::MAX) {
                return Ok(());
            }
        }
    }
}

fn head_of(shared: &SharedStorage, row: &postgres::Row) -> Result<ChainHead, StorageError> {
    let damaged = |e: postgres::Error| shared.damaged(format!("audit_head is not toolbelt's ({e})"));
    let seq: i64 = row.try_get(0).map_err(damaged)?;
    let sha256: String = row.try_get(1).map_err(damaged)?;
    let first: i64 = row.try_get(2).map_err(damaged)?;
    let unsigned = |n: i64| u64::try_from(n).map_err(|_| shared.damaged(format!("audit_head holds {n}")));
    Ok(ChainHead { seq: unsigned(seq)?, sha256, first: unsigned(first)? })
}
