//! Where jobs and their runs are kept: one SQLite database, either a file in the project's
//! state directory (durable jobs, shared by every toolbelt process of the project) or in
//! memory (a process's session jobs), with the same schema and queries for both; or, on a
//! team (`storage.url`), the durable jobs in the PostgreSQL database every replica shares
//! ([`postgres`]), so a job fires once whichever replica is up.
//!
//! Several processes may serve one project's durable jobs (`toolbelt mcp` for each host,
//! `toolbelt cron serve`). A firing is *claimed* before it runs: one `UPDATE … WHERE
//! next_ms = <the slot>` (or, for a one-shot, a `DELETE`) that only one of them can win, so a
//! slot runs once whoever is up. The file is the owner's only, in WAL mode, and every
//! connection waits up to [`BUSY_TIMEOUT`] for another process's write.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use toolbelt_core::{JobAction, RunStatus, Schedule};

use crate::storage::SharedStorage;

mod error;
mod heart;
mod pg_schema;
mod postgres;
mod sqlite;

pub use error::StoreError;

/// How long an operation waits for another process's transaction on the jobs to end.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The durable jobs' file name, in the project's state directory.
pub const FILE_NAME: &str = "jobs.db";

/// The runs kept per job: older ones are dropped.
pub const KEPT_RUNS: i64 = 20;

/// The most output a run keeps, in bytes.
pub const OUTPUT_CAP: usize = 16 * 1024;

/// How long the runs of a deleted job stay readable (a one-shot deletes itself as it runs).
pub(crate) const ORPHAN_RUNS_KEPT_MS: i64 = 7 * 24 * 3600 * 1000;

pub(crate) const SCHEMA_VERSION: i64 = 1;

pub(crate) const SCHEMA: &str = "
CREATE TABLE jobs (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    owner      TEXT NOT NULL,
    schedule   TEXT NOT NULL,
    action     TEXT NOT NULL,
    recurring  INTEGER NOT NULL,
    enabled    INTEGER NOT NULL,
    created_ms INTEGER NOT NULL,
    expires_ms INTEGER,
    next_ms    INTEGER,
    runs       INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX jobs_by_next ON jobs (next_ms) WHERE enabled = 1;
CREATE TABLE runs (
    job_id     TEXT NOT NULL,
    seq        INTEGER NOT NULL,
    job_name   TEXT NOT NULL,
    started_ms INTEGER NOT NULL,
    ended_ms   INTEGER,
    status     TEXT NOT NULL,
    output     TEXT NOT NULL DEFAULT '',
    truncated  INTEGER NOT NULL DEFAULT 0,
    reason     TEXT NOT NULL,
    pid        INTEGER NOT NULL,
    PRIMARY KEY (job_id, seq)
) WITHOUT ROWID;
";

/// A job as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct JobRow {
    /// `job_` and 8 hex digits.
    pub id: String,
    /// Its name.
    pub name: String,
    /// The session that created it.
    pub owner: String,
    /// When it fires.
    pub schedule: Schedule,
    /// What it does.
    pub action: JobAction,
    /// Fires on every match, or once.
    pub recurring: bool,
    /// Paused jobs do not fire.
    pub enabled: bool,
    /// Milliseconds since the epoch.
    pub created_ms: i64,
    /// When a recurring job is deleted; `None`: never.
    pub expires_ms: Option<i64>,
    /// When it fires next (jitter included); `None`: it will not.
    pub next_ms: Option<i64>,
    /// How many runs it has started.
    pub runs: i64,
}

/// One run as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRow {
    /// The job's id.
    pub job_id: String,
    /// The run's number, from 1.
    pub seq: i64,
    /// The job's name when it ran.
    pub job_name: String,
    /// Milliseconds since the epoch.
    pub started_ms: i64,
    /// Once it ended.
    pub ended_ms: Option<i64>,
    /// How it went.
    pub status: RunStatus,
    /// What it returned, capped at [`OUTPUT_CAP`].
    pub output: String,
    /// The output was cut.
    pub truncated: bool,
    /// Why it started.
    pub reason: String,
}

impl RunRow {
    /// The run's id: `job_….N`.
    pub fn run_id(&self) -> String {
        format!("{}.{}", self.job_id, self.seq)
    }
}

/// One job store: an SQLite database (a file, or memory), or the PostgreSQL database a
/// team's replicas share.
#[derive(Debug)]
pub struct JobStore {
    backend: Backend,
}

#[derive(Debug)]
enum Backend {
    Sqlite(sqlite::SqliteJobs),
    Postgres(postgres::PgJobs),
}

impl JobStore {
    /// The durable store at `path`, created (owner-only) when missing.
    pub fn open(path: &Path) -> Result<JobStore, StoreError> {
        Ok(JobStore { backend: Backend::Sqlite(sqlite::SqliteJobs::open(path)?) })
    }

    /// A store in memory, for session jobs.
    pub fn in_memory() -> Result<JobStore, StoreError> {
        Ok(JobStore { backend: Backend::Sqlite(sqlite::SqliteJobs::in_memory()?) })
    }

    /// The durable jobs of project `project` (the name of its state directory, the same on
    /// every machine serving it from the same path) in `shared`, run by this process as
    /// `holder` (which names the machine).
    pub fn shared(shared: Arc<SharedStorage>, project: String, holder: &str) -> JobStore {
        JobStore { backend: Backend::Postgres(postgres::PgJobs::new(shared, project, holder)) }
    }

    /// Where the jobs are: the file (`:memory:` for session jobs), or the database.
    pub fn place(&self) -> String {
        match &self.backend {
            Backend::Sqlite(s) => s.path().display().to_string(),
            Backend::Postgres(p) => p.place(),
        }
    }

    /// Adds a job; `false` when its id is taken.
    pub fn insert(&self, job: &JobRow) -> Result<bool, StoreError> {
        match &self.backend {
            Backend::Sqlite(s) => s.insert(job),
            Backend::Postgres(p) => p.insert(job),
        }
    }

    /// Every job, soonest first (those that will not fire last).
    pub fn list(&self) -> Result<Vec<JobRow>, StoreError> {
        match &self.backend {
            Backend::Sqlite(s) => s.list(),
            Backend::Postgres(p) => p.list(),
        }
    }

    /// The job with id `id`, else the one named `id`.
    pub fn find(&self, id: &str) -> Result<Option<JobRow>, StoreError> {
        match &self.backend {
            Backend::Sqlite(s) => s.find(id),
            Backend::Postgres(p) => p.find(id),
        }
    }

    /// [`JobStore::find`] among the jobs of `owner` only.
    pub fn find_owned(&self, id: &str, owner: &str) -> Result<Option<JobRow>, StoreError> {
        match &self.backend {
            Backend::Sqlite(s) => s.find_owned(id, owner),
            Backend::Postgres(p) => p.find_owned(id, owner),
        }
    }

    /// Deletes the jobs past their expiry at `now_ms` (paused ones: a running one is deleted
    /// when it fires its last time); how many.
    pub fn purge_expired(&self, now_ms: i64) -> Result<usize, StoreError> {
        match &self.backend {
            Backend::Sqlite(s) => s.purge_expired(now_ms),
            Backend::Postgres(p) => p.purge_expired(now_ms),
        }
    }

    /// The enabled jobs due at `now_ms`.
    pub fn due(&self, now_ms: i64) -> Result<Vec<JobRow>, StoreError> {
        match &self.backend {
            Backend::Sqlite(s) => s.due(now_ms),
            Backend::Postgres(p) => p.due(now_ms),
        }
    }

    /// When the next enabled job is due.
    pub fn next_due(&self) -> Result<Option<i64>, StoreError> {
        match &self.backend {
            Backend::Sqlite(s) => s.next_due(),
            Backend::Postgres(p) => p.next_due(),
        }
    }

    /// Deletes the job `id`; `false` when there was none.
    pub fn delete(&self, id: &str) -> Result<bool, StoreError> {
        match &self.backend {
            Backend::Sqlite(s) => s.delete(id),
            Backend::Postgres(p) => p.delete(id),
        }
    }

    /// Pauses or resumes the job `id`, with its next firing.
    pub fn set_enabled(&self, id: &str, enabled: bool, next_ms: Option<i64>) -> Result<bool, StoreError> {
        match &self.backend {
            Backend::Sqlite(s) => s.set_enabled(id, enabled, next_ms),
            Backend::Postgres(p) => p.set_enabled(id, enabled, next_ms),
        }
    }

    /// Claims the firing of `job` at its slot (`job.next_ms`) for this process: moves its next
    /// firing to `next_ms`, or, when `None`, deletes it (a one-shot, an expired job). When
    /// `start` and no earlier run of the job is still running, records in the same
    /// transaction that a run starts now for `reason`. `None` when another process (or an
    /// earlier tick) claimed the slot first, or the job was paused meanwhile; else the
    /// started run's number, if one started.
    pub fn claim(
        &self,
        job: &JobRow,
        next_ms: Option<i64>,
        start: Option<(&str, i64)>,
    ) -> Result<Option<Option<i64>>, StoreError> {
        match &self.backend {
            Backend::Sqlite(s) => s.claim(job, next_ms, start),
            Backend::Postgres(p) => p.claim(job, next_ms, start),
        }
    }

    /// Records that a run of `job` starts now (`now_ms`) for `reason`; its number.
    pub fn start_run(&self, job: &JobRow, reason: &str, now_ms: i64) -> Result<i64, StoreError> {
        match &self.backend {
            Backend::Sqlite(s) => s.start_run(job, reason, now_ms),
            Backend::Postgres(p) => p.start_run(job, reason, now_ms),
        }
    }

    /// Records how run `seq` of job `job_id` ended; the output is cut to [`OUTPUT_CAP`].
    pub fn end_run(
        &self,
        job_id: &str,
        seq: i64,
        status: RunStatus,
        output: &str,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        match &self.backend {
            Backend::Sqlite(s) => s.end_run(job_id, seq, status, output, now_ms),
            Backend::Postgres(p) => p.end_run(job_id, seq, status, output, now_ms),
        }
    }

    /// Run `seq` of job `job_id`, or its latest when `seq` is `None`.
    pub fn run(&self, job_id: &str, seq: Option<i64>) -> Result<Option<RunRow>, StoreError> {
        match &self.backend {
            Backend::Sqlite(s) => s.run(job_id, seq),
            Backend::Postgres(p) => p.run(job_id, seq),
        }
    }

    /// Marks as interrupted the runs left `running` by processes that are gone (on shared
    /// storage: by processes, on any machine, that stopped saying they are alive).
    pub fn mark_interrupted(&self, now_ms: i64) -> Result<usize, StoreError> {
        match &self.backend {
            Backend::Sqlite(s) => s.mark_interrupted(now_ms),
            Backend::Postgres(p) => p.mark_interrupted(now_ms),
        }
    }
}

/// `output` cut to [`OUTPUT_CAP`] bytes at a character boundary, and whether it was.
pub(super) fn cap(output: &str) -> (&str, bool) {
    if output.len() <= OUTPUT_CAP {
        return (output, false);
    }
    let mut end = OUTPUT_CAP;
    while !output.is_char_boundary(end) {
        end -= 1;
    }
    (&output[..end], true)
}

pub(super) fn parse_status(s: &str) -> RunStatus {
    match s {
        "running" => RunStatus::Running,
        "completed" => RunStatus::Completed,
        "failed" => RunStatus::Failed,
        _ => RunStatus::Interrupted,
    }
}

#[cfg(test)]
mod tests;
