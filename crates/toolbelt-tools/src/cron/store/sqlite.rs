//! The job store in SQLite: a file in the project's state directory, or memory.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use rusqlite::{Connection, OptionalExtension as _, params};
use toolbelt_core::{JobAction, RunStatus, Schedule};

use super::error::sql_error;
use super::{
    BUSY_TIMEOUT, JobRow, KEPT_RUNS, ORPHAN_RUNS_KEPT_MS, RunRow, SCHEMA, SCHEMA_VERSION, StoreError, cap, parse_status,
};
use crate::sqlite::{self, FileError, MigrateError};

/// One job database in SQLite.
#[derive(Debug)]
pub(super) struct SqliteJobs {
    path: PathBuf,
    conn: Mutex<Connection>,
}

impl SqliteJobs {
    /// The durable store at `path`, created (owner-only) when missing.
    pub(super) fn open(path: &Path) -> Result<SqliteJobs, StoreError> {
        let io = |source| StoreError::Io { path: path.to_path_buf(), source };
        match sqlite::prepare_file(path, true) {
            Ok(_) => {}
            Err(FileError::Io { source, .. }) => return Err(io(source)),
            Err(FileError::NotAFile) => {
                return Err(StoreError::Unusable { path: path.into(), detail: "it is not a regular file".into() });
            }
        }
        let mut conn = Connection::open(path).map_err(|e| sql_error(path, e))?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(|e| sql_error(path, e))?;
        sqlite::use_wal(&conn, BUSY_TIMEOUT).map_err(|e| sql_error(path, e))?;
        Self::migrate(path, &mut conn)?;
        let store = SqliteJobs { path: path.to_path_buf(), conn: Mutex::new(conn) };
        store.prune_orphans(sqlite::now_ms())?;
        Ok(store)
    }

    /// A store in memory, for session jobs.
    pub(super) fn in_memory() -> Result<SqliteJobs, StoreError> {
        let path = PathBuf::from(":memory:");
        let mut conn = Connection::open_in_memory().map_err(|e| sql_error(&path, e))?;
        Self::migrate(&path, &mut conn)?;
        Ok(SqliteJobs { path, conn: Mutex::new(conn) })
    }

    fn migrate(path: &Path, conn: &mut Connection) -> Result<(), StoreError> {
        sqlite::migrate(conn, SCHEMA, SCHEMA_VERSION).map_err(|e| match e {
            MigrateError::Sql(e) => sql_error(path, e),
            MigrateError::Newer(v) => StoreError::Unusable {
                path: path.into(),
                detail: format!("schema version {v}, newer than this toolbelt knows; use a newer toolbelt"),
            },
            MigrateError::Foreign(detail) => StoreError::Unusable { path: path.into(), detail },
        })
    }

    /// The file (`:memory:` for session jobs).
    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn err(&self) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        |e| sql_error(&self.path, e)
    }

    /// Adds a job; `false` when its id is taken.
    pub(super) fn insert(&self, job: &JobRow) -> Result<bool, StoreError> {
        let schedule = serde_json::to_string(&job.schedule).unwrap_or_default();
        let action = serde_json::to_string(&job.action).unwrap_or_default();
        let n = self
            .conn()
            .execute(
                "INSERT OR IGNORE INTO jobs (id, name, owner, schedule, action, recurring, enabled, created_ms, \
                 expires_ms, next_ms, runs) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                params![
                    job.id,
                    job.name,
                    job.owner,
                    schedule,
                    action,
                    job.recurring,
                    job.enabled,
                    job.created_ms,
                    job.expires_ms,
                    job.next_ms,
                    job.runs
                ],
            )
            .map_err(self.err())?;
        Ok(n == 1)
    }

    /// Every job, soonest first (those that will not fire last).
    pub(super) fn list(&self) -> Result<Vec<JobRow>, StoreError> {
        self.select("ORDER BY next_ms IS NULL, next_ms, created_ms", params![])
    }

    /// The job with id `id`, else the one named `id`.
    pub(super) fn find(&self, id: &str) -> Result<Option<JobRow>, StoreError> {
        let mut found = self.select("WHERE id = ?1 OR name = ?1 ORDER BY id = ?1 DESC, created_ms", params![id])?;
        Ok((!found.is_empty()).then(|| found.remove(0)))
    }

    /// [`SqliteJobs::find`] among the jobs of `owner` only.
    pub(super) fn find_owned(&self, id: &str, owner: &str) -> Result<Option<JobRow>, StoreError> {
        let mut found = self.select(
            "WHERE (id = ?1 OR name = ?1) AND owner = ?2 ORDER BY id = ?1 DESC, created_ms",
            params![id, owner],
        )?;
        Ok((!found.is_empty()).then(|| found.remove(0)))
    }

    /// Deletes the jobs past their expiry at `now_ms` (paused ones: a running one is deleted
    /// when it fires its last time); how many.
    pub(super) fn purge_expired(&self, now_ms: i64) -> Result<usize, StoreError> {
        self.conn()
            .execute("DELETE FROM jobs WHERE expires_ms IS NOT NULL AND expires_ms < ?1", [now_ms])
            .map_err(self.err())
    }

    /// The enabled jobs due at `now_ms`.
    pub(super) fn due(&self, now_ms: i64) -> Result<Vec<JobRow>, StoreError> {
        self.select("WHERE enabled = 1 AND next_ms IS NOT NULL AND next_ms <= ?1 ORDER BY next_ms", params![now_ms])
    }

    /// When the next enabled job is due.
    pub(super) fn next_due(&self) -> Result<Option<i64>, StoreError> {
        self.conn().query_row("SELECT min(next_ms) FROM jobs WHERE enabled = 1", [], |r| r.get(0)).map_err(self.err())
    }

    fn select<P: rusqlite::Params>(&self, tail: &str, params: P) -> Result<Vec<JobRow>, StoreError> {
        let conn = self.conn();
        let sql = format!(
            "SELECT id, name, owner, schedule, action, recurring, enabled, created_ms, expires_ms, next_ms, runs \
             FROM jobs {tail}"
        );
        let mut stmt = conn.prepare(&sql).map_err(self.err())?;
        let rows = stmt
            .query_map(params, |r| {
                Ok((
                    JobRow {
                        id: r.get(0)?,
                        name: r.get(1)?,
                        owner: r.get(2)?,
                        schedule: Schedule::Every { seconds: 0 },
                        action: JobAction::Prompt { prompt: String::new() },
                        recurring: r.get(5)?,
                        enabled: r.get(6)?,
                        created_ms: r.get(7)?,
                        expires_ms: r.get(8)?,
                        next_ms: r.get(9)?,
                        runs: r.get(10)?,
                    },
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                ))
            })
            .map_err(self.err())?;
        let mut out = Vec::new();
        for row in rows {
            let (mut job, schedule, action) = row.map_err(self.err())?;
            // A row this version cannot read (a newer toolbelt's) is left alone, not fatal to
            // the others: it neither fires nor lists here.
            match (serde_json::from_str(&schedule), serde_json::from_str(&action)) {
                (Ok(schedule), Ok(action)) => {
                    job.schedule = schedule;
                    job.action = action;
                    out.push(job);
                }
                _ => {
                    tracing::warn!(job = %job.id, store = %self.path.display(), "a job this version cannot read is skipped")
                }
            }
        }
        Ok(out)
    }

    /// Deletes the job `id`; `false` when there was none.
    pub(super) fn delete(&self, id: &str) -> Result<bool, StoreError> {
        Ok(self.conn().execute("DELETE FROM jobs WHERE id = ?1", [id]).map_err(self.err())? == 1)
    }

    /// Pauses or resumes the job `id`, with its next firing.
    pub(super) fn set_enabled(&self, id: &str, enabled: bool, next_ms: Option<i64>) -> Result<bool, StoreError> {
        let n = self
            .conn()
            .execute("UPDATE jobs SET enabled = ?2, next_ms = ?3 WHERE id = ?1", params![id, enabled, next_ms])
            .map_err(self.err())?;
        Ok(n == 1)
    }

    /// Claims the firing of `job` at its slot (`job.next_ms`) for this process: moves its next
    /// firing to `next_ms`, or, when `None`, deletes it (a one-shot, an expired job). When
    /// `start` and no earlier run of the job is still running, records in the same
    /// transaction that a run starts now for `reason`. `None` when another process (or an
    /// earlier tick) claimed the slot first, or the job was paused meanwhile; else the
    /// started run's number, if one started.
    pub(super) fn claim(
        &self,
        job: &JobRow,
        next_ms: Option<i64>,
        start: Option<(&str, i64)>,
    ) -> Result<Option<Option<i64>>, StoreError> {
        let Some(slot) = job.next_ms else { return Ok(None) };
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).map_err(self.err())?;
        let claimed = match next_ms {
            Some(next) => tx.execute(
                "UPDATE jobs SET next_ms = ?3 WHERE id = ?1 AND next_ms = ?2 AND enabled = 1",
                params![job.id, slot, next],
            ),
            None => {
                tx.execute("DELETE FROM jobs WHERE id = ?1 AND next_ms = ?2 AND enabled = 1", params![job.id, slot])
            }
        }
        .map_err(self.err())?;
        if claimed != 1 {
            return Ok(None);
        }
        let busy: bool = tx
            .query_row("SELECT count(*) > 0 FROM runs WHERE job_id = ?1 AND status = 'running'", [&job.id], |r| {
                r.get(0)
            })
            .map_err(self.err())?;
        let seq = match start {
            Some((reason, now_ms)) if !busy => Some(insert_run(&tx, job, reason, now_ms).map_err(self.err())?),
            _ => None,
        };
        tx.commit().map_err(self.err())?;
        Ok(Some(seq))
    }

    /// Records that a run of `job` starts now (`now_ms`) for `reason`; its number.
    pub(super) fn start_run(&self, job: &JobRow, reason: &str, now_ms: i64) -> Result<i64, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).map_err(self.err())?;
        let seq = insert_run(&tx, job, reason, now_ms).map_err(self.err())?;
        tx.commit().map_err(self.err())?;
        Ok(seq)
    }

    /// Records how run `seq` of job `job_id` ended; the output is cut to [`OUTPUT_CAP`].
    pub(super) fn end_run(
        &self,
        job_id: &str,
        seq: i64,
        status: RunStatus,
        output: &str,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        let (kept, truncated) = cap(output);
        self.conn()
            .execute(
                "UPDATE runs SET ended_ms = ?3, status = ?4, output = ?5, truncated = ?6 WHERE job_id = ?1 AND seq = ?2",
                params![job_id, seq, now_ms, status.as_str(), kept, truncated],
            )
            .map_err(self.err())?;
        Ok(())
    }

    /// Run `seq` of job `job_id`, or its latest when `seq` is `None`.
    pub(super) fn run(&self, job_id: &str, seq: Option<i64>) -> Result<Option<RunRow>, StoreError> {
        let conn = self.conn();
        let sql = "SELECT job_id, seq, job_name, started_ms, ended_ms, status, output, truncated, reason FROM runs \
                   WHERE job_id = ?1 AND (?2 IS NULL OR seq = ?2) ORDER BY seq DESC LIMIT 1";
        conn.query_row(sql, params![job_id, seq], |r| {
            let status: String = r.get(5)?;
            Ok(RunRow {
                job_id: r.get(0)?,
                seq: r.get(1)?,
                job_name: r.get(2)?,
                started_ms: r.get(3)?,
                ended_ms: r.get(4)?,
                status: parse_status(&status),
                output: r.get(6)?,
                truncated: r.get(7)?,
                reason: r.get(8)?,
            })
        })
        .optional()
        .map_err(self.err())
    }

    /// Marks as interrupted the runs left `running` by processes that are gone.
    pub(super) fn mark_interrupted(&self, now_ms: i64) -> Result<usize, StoreError> {
        let conn = self.conn();
        let mut stmt =
            conn.prepare("SELECT job_id, seq, pid FROM runs WHERE status = 'running'").map_err(self.err())?;
        let running: Vec<(String, i64, i64)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(self.err())?
            .filter_map(Result::ok)
            .collect();
        let mut n = 0;
        for (job, seq, pid) in running {
            if Path::new(&format!("/proc/{pid}")).exists() {
                continue;
            }
            n += conn
                .execute(
                    "UPDATE runs SET status = 'interrupted', ended_ms = ?3, output = output || ?4 WHERE job_id = ?1 AND \
                     seq = ?2",
                    params![job, seq, now_ms, "[the process running it stopped before it finished]"],
                )
                .map_err(self.err())?;
        }
        Ok(n)
    }

    fn prune_orphans(&self, now_ms: i64) -> Result<(), StoreError> {
        self.conn()
            .execute(
                "DELETE FROM runs WHERE job_id NOT IN (SELECT id FROM jobs) AND started_ms < ?1",
                [now_ms - ORPHAN_RUNS_KEPT_MS],
            )
            .map_err(self.err())?;
        Ok(())
    }
}

/// Records in `tx` that a run of `job` starts at `now_ms` for `reason`, dropping runs beyond
/// the last [`KEPT_RUNS`]; its number.
fn insert_run(tx: &rusqlite::Transaction<'_>, job: &JobRow, reason: &str, now_ms: i64) -> Result<i64, rusqlite::Error> {
    let seq: i64 =
        tx.query_row("SELECT coalesce(max(seq), 0) + 1 FROM runs WHERE job_id = ?1", [&job.id], |r| r.get(0))?;
    // A one-shot already gone from `jobs` keeps numbering from what it had run.
    let seq = seq.max(job.runs + 1);
    tx.execute(
        "INSERT INTO runs (job_id, seq, job_name, started_ms, status, reason, pid) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![job.id, seq, job.name, now_ms, RunStatus::Running.as_str(), reason, std::process::id()],
    )?;
    tx.execute("UPDATE jobs SET runs = runs + 1 WHERE id = ?1", [&job.id])?;
    tx.execute("DELETE FROM runs WHERE job_id = ?1 AND seq <= ?2 - ?3", params![job.id, seq, KEPT_RUNS])?;
    Ok(seq)
}
