//! Scheduled jobs: `CronCreate`, `CronDelete` and `CronList` (Claude Code's names and
//! parameters) and `cron` (NanoBot's, with `every_seconds` and one-shot `at` times), two
//! faces of one scheduler.
//!
//! A job is a prompt (run as a sub-agent in a fresh session of the project) or one tool call
//! (through the runtime: policy, hooks, audit). The scheduler runs them through the runtime,
//! so it lives above it: the tools reach it through the [`toolbelt_core::JobService`] the
//! front end sets up, and keep here only what needs no runtime — the schedules
//! ([`schedule`]) and the job store ([`store`]).

use std::sync::Arc;

use toolbelt_core::{DynTool, JobReport, JobService, ToolContext, ToolError, erase};

mod cron_create;
mod cron_delete;
mod cron_list;
mod cron_tool;
pub mod schedule;
pub mod store;

pub use cron_create::{CronCreate, CronCreateInput};
pub use cron_delete::{CronDelete, CronDeleteInput};
pub use cron_list::{CronList, CronListInput};
pub use cron_tool::{Cron, CronInput};

/// The cron tools.
pub fn tools() -> Vec<Arc<dyn DynTool>> {
    vec![erase(CronCreate), erase(CronDelete), erase(CronList), erase(Cron)]
}

/// The job service, or an error saying this front end schedules nothing, or that a job's
/// run (and every agent it starts) may not touch jobs.
pub(crate) fn service(cx: &ToolContext) -> Result<Arc<dyn JobService>, ToolError> {
    if cx.in_job() {
        return Err(ToolError::failed(
            "a scheduled job's run cannot schedule, change or list jobs; do the work now, or say in your answer \
             what should be scheduled",
        ));
    }
    cx.jobs().ok_or_else(|| {
        ToolError::failed(
            "this runtime has no job scheduler, so jobs cannot be scheduled here; `toolbelt mcp` and `toolbelt \
             agent` schedule jobs, and `toolbelt cron serve` runs a project's durable jobs",
        )
    })
}

/// One line per job: id, name, schedule, next run, state, latest run.
pub(crate) fn job_lines(jobs: &[JobReport]) -> String {
    if jobs.is_empty() {
        return "No scheduled jobs.".to_string();
    }
    let mut text = format!("{} scheduled job{}:", jobs.len(), if jobs.len() == 1 { "" } else { "s" });
    for job in jobs {
        text.push('\n');
        text.push_str(&job_line(job));
    }
    text
}

/// A job in one line.
pub(crate) fn job_line(job: &JobReport) -> String {
    let what = match &job.action {
        toolbelt_core::JobAction::Prompt { prompt } => format!("prompt \"{}\"", short(prompt, 80)),
        toolbelt_core::JobAction::Tool { tool, input } => format!("{tool} {}", short(&input.to_string(), 80)),
    };
    let mut flags = vec![if job.durable { "durable" } else { "session" }];
    if !job.recurring {
        flags.push("one-shot");
    }
    if !job.enabled {
        flags.push("paused");
    }
    let next = match (&job.next_run, job.enabled) {
        (_, false) => "does not fire while paused".to_string(),
        (Some(next), true) => format!("next {next}"),
        (None, true) => "will not fire again".to_string(),
    };
    let mut line = format!("{} `{}`: {}, {what}; {next} ({})", job.id, job.name, job.when, flags.join(", "));
    if let Some(expires) = &job.expires_at {
        line.push_str(&format!("; expires {expires}"));
    }
    if let Some(run) = &job.last_run {
        line.push_str(&format!("; last run {} {} at {}", run.run_id, run.status.as_str(), run.started_at));
    }
    line
}

fn short(text: &str, chars: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(chars) {
        Some((cut, _)) => format!("{}…", &one_line[..cut]),
        None => one_line,
    }
}
