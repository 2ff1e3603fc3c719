//! The service the cron tools reach: scheduled jobs and their runs.
//!
//! The scheduler runs jobs through the runtime (a prompt as a sub-agent, a tool call through
//! the whole pipeline), so it lives above it; the crate that builds runtimes implements
//! [`JobService`] and puts a [`Jobs`] handle among the runtime's services, where
//! `CronCreate`, `CronDelete`, `CronList`, `cron` and `TaskOutput` find it.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::context::ToolContext;
use crate::error::ToolError;
use crate::session::SessionSlot;

/// When a job fires.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Schedule {
    /// A 5-field cron expression (minute hour day-of-month month day-of-week), in the time
    /// zone `tz` (an IANA name), else in local time.
    Cron {
        /// The expression.
        expr: String,
        /// The time zone, when not local time.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tz: Option<String>,
    },
    /// Every so many seconds, the first time one period after the job is created.
    Every {
        /// The period.
        seconds: u64,
    },
    /// Once, at a moment (RFC 3339, or a local date and time).
    At {
        /// The moment, as given.
        at: String,
    },
}

/// What a job does when it fires.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum JobAction {
    /// A prompt, run as a sub-agent in a fresh session of the project.
    Prompt {
        /// The prompt.
        prompt: String,
    },
    /// One tool call, through the runtime (policy, hooks, audit).
    Tool {
        /// The tool's name.
        tool: String,
        /// Its input.
        input: Value,
    },
}

/// What `CronCreate` and `cron add` ask for.
#[derive(Debug, Clone, PartialEq)]
pub struct JobRequest {
    /// A name for listings (the prompt's start or the tool's name when absent).
    pub name: Option<String>,
    /// When it fires.
    pub schedule: Schedule,
    /// What it does.
    pub action: JobAction,
    /// Fire on every match (true) or once, then delete itself (false).
    pub recurring: bool,
    /// Kept in the project's job store, surviving restarts (true), or living as long as the
    /// session (false).
    pub durable: bool,
}

/// How a run went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Still running.
    Running,
    /// Finished without an error.
    Completed,
    /// Finished with an error result (refused, failed, timed out).
    Failed,
    /// The process running it stopped before it finished.
    Interrupted,
}

impl RunStatus {
    /// The snake-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
            RunStatus::Interrupted => "interrupted",
        }
    }
}

/// One run of a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RunReport {
    /// The run's id: the job's id and the run's number (`job_1a2b3c4d.3`); `TaskOutput` takes it.
    pub run_id: String,
    /// The job's id.
    pub job_id: String,
    /// When it started (RFC 3339).
    pub started_at: String,
    /// When it ended (RFC 3339), once it has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    /// How it went.
    pub status: RunStatus,
    /// What it returned (the agent's answer, the tool's result), capped.
    pub output: String,
    /// The output was longer than the cap and was cut.
    #[serde(default)]
    pub truncated: bool,
    /// Why it started: `schedule`, `run-now` or `trigger NAME`.
    pub reason: String,
}

/// A job, as listings show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct JobReport {
    /// The job's id (`job_1a2b3c4d`).
    pub id: String,
    /// Its name.
    pub name: String,
    /// When it fires.
    pub schedule: Schedule,
    /// The schedule in words.
    pub when: String,
    /// What it does.
    pub action: JobAction,
    /// Fires on every match, or once.
    pub recurring: bool,
    /// Kept across restarts.
    pub durable: bool,
    /// Paused jobs do not fire.
    pub enabled: bool,
    /// When it was created (RFC 3339).
    pub created_at: String,
    /// When it fires next (RFC 3339), jitter included; none once it will not fire again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_run: Option<String>,
    /// When a recurring job is deleted (RFC 3339), unless settings keep it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// How many times it has run.
    pub runs: u64,
    /// Its latest run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_run: Option<RunReport>,
}

/// Keeps and runs scheduled jobs. Every method acts for the calling session (`cx`): it sees
/// its own session jobs and the project's durable jobs.
pub trait JobService: Send + Sync + std::fmt::Debug {
    /// Schedules a job; refused inside a job's own run (no job creates jobs).
    fn create(&self, cx: &ToolContext, request: JobRequest) -> Result<JobReport, ToolError>;

    /// Deletes the job with id (or name) `id`.
    fn delete(&self, cx: &ToolContext, id: &str) -> Result<JobReport, ToolError>;

    /// Pauses (`false`) or resumes (`true`) the job with id (or name) `id`.
    fn set_enabled(&self, cx: &ToolContext, id: &str, enabled: bool) -> Result<JobReport, ToolError>;

    /// The jobs this session sees, soonest first.
    fn list(&self, cx: &ToolContext) -> Result<Vec<JobReport>, ToolError>;

    /// The run `id` names (`job_….N`), or the latest run of the job `id` names; `None` when
    /// there is no such job or run.
    fn run_report(&self, cx: &ToolContext, id: &str) -> Result<Option<RunReport>, ToolError>;

    /// Forgets the session `session`'s jobs: the session ended.
    fn end_session(&self, session: &str);
}

/// The handle the runtime's services hold ([`crate::Extensions`] are keyed by type).
#[derive(Debug, Clone)]
pub struct Jobs(pub Arc<dyn JobService>);

/// Whether `id` names a job or a job's run rather than a shell task.
pub fn is_job_id(id: &str) -> bool {
    id.starts_with("job_")
}

/// Marks a session as a job's run (and the sub-agents it starts): no job creates jobs.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct JobRun {
    /// The run's id, when the session is one.
    pub run: Option<String>,
}

impl SessionSlot for JobRun {
    const KEY: &'static str = "job_run";
}

/// The session a sub-agent's jobs belong to: the top session of its tree of agents, so the
/// jobs its agents schedule are listed, deleted and ended with it. Unset in a top session.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct JobOwner {
    /// The top session's id.
    pub session: Option<String>,
}

impl SessionSlot for JobOwner {
    const KEY: &'static str = "job_owner";
}

impl ToolContext {
    /// The job service, when this runtime schedules jobs.
    pub fn jobs(&self) -> Option<Arc<dyn JobService>> {
        self.service::<Jobs>().map(|j| Arc::clone(&j.0))
    }

    /// Whether this call runs inside a job's run (or a sub-agent it started).
    pub fn in_job(&self) -> bool {
        self.with_slot::<JobRun, _>(|r| r.run.is_some())
    }

    /// The session this call's jobs belong to: the top session of its tree of agents.
    pub fn job_owner(&self) -> String {
        self.with_slot::<JobOwner, _>(|o| o.session.clone()).unwrap_or_else(|| self.session().id().to_string())
    }
}
