//! `CronCreate`: schedules a prompt (or one tool call) on a 5-field cron expression, once or
//! on every match, for this session or durably for the project (Claude Code's name and
//! parameters; `tool`/`input`, `tz` and `name` are ours).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolbelt_core::{
    Access, Annotations, Category, Content, JobAction, JobReport, JobRequest, PermissionClass, Render, Schedule,
    SideEffects, Tool, ToolContext, ToolError, ToolSpec,
};

use crate::cron::{job_line, service};

/// Input of `CronCreate`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CronCreateInput {
    /// A 5-field cron expression in local time (minute hour day-of-month month
    /// day-of-week): `*/5 * * * *` every five minutes, `0 9 * * 1-5` at 9:00 on weekdays,
    /// `30 14 28 11 *` once at 14:30 on 28 November (with `recurring: false`).
    pub cron: String,
    /// What to do when it fires: a prompt, run by a sub-agent in a fresh session of this
    /// project. Give either this or `tool`.
    pub prompt: Option<String>,
    /// Instead of a prompt: the tool to call when it fires (with `input`), through the same
    /// permissions and hooks.
    pub tool: Option<String>,
    /// The input of `tool`.
    pub input: Option<Value>,
    /// Fire on every match (default true), or once at the next match and then delete itself.
    pub recurring: Option<bool>,
    /// Keep the job in the project's job store so it survives restarts (default false: it
    /// lives as long as this session). A durable job asks for approval (unless a rule
    /// allows CronCreate): it runs later, without you.
    pub durable: Option<bool>,
    /// The time zone of the expression (an IANA name such as `Europe/Paris`), when not local
    /// time.
    pub tz: Option<String>,
    /// A short name for listings (default: the prompt's start, or the tool's name).
    pub name: Option<String>,
}

/// What `CronCreate` scheduled.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CronCreateOutput {
    /// The new job; its `id` is what CronDelete takes.
    pub job: JobReport,
}

impl Render for CronCreateOutput {
    fn render(&self) -> Vec<Content> {
        vec![Content::text(format!("Scheduled {}", job_line(&self.job)))]
    }
}

/// The `CronCreate` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct CronCreate;

const DESCRIPTION: &str = "Schedules a prompt to run later or repeatedly: on a 5-field cron expression in local \
time (`*/10 * * * *`, `0 9 * * 1-5`), every match (`recurring`, the default) or once at the next match. When it \
fires, a sub-agent runs the prompt in a fresh session of this project, under the same permissions; nobody is \
there to approve anything. Give `tool` and `input` instead of `prompt` to make one tool call. Jobs live as long as \
this session unless `durable`, which keeps them in the project's job store across restarts. Recurring jobs fire up \
to a tenth of their period late (at most 15 minutes) and expire after 7 days. The answer gives the job's id: \
CronList lists jobs with their runs, CronDelete cancels one, TaskOutput reads a run's output. A job's run cannot \
schedule jobs.";

impl Tool for CronCreate {
    type Input = CronCreateInput;
    type Output = CronCreateOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("CronCreate", DESCRIPTION)
            .title("Schedule a job")
            .aliases(["cron_create", "schedule_cron"])
            .category(Category::Planning)
            .tags(["cron", "schedule", "automation"])
            .permission(PermissionClass::External)
            .side_effects(SideEffects::LocalState)
            .annotations(Annotations { read_only: false, destructive: false, idempotent: false, open_world: false })
            .deferred()
            .search_hint("cron schedule recurring timer later every minute hour daily job reminder automation")
    }

    fn access(&self, input: &CronCreateInput, _cx: &ToolContext) -> Result<Access, ToolError> {
        Ok(create_access(input.durable.unwrap_or(false)))
    }

    async fn call(&self, input: CronCreateInput, cx: ToolContext) -> Result<CronCreateOutput, ToolError> {
        let action = action(input.prompt, input.tool, input.input)?;
        let request = JobRequest {
            name: input.name,
            schedule: Schedule::Cron { expr: input.cron, tz: input.tz },
            action,
            recurring: input.recurring.unwrap_or(true),
            durable: input.durable.unwrap_or(false),
        };
        Ok(CronCreateOutput { job: service(&cx)?.create(&cx, request)? })
    }
}

/// What creating a job touches: a session job, the session's scheduled jobs (allowed as
/// any session state is); a durable one reaches beyond the session — it runs later, in
/// processes that outlive it, with nobody watching — so it is judged as reaching outside
/// (asked in the default modes, allowed by a `CronCreate` rule, refused in plan mode).
pub(crate) fn create_access(durable: bool) -> Access {
    if durable {
        Access::exclusive().reaching("schedules a durable job: it runs later, without you, until deleted or expired")
    } else {
        Access::exclusive().changes_state("the scheduled jobs")
    }
}

/// The job's action from a prompt, or a tool and its input.
pub(crate) fn action(
    prompt: Option<String>,
    tool: Option<String>,
    input: Option<Value>,
) -> Result<JobAction, ToolError> {
    match (prompt, tool) {
        (Some(prompt), None) if !prompt.trim().is_empty() => {
            if input.is_some() {
                return Err(ToolError::failed("`input` goes with `tool`; a prompt job takes only `prompt`"));
            }
            Ok(JobAction::Prompt { prompt })
        }
        (None, Some(tool)) if !tool.trim().is_empty() => Ok(JobAction::Tool {
            tool: tool.trim().to_string(),
            input: input.unwrap_or_else(|| Value::Object(Default::default())),
        }),
        (Some(_), Some(_)) => Err(ToolError::failed("give either `prompt` or `tool` (with `input`), not both")),
        _ => Err(ToolError::failed(
            "say what the job does: `prompt` (run by a sub-agent), or `tool` and `input` (one tool call)",
        )),
    }
}
