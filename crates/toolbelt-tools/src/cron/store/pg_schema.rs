//! The tables of durable jobs in shared storage, which the store ([`super::postgres`]) and
//! the heartbeat of its runs ([`super::heart`]) both use.

/// The component and schema version recorded in `toolbelt_schema`.
pub(super) const COMPONENT: &str = "cron_jobs";
pub(super) const VERSION: i32 = 1;

/// The jobs, their runs, and the processes running them (`IF NOT EXISTS`: replicas of
/// different ages start against one database).
pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS cron_jobs (
    project    TEXT NOT NULL,
    id         TEXT NOT NULL,
    name       TEXT NOT NULL,
    owner      TEXT NOT NULL,
    schedule   TEXT NOT NULL,
    action     TEXT NOT NULL,
    recurring  BOOLEAN NOT NULL,
    enabled    BOOLEAN NOT NULL,
    created_ms BIGINT NOT NULL,
    expires_ms BIGINT,
    next_ms    BIGINT,
    runs       BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (project, id)
);
CREATE INDEX IF NOT EXISTS cron_jobs_by_next ON cron_jobs (project, next_ms) WHERE enabled;
CREATE TABLE IF NOT EXISTS cron_runs (
    project    TEXT NOT NULL,
    job_id     TEXT NOT NULL,
    seq        BIGINT NOT NULL,
    job_name   TEXT NOT NULL,
    started_ms BIGINT NOT NULL,
    ended_ms   BIGINT,
    status     TEXT NOT NULL,
    output     TEXT NOT NULL DEFAULT '',
    truncated  BOOLEAN NOT NULL DEFAULT FALSE,
    reason     TEXT NOT NULL,
    holder     TEXT NOT NULL,
    PRIMARY KEY (project, job_id, seq)
);
CREATE INDEX IF NOT EXISTS cron_runs_running ON cron_runs (project, holder) WHERE status = 'running';
CREATE TABLE IF NOT EXISTS cron_holders (
    holder  TEXT PRIMARY KEY,
    seen_ms BIGINT NOT NULL
);
";

/// The database's clock, in milliseconds since the epoch.
pub(super) const NOW_MS: &str = "(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT";
