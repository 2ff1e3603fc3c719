//! `cron`: NanoBot's face of the scheduler — `add` (with `every_seconds`, `cron_expr` and
//! `tz`, or a one-shot `at`), `list`, `remove`, `enable`, `disable` — over the same jobs as
//! `CronCreate`. As NanoBot's, its jobs are kept across restarts unless `durable: false`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolbelt_core::{
    Access, Annotations, Category, Content, JobReport, JobRequest, PermissionClass, Render, Schedule, SideEffects,
    Tool, ToolContext, ToolError, ToolSpec,
};

use crate::cron::cron_create::{action, create_access};
use crate::cron::{job_line, job_lines, service};

/// What `cron` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CronAction {
    /// Schedule a job.
    Add,
    /// List the jobs.
    List,
    /// Delete a job.
    Remove,
    /// Resume a paused job.
    Enable,
    /// Pause a job.
    Disable,
}

/// Input of `cron`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CronInput {
    /// `add`, `list`, `remove`, `enable` or `disable`.
    pub action: CronAction,
    /// For `add`: a short name for the job.
    pub name: Option<String>,
    /// For `add`: what the agent is asked to do when the job fires (a sub-agent runs it in a
    /// fresh session of this project). Or give `tool` and `input`.
    pub message: Option<String>,
    /// For `add`: instead of a message, a tool to call when the job fires.
    pub tool: Option<String>,
    /// For `add`: the input of `tool`.
    pub input: Option<Value>,
    /// For `add`: fire every so many seconds.
    pub every_seconds: Option<u64>,
    /// For `add`: fire on a 5-field cron expression (`0 9 * * *`), in `tz` or local time.
    pub cron_expr: Option<String>,
    /// For `add` with `cron_expr` or a local `at`: the IANA time zone (`Europe/Paris`).
    pub tz: Option<String>,
    /// For `add`: fire once at this moment (RFC 3339, or a local `2026-12-01T09:00`), then
    /// delete the job.
    pub at: Option<String>,
    /// For `add`: keep the job across restarts (default true; asks for approval, since it
    /// runs later without you).
    pub durable: Option<bool>,
    /// For `remove`, `enable`, `disable`: the job's id (or name).
    pub job_id: Option<String>,
}

/// What `cron` did.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CronOutput {
    /// The action.
    pub action: CronAction,
    /// The job added, removed, enabled or disabled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<JobReport>,
    /// For `list`: the jobs, soonest first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jobs: Option<Vec<JobReport>>,
}

impl Render for CronOutput {
    fn render(&self) -> Vec<Content> {
        let verb = match self.action {
            CronAction::Add => "Added",
            CronAction::Remove => "Removed",
            CronAction::Enable => "Enabled",
            CronAction::Disable => "Disabled",
            CronAction::List => return vec![Content::text(job_lines(self.jobs.as_deref().unwrap_or_default()))],
        };
        let line = self.job.as_ref().map(job_line).unwrap_or_default();
        vec![Content::text(format!("{verb} {line}"))]
    }
}

/// The `cron` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cron;

const DESCRIPTION: &str = "Schedules reminders and recurring work. `action: add` with a `message` (run by a \
sub-agent in a fresh session of this project when the job fires; or `tool` + `input` for one tool call) and one \
of `every_seconds`, `cron_expr` (5 fields, with an optional IANA `tz`) or `at` (one moment, then the job deletes \
itself); `list`; `remove`, `enable`, `disable` with `job_id`. Jobs are kept across restarts unless `durable: \
false`. A job's run cannot schedule jobs; TaskOutput with a run's id reads its output.";

impl Tool for Cron {
    type Input = CronInput;
    type Output = CronOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("cron", DESCRIPTION)
            .title("Schedule, list and cancel jobs")
            .category(Category::Planning)
            .tags(["cron", "schedule", "automation", "reminder"])
            .permission(PermissionClass::External)
            .side_effects(SideEffects::LocalState)
            .annotations(Annotations { read_only: false, destructive: false, idempotent: false, open_world: false })
            .deferred()
            .search_hint("cron schedule every seconds at reminder recurring job add remove enable disable")
    }

    fn access(&self, input: &CronInput, _cx: &ToolContext) -> Result<Access, ToolError> {
        Ok(match input.action {
            CronAction::List => Access::shared(),
            CronAction::Add => create_access(input.durable.unwrap_or(true)),
            _ => Access::exclusive().changes_state("the scheduled jobs"),
        })
    }

    async fn call(&self, input: CronInput, cx: ToolContext) -> Result<CronOutput, ToolError> {
        let jobs = service(&cx)?;
        let done = |job| CronOutput { action: input.action, job: Some(job), jobs: None };
        match input.action {
            CronAction::List => Ok(CronOutput { action: CronAction::List, job: None, jobs: Some(jobs.list(&cx)?) }),
            CronAction::Add => {
                let (schedule, recurring) = match (input.every_seconds, input.cron_expr, input.at) {
                    (Some(seconds), None, None) => (Schedule::Every { seconds }, true),
                    (None, Some(expr), None) => (Schedule::Cron { expr, tz: input.tz.clone() }, true),
                    (None, None, Some(at)) => {
                        // A local time with `tz` is read there; the scheduler keeps the moment.
                        let moment =
                            crate::cron::schedule::moment(&at, input.tz.as_deref()).map_err(ToolError::failed)?;
                        (Schedule::At { at: moment.to_string() }, false)
                    }
                    _ => {
                        return Err(ToolError::failed(
                            "say when the job fires with exactly one of `every_seconds`, `cron_expr` (with an optional \
                             `tz`) or `at`",
                        ));
                    }
                };
                let request = JobRequest {
                    name: input.name.clone(),
                    schedule,
                    action: action(input.message.clone(), input.tool.clone(), input.input.clone())
                        .map_err(|e| ToolError::failed(e.to_string().replace("`prompt`", "`message`")))?,
                    recurring,
                    durable: input.durable.unwrap_or(true),
                };
                Ok(done(jobs.create(&cx, request)?))
            }
            CronAction::Remove | CronAction::Enable | CronAction::Disable => {
                let Some(id) = input.job_id.as_deref().map(str::trim).filter(|id| !id.is_empty()) else {
                    return Err(ToolError::failed(format!(
                        "`{}` needs `job_id`: the job's id as `add` or `list` gave it",
                        serde_json::to_value(input.action)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_string))
                            .unwrap_or_default()
                    )));
                };
                let job = match input.action {
                    CronAction::Remove => jobs.delete(&cx, id)?,
                    action => jobs.set_enabled(&cx, id, action == CronAction::Enable)?,
                };
                Ok(done(job))
            }
        }
    }
}
