//! `TaskOutput`: the output a background task wrote since the last read, its status and
//! exit code; by default it first waits (up to `timeout`) for the task to finish.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{
    Access, AgentReport, Annotations, Category, Content, PermissionClass, Render, RunReport, RunStatus, SideEffects,
    TimeLimit, Tool, ToolContext, ToolError, ToolSpec, human_duration, is_agent_id, is_job_id,
};

use crate::fs::shown::shown;
use crate::process::capture::thousands;
use crate::shell::support::background::{Tasks, unknown_task};
use crate::tasks::{TaskStatus, render_report, task_status};

/// How long a blocking read waits when the call does not say.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(30);
/// The longest wait a call may ask for.
pub const MAX_WAIT: Duration = Duration::from_secs(600);

/// The `timeout` parameter's description, with the wait's default and cap.
fn timeout_doc() -> String {
    format!(
        "How long to wait when blocking, in milliseconds (default {}, at most {}). When it runs out, the answer \
         says the task is still running.",
        DEFAULT_WAIT.as_millis(),
        MAX_WAIT.as_millis()
    )
}

/// Input of `TaskOutput`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskOutputInput {
    /// The task's id, as Bash returned it when it started the task (`bash_1`).
    pub task_id: String,
    /// Wait for the task to finish before answering (default true). With false, answer at
    /// once with what it printed so far.
    pub block: Option<bool>,
    /// How long to wait when blocking, in milliseconds, within a default and a cap (the
    /// schema's description states them, from [`DEFAULT_WAIT`] and [`MAX_WAIT`]). When it runs
    /// out, the answer says the task is still running.
    #[schemars(range(min = 0), description = timeout_doc())]
    pub timeout: Option<u64>,
}

/// The structured result of `TaskOutput`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TaskOutputResult {
    /// The task's id.
    pub task_id: String,
    /// Where it stands.
    pub status: TaskStatus,
    /// Its exit code, once it exited on its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Output written since the previous read (head and tail when long).
    pub output: String,
    /// Part of the new output was left out.
    pub truncated: bool,
    /// The log file holding all its output.
    pub log_file: String,
    /// How long it ran (or has been running), in milliseconds.
    pub run_time_ms: u64,
    /// The bytes of the log this read covers: from the first, up to the second.
    pub log_range: (u64, u64),
    /// When the new output was cut: where every byte of it is and how to read it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// When the task is an agent (started with Agent in the background): its report. Its
    /// answer is `output` (the report's own `text` is left empty, so the answer comes once).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentReport>,
    /// When the id is a scheduled job's (`job_1a2b3c4d`, its latest run) or a run's
    /// (`job_1a2b3c4d.3`): the run. Its output is `output`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job_run: Option<RunReport>,
}

impl TaskOutputResult {
    /// The result for a background agent: its report, the task fields filled from it.
    fn of_agent(mut report: AgentReport) -> Self {
        let status = task_status(report.status);
        let answer = std::mem::take(&mut report.text);
        let log = report.full_text_path.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
        Self {
            task_id: report.agent_id.clone(),
            status,
            exit_code: None,
            output: answer,
            truncated: report.full_text_path.is_some(),
            log_file: log.clone(),
            run_time_ms: report.duration_ms,
            log_range: (0, 0),
            note: None,
            agent: Some(report),
            job_run: None,
        }
    }

    /// The result for a scheduled job's run.
    fn of_run(mut run: RunReport, run_time_ms: u64) -> Self {
        let status = match run.status {
            RunStatus::Running => TaskStatus::Running,
            RunStatus::Completed => TaskStatus::Completed,
            RunStatus::Failed => TaskStatus::Failed,
            RunStatus::Interrupted => TaskStatus::Killed,
        };
        let output = std::mem::take(&mut run.output);
        Self {
            task_id: run.run_id.clone(),
            status,
            exit_code: None,
            truncated: run.truncated,
            output,
            log_file: String::new(),
            run_time_ms,
            log_range: (0, 0),
            note: None,
            agent: None,
            job_run: Some(run),
        }
    }
}

impl Render for TaskOutputResult {
    /// The status line (exit code, run time), then the new output or a note that there is
    /// none, and where the rest is when it was cut.
    fn render(&self) -> Vec<Content> {
        if let Some(run) = &self.job_run {
            let whole = RunReport { output: self.output.clone(), ..run.clone() };
            return vec![Content::text(crate::tasks::render_run(&whole))];
        }
        if let Some(report) = &self.agent {
            let whole = AgentReport { text: self.output.clone(), ..report.clone() };
            return vec![Content::text(render_report(&whole))];
        }
        let run_time = human_duration(Duration::from_millis(self.run_time_ms));
        let mut header = format!("Task {} is {}", self.task_id, self.status.as_str());
        match (self.status, self.exit_code) {
            (TaskStatus::Running, _) => header.push_str(&format!(" (for {run_time} so far)")),
            (_, Some(code)) => header.push_str(&format!(" (exit code {code}, ran {run_time})")),
            _ => header.push_str(&format!(" (ran {run_time})")),
        }
        let (from, to) = self.log_range;
        let body = if from == to {
            "No new output since the last read.".to_string()
        } else {
            format!("New output ({} bytes):\n{}", thousands(to - from), self.output)
        };
        let mut text = format!("{header}.\n{body}");
        if let Some(note) = &self.note {
            text.push_str(&format!("\n[{note}]"));
        }
        vec![Content::text(text)]
    }
}

/// The `TaskOutput` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskOutput;

/// The description, with the default wait.
fn description() -> String {
    format!(
        "Reads a background task started by Bash with run_in_background: the output it wrote since the last read, \
         its status (running, completed, failed, killed) and its exit code. By default it waits for the task to \
         finish, up to `timeout` ms ({}) — for a monitor (`monitor_1`, from Monitor), for its next lines; set \
         `block: false` to look without waiting. The whole output stays in the \
         task's log file. A background agent's id (`agent_1`, from Agent) gives its report: its answer, or what it \
         has done so far; a scheduled job's id (`job_1a2b3c4d`, from CronCreate) or a run's (`job_1a2b3c4d.3`), that run's output.",
        DEFAULT_WAIT.as_millis()
    )
}

impl Tool for TaskOutput {
    type Input = TaskOutputInput;
    type Output = TaskOutputResult;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("TaskOutput", description())
            .title("Read a background task's output")
            .aliases(["BashOutput", "task_output"])
            .param_alias("bash_id", "task_id")
            .param_alias("shell_id", "task_id")
            .category(Category::Shell)
            .tags(["shell", "task", "background"])
            .permission(PermissionClass::Read)
            .side_effects(SideEffects::LocalState)
            .annotations(Annotations { read_only: true, destructive: false, idempotent: false, open_world: false })
            .search_hint("background task output log poll status exit code")
    }

    fn access(&self, _input: &TaskOutputInput, _cx: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::shared())
    }

    fn timeout(&self, input: &TaskOutputInput, _cx: &ToolContext) -> Option<TimeLimit> {
        // Room beyond the wait, so the answer (rather than the runtime's timeout) ends the call.
        Some(TimeLimit::Asked(wait_for(input) + Duration::from_secs(5)))
    }

    async fn call(&self, input: TaskOutputInput, cx: ToolContext) -> Result<TaskOutputResult, ToolError> {
        if is_agent_id(&input.task_id)
            && let Some(agents) = cx.agents()
        {
            let wait = if input.block.unwrap_or(true) {
                wait_for(&input).min(cx.limits().timeout.saturating_sub(Duration::from_secs(1)))
            } else {
                Duration::ZERO
            };
            let report =
                agents.wait(&cx, &input.task_id, wait).await.ok_or_else(|| unknown_task(&cx, &input.task_id))?;
            return Ok(TaskOutputResult::of_agent(report));
        }
        if is_job_id(&input.task_id)
            && let Some(jobs) = cx.jobs()
        {
            return job_run(&input, &cx, jobs.as_ref()).await;
        }
        let task =
            cx.with_slot::<Tasks, _>(|t| t.get(&input.task_id)).ok_or_else(|| unknown_task(&cx, &input.task_id))?;
        if input.block.unwrap_or(true) && task.status().0 == TaskStatus::Running {
            let limit = wait_for(&input).min(cx.limits().timeout.saturating_sub(Duration::from_secs(1)));
            // A monitor's reader, and a session's (a REPL may never end), waits for its next
            // lines, not for its end.
            if task.monitor.is_some() || task.session.is_some() {
                task.wait_news(limit, &cx).await;
            } else {
                task.wait(limit, &cx).await;
            }
        }
        // A session reads as its screen does, and reading it counts as using it.
        if let Some(session) = &task.session {
            session.touch();
            let (from, _) = task.range();
            let read = crate::shell::support::session::answer::read(&cx, &task, session, false);
            let to = task.range().1;
            return Ok(TaskOutputResult {
                task_id: task.id.clone(),
                status: read.status,
                exit_code: read.exit_code,
                output: read.output,
                truncated: read.truncated,
                log_file: read.log_file,
                run_time_ms: u64::try_from(task.run_time().as_millis()).unwrap_or(u64::MAX),
                log_range: (from, to),
                note: (!read.notes.is_empty()).then(|| read.notes.join("; ")),
                agent: None,
                job_run: None,
            });
        }
        let (status, exit_code) = task.status();
        let (rendered, from, to) = task.read_new(cx.limits().output_budget.saturating_sub(600))?;
        Ok(TaskOutputResult {
            task_id: task.id.clone(),
            status,
            exit_code,
            output: rendered.text,
            truncated: rendered.cut,
            log_file: task.log.display().to_string(),
            run_time_ms: u64::try_from(task.run_time().as_millis()).unwrap_or(u64::MAX),
            log_range: (from, to),
            note: rendered.cut.then(|| {
                format!(
                    "The new output was too long to show whole; every byte is in {} (bytes {from}–{to}); read it with \
                     Read or search it with Grep.",
                    shown(&cx, &task.log)
                )
            }),
            agent: None,
            job_run: None,
        })
    }
}

/// A scheduled job's run (its latest, for a job's id), after waiting for it to end when
/// blocking.
async fn job_run(
    input: &TaskOutputInput,
    cx: &ToolContext,
    jobs: &dyn toolbelt_core::JobService,
) -> Result<TaskOutputResult, ToolError> {
    let started = std::time::Instant::now();
    let limit = if input.block.unwrap_or(true) {
        wait_for(input).min(cx.limits().timeout.saturating_sub(Duration::from_secs(1)))
    } else {
        Duration::ZERO
    };
    loop {
        let Some(run) = jobs.run_report(cx, &input.task_id)? else {
            return Err(ToolError::failed(format!(
                "there is no scheduled job or run `{}` here; CronList lists the jobs with their latest runs",
                input.task_id
            )));
        };
        if run.status != RunStatus::Running || started.elapsed() >= limit || cx.is_cancelled() {
            let ran = run_time(&run);
            return Ok(TaskOutputResult::of_run(run, ran));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// How long a run ran (or has been running), in milliseconds, from its RFC 3339 times.
fn run_time(run: &RunReport) -> u64 {
    let ms = |t: &str| t.parse::<jiff::Timestamp>().ok().map(|t| t.as_millisecond());
    let end = run.ended_at.as_deref().and_then(ms).unwrap_or_else(|| jiff::Timestamp::now().as_millisecond());
    run.started_at
        .as_str()
        .parse::<jiff::Timestamp>()
        .ok()
        .map_or(0, |s| u64::try_from(end - s.as_millisecond()).unwrap_or(0))
}

fn wait_for(input: &TaskOutputInput) -> Duration {
    input.timeout.map_or(DEFAULT_WAIT, Duration::from_millis).min(MAX_WAIT)
}
