//! A project's durable jobs in the PostgreSQL database a team's replicas share: every replica
//! serving the project sees the same jobs, and each firing runs once whichever is up.
//!
//! * **Claims** are the SQLite store's: one `UPDATE … WHERE next_ms = <the slot>` (or a
//!   `DELETE` for a one-shot) only one replica can win, with the run recorded in the same
//!   transaction.
//! * **Runs left running.** A run names the process running it (its *holder*: the machine,
//!   the process id, a random part). Each holder says it is alive every
//!   [`super::heart::HEARTBEAT`] while it has a run going, by the database's clock. A run
//!   whose holder fell silent for [`SILENT`] (its machine died, or the process was killed) is
//!   marked interrupted by whichever replica looks next, and no longer keeps its job from
//!   firing.
//! * **Blocking.** The driver blocks; called on a thread that drives an async runtime (the
//!   scheduler's clock), a statement runs on a thread of its own meanwhile, as the SQLite
//!   store's statements block that thread.

use std::sync::Arc;
use std::time::Duration;

use postgres::types::ToSql;
use toolbelt_core::RunStatus;

use super::heart::Heart;
use super::pg_schema::{COMPONENT, NOW_MS, SCHEMA, VERSION};
use super::{JobRow, KEPT_RUNS, ORPHAN_RUNS_KEPT_MS, RunRow, StoreError, cap, parse_status};
use crate::storage::{PooledClient, SharedStorage, no_nul};

/// How long a holder may be silent before its runs count as interrupted: six heartbeats.
pub const SILENT: Duration = Duration::from_secs(60);

/// How long a claim waits for another replica's change of the same job.
const LOCK_TIMEOUT: &str = "10s";

/// What an interrupted run's output ends with.
const INTERRUPTED: &str = "[the process running it stopped before it finished]";

const COLUMNS: &str = "id, name, owner, schedule, action, recurring, enabled, created_ms, expires_ms, next_ms, runs";

/// A project's durable jobs in shared storage.
pub(super) struct PgJobs {
    shared: Arc<SharedStorage>,
    project: String,
    holder: String,
    heart: Heart,
}

impl std::fmt::Debug for PgJobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgJobs").field("server", &self.shared.server()).field("project", &self.project).finish()
    }
}

impl PgJobs {
    pub(super) fn new(shared: Arc<SharedStorage>, project: String, machine: &str) -> Self {
        let mut random = [0u8; 6];
        let _ = getrandom::fill(&mut random);
        let tag: String = random.iter().map(|b| format!("{b:02x}")).collect();
        let holder = format!("{machine}/{}/{tag}", std::process::id());
        Self { shared, project, holder, heart: Heart::default() }
    }

    /// Where the jobs are, for messages.
    pub(super) fn place(&self) -> String {
        format!("PostgreSQL {}, project {}", self.shared.server(), self.project)
    }

    /// Runs `f` with a connection, off any async runtime's thread.
    fn with<T: Send>(
        &self,
        f: impl FnOnce(&mut PooledClient) -> Result<T, StoreError> + Send,
    ) -> Result<T, StoreError> {
        self.shared.with_client(COMPONENT, VERSION, SCHEMA, f)
    }

    /// A transaction that waits at most [`LOCK_TIMEOUT`] for another replica's on the same
    /// job, and lets go of its locks soon if this process stalls in it.
    fn begin<'c>(&self, c: &'c mut PooledClient) -> Result<postgres::Transaction<'c>, StoreError> {
        let mut tx = c.transaction().map_err(self.err())?;
        tx.batch_execute(&format!(
            "SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'; SET LOCAL idle_in_transaction_session_timeout = '{LOCK_TIMEOUT}'"
        ))
        .map_err(self.err())?;
        Ok(tx)
    }

    fn err(&self) -> impl Fn(postgres::Error) -> StoreError + '_ {
        |e| StoreError::Shared(self.shared.error(&e))
    }

    /// Says this process is alive now, and from now on every [`HEARTBEAT`] while the store
    /// lives (started with its first run).
    fn beat(&self, client: &mut PooledClient) -> Result<(), StoreError> {
        client
            .execute(
                &format!(
                    "INSERT INTO cron_holders (holder, seen_ms) VALUES ($1, {NOW_MS}) \
                     ON CONFLICT (holder) DO UPDATE SET seen_ms = EXCLUDED.seen_ms"
                ),
                &[&self.holder],
            )
            .map_err(self.err())?;
        self.heart.start(&self.shared, &self.holder);
        Ok(())
    }

    /// Marks interrupted the runs (of `job`, or of every job) whose holder fell silent; how
    /// many.
    fn interrupt_silent(
        &self,
        client: &mut impl postgres::GenericClient,
        job: Option<&str>,
    ) -> Result<usize, StoreError> {
        let silent_ms = i64::try_from(SILENT.as_millis()).unwrap_or(i64::MAX);
        let n = client
            .execute(
                &format!(
                    "UPDATE cron_runs SET status = 'interrupted', ended_ms = {NOW_MS}, output = output || $4 \
                     WHERE project = $1 AND status = 'running' AND ($2::TEXT IS NULL OR job_id = $2) \
                     AND holder NOT IN (SELECT holder FROM cron_holders WHERE seen_ms > {NOW_MS} - $3)"
                ),
                &[&self.project, &job, &silent_ms, &INTERRUPTED],
            )
            .map_err(self.err())?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    pub(super) fn insert(&self, job: &JobRow) -> Result<bool, StoreError> {
        let schedule = serde_json::to_string(&job.schedule).unwrap_or_default();
        let action = serde_json::to_string(&job.action).unwrap_or_default();
        let (name, owner) = (no_nul(&job.name), no_nul(&job.owner));
        self.with(|c| {
            let params: [&(dyn ToSql + Sync); 12] = [
                &self.project,
                &job.id,
                &name,
                &owner,
                &schedule,
                &action,
                &job.recurring,
                &job.enabled,
                &job.created_ms,
                &job.expires_ms,
                &job.next_ms,
                &job.runs,
            ];
            let n = c
                .execute(
                    &format!(
                        "INSERT INTO cron_jobs (project, {COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, \
                         $11, $12) ON CONFLICT (project, id) DO NOTHING"
                    ),
                    &params,
                )
                .map_err(self.err())?;
            Ok(n == 1)
        })
    }

    pub(super) fn list(&self) -> Result<Vec<JobRow>, StoreError> {
        self.select("ORDER BY next_ms IS NULL, next_ms, created_ms", &[])
    }

    pub(super) fn find(&self, id: &str) -> Result<Option<JobRow>, StoreError> {
        let mut found = self.select("AND (id = $2 OR name = $2) ORDER BY id = $2 DESC, created_ms", &[&id])?;
        Ok((!found.is_empty()).then(|| found.remove(0)))
    }

    pub(super) fn find_owned(&self, id: &str, owner: &str) -> Result<Option<JobRow>, StoreError> {
        let mut found =
            self.select("AND (id = $2 OR name = $2) AND owner = $3 ORDER BY id = $2 DESC, created_ms", &[&id, &owner])?;
        Ok((!found.is_empty()).then(|| found.remove(0)))
    }

    pub(super) fn purge_expired(&self, now_ms: i64) -> Result<usize, StoreError> {
        self.with(|c| {
            let n = c
                .execute(
                    "DELETE FROM cron_jobs WHERE project = $1 AND expires_ms IS NOT NULL AND expires_ms < $2",
                    &[&self.project, &now_ms],
                )
                .map_err(self.err())?;
            // Runs whose process fell silent end as interrupted, fired again or not.
            self.interrupt_silent(&mut **c, None)?;
            // The runs of jobs gone a week ago.
            c.execute(
                "DELETE FROM cron_runs r WHERE project = $1 AND started_ms < $2 AND NOT EXISTS \
                 (SELECT 1 FROM cron_jobs j WHERE j.project = r.project AND j.id = r.job_id)",
                &[&self.project, &(now_ms - ORPHAN_RUNS_KEPT_MS)],
            )
            .map_err(self.err())?;
            Ok(usize::try_from(n).unwrap_or(usize::MAX))
        })
    }

    pub(super) fn due(&self, now_ms: i64) -> Result<Vec<JobRow>, StoreError> {
        self.select("AND enabled AND next_ms IS NOT NULL AND next_ms <= $2 ORDER BY next_ms", &[&now_ms])
    }

    pub(super) fn next_due(&self) -> Result<Option<i64>, StoreError> {
        self.with(|c| {
            c.query_one("SELECT min(next_ms) FROM cron_jobs WHERE project = $1 AND enabled", &[&self.project])
                .and_then(|row| row.try_get(0))
                .map_err(self.err())
        })
    }

    /// The project's jobs matching `tail` (`$1` is the project; `more` are `$2`…).
    fn select(&self, tail: &str, more: &[&(dyn ToSql + Sync)]) -> Result<Vec<JobRow>, StoreError> {
        let mut params: Vec<&(dyn ToSql + Sync)> = vec![&self.project];
        params.extend_from_slice(more);
        let rows = self.with(|c| {
            c.query(&format!("SELECT {COLUMNS} FROM cron_jobs WHERE project = $1 {tail}"), &params).map_err(self.err())
        })?;
        let mut out = Vec::new();
        for r in rows {
            let read = || -> Result<(JobRow, String, String), postgres::Error> {
                let job = JobRow {
                    id: r.try_get(0)?,
                    name: r.try_get(1)?,
                    owner: r.try_get(2)?,
                    schedule: toolbelt_core::Schedule::Every { seconds: 0 },
                    action: toolbelt_core::JobAction::Prompt { prompt: String::new() },
                    recurring: r.try_get(5)?,
                    enabled: r.try_get(6)?,
                    created_ms: r.try_get(7)?,
                    expires_ms: r.try_get(8)?,
                    next_ms: r.try_get(9)?,
                    runs: r.try_get(10)?,
                };
                Ok((job, r.try_get(3)?, r.try_get(4)?))
            };
            let (mut job, schedule, action) = read().map_err(self.err())?;
            // A row this version cannot read (a newer toolbelt's) neither fires nor lists here.
            match (serde_json::from_str(&schedule), serde_json::from_str(&action)) {
                (Ok(schedule), Ok(action)) => {
                    job.schedule = schedule;
                    job.action = action;
                    out.push(job);
                }
                _ => tracing::warn!(job = %job.id, store = %self.place(), "a job this version cannot read is skipped"),
            }
        }
        Ok(out)
    }

    pub(super) fn delete(&self, id: &str) -> Result<bool, StoreError> {
        self.with(|c| {
            let n = c
                .execute("DELETE FROM cron_jobs WHERE project = $1 AND id = $2", &[&self.project, &id])
                .map_err(self.err())?;
            Ok(n == 1)
        })
    }

    pub(super) fn set_enabled(&self, id: &str, enabled: bool, next_ms: Option<i64>) -> Result<bool, StoreError> {
        self.with(|c| {
            let n = c
                .execute(
                    "UPDATE cron_jobs SET enabled = $3, next_ms = $4 WHERE project = $1 AND id = $2",
                    &[&self.project, &id, &enabled, &next_ms],
                )
                .map_err(self.err())?;
            Ok(n == 1)
        })
    }

    pub(super) fn claim(
        &self,
        job: &JobRow,
        next_ms: Option<i64>,
        start: Option<(&str, i64)>,
    ) -> Result<Option<Option<i64>>, StoreError> {
        let Some(slot) = job.next_ms else { return Ok(None) };
        self.with(|c| {
            if start.is_some() {
                self.beat(c)?;
            }
            let mut tx = self.begin(c)?;
            let claimed = match next_ms {
                Some(next) => tx.execute(
                    "UPDATE cron_jobs SET next_ms = $4 WHERE project = $1 AND id = $2 AND next_ms = $3 AND enabled",
                    &[&self.project, &job.id, &slot, &next],
                ),
                None => tx.execute(
                    "DELETE FROM cron_jobs WHERE project = $1 AND id = $2 AND next_ms = $3 AND enabled",
                    &[&self.project, &job.id, &slot],
                ),
            }
            .map_err(self.err())?;
            if claimed != 1 {
                return Ok(None);
            }
            // A run whose process fell silent keeps nothing from firing.
            self.interrupt_silent(&mut tx, Some(&job.id))?;
            let busy: bool = tx
                .query_one(
                    "SELECT EXISTS (SELECT 1 FROM cron_runs WHERE project = $1 AND job_id = $2 AND status = 'running')",
                    &[&self.project, &job.id],
                )
                .and_then(|row| row.try_get(0))
                .map_err(self.err())?;
            let seq = match start {
                Some((reason, now_ms)) if !busy => Some(self.insert_run(&mut tx, job, reason, now_ms)?),
                _ => None,
            };
            tx.commit().map_err(self.err())?;
            Ok(Some(seq))
        })
    }

    pub(super) fn start_run(&self, job: &JobRow, reason: &str, now_ms: i64) -> Result<i64, StoreError> {
        self.with(|c| {
            self.beat(c)?;
            let mut tx = self.begin(c)?;
            let seq = self.insert_run(&mut tx, job, reason, now_ms)?;
            tx.commit().map_err(self.err())?;
            Ok(seq)
        })
    }

    /// Records in `tx` that a run of `job` starts at `now_ms` for `reason`, dropping runs
    /// beyond the last [`KEPT_RUNS`]; its number.
    fn insert_run(
        &self,
        tx: &mut postgres::Transaction<'_>,
        job: &JobRow,
        reason: &str,
        now_ms: i64,
    ) -> Result<i64, StoreError> {
        let err = self.err();
        // Runs of one job are numbered one after the other, whichever replica starts them. The
        // job's row first (a claim holds it already), then the lock: every path takes them in
        // this order, so a run started by hand and a firing never wait on each other in a ring.
        tx.execute("SELECT 1 FROM cron_jobs WHERE project = $1 AND id = $2 FOR UPDATE", &[&self.project, &job.id])
            .map_err(&err)?;
        tx.execute("SELECT pg_advisory_xact_lock(hashtextextended($1 || '/' || $2, 0))", &[&self.project, &job.id])
            .map_err(&err)?;
        let seq: i64 = tx
            .query_one(
                "SELECT coalesce(max(seq), 0) + 1 FROM cron_runs WHERE project = $1 AND job_id = $2",
                &[&self.project, &job.id],
            )
            .and_then(|row| row.try_get(0))
            .map_err(&err)?;
        // A one-shot already gone from the jobs keeps numbering from what it had run.
        let seq = seq.max(job.runs + 1);
        let (name, reason) = (no_nul(&job.name), no_nul(reason));
        let params: [&(dyn ToSql + Sync); 8] =
            [&self.project, &job.id, &seq, &name, &now_ms, &RunStatus::Running.as_str(), &reason, &self.holder];
        tx.execute(
            "INSERT INTO cron_runs (project, job_id, seq, job_name, started_ms, status, reason, holder) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            &params,
        )
        .map_err(&err)?;
        tx.execute("UPDATE cron_jobs SET runs = runs + 1 WHERE project = $1 AND id = $2", &[&self.project, &job.id])
            .map_err(&err)?;
        tx.execute(
            "DELETE FROM cron_runs WHERE project = $1 AND job_id = $2 AND seq <= $3::BIGINT - $4::BIGINT",
            &[&self.project, &job.id, &seq, &KEPT_RUNS],
        )
        .map_err(&err)?;
        Ok(seq)
    }

    pub(super) fn end_run(
        &self,
        job_id: &str,
        seq: i64,
        status: RunStatus,
        output: &str,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        // PostgreSQL's text holds no NUL; replaced before the cut, so the cut holds.
        let clean = no_nul(output);
        let (kept, truncated) = cap(&clean);
        self.with(|c| {
            let params: [&(dyn ToSql + Sync); 7] =
                [&self.project, &job_id, &seq, &now_ms, &status.as_str(), &kept, &truncated];
            c.execute(
                "UPDATE cron_runs SET ended_ms = $4, status = $5, output = $6, truncated = $7 \
                 WHERE project = $1 AND job_id = $2 AND seq = $3",
                &params,
            )
            .map(drop)
            .map_err(self.err())
        })
    }

    pub(super) fn run(&self, job_id: &str, seq: Option<i64>) -> Result<Option<RunRow>, StoreError> {
        let row = self.with(|c| {
            c.query_opt(
                "SELECT job_id, seq, job_name, started_ms, ended_ms, status, output, truncated, reason FROM cron_runs \
                 WHERE project = $1 AND job_id = $2 AND ($3::BIGINT IS NULL OR seq = $3) ORDER BY seq DESC LIMIT 1",
                &[&self.project, &job_id, &seq],
            )
            .map_err(self.err())
        })?;
        let Some(r) = row else { return Ok(None) };
        let read = || -> Result<RunRow, postgres::Error> {
            let status: String = r.try_get(5)?;
            Ok(RunRow {
                job_id: r.try_get(0)?,
                seq: r.try_get(1)?,
                job_name: r.try_get(2)?,
                started_ms: r.try_get(3)?,
                ended_ms: r.try_get(4)?,
                status: parse_status(&status),
                output: r.try_get(6)?,
                truncated: r.try_get(7)?,
                reason: r.try_get(8)?,
            })
        };
        read().map(Some).map_err(self.err())
    }

    /// `now_ms` is not used: the database's clock judges, so replicas' clocks need not agree.
    pub(super) fn mark_interrupted(&self, now_ms: i64) -> Result<usize, StoreError> {
        let _ = now_ms;
        self.with(|c| {
            let n = self.interrupt_silent(&mut **c, None)?;
            // Holders silent for long are forgotten (their runs were judged above).
            let long_ms = i64::try_from((SILENT * 60).as_millis()).unwrap_or(i64::MAX);
            c.execute(&format!("DELETE FROM cron_holders WHERE seen_ms < {NOW_MS} - $1"), &[&long_ms])
                .map_err(self.err())?;
            Ok(n)
        })
    }
}
