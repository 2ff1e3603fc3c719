//! `BackgroundTasks`: the session's background tasks (shell commands and agents) with their
//! command, status and run time. (`TaskList` is the persistent task list, in `planning`.)

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{
    Access, Annotations, Category, Content, PermissionClass, Render, SideEffects, Tool, ToolContext, ToolError,
    ToolSpec, human_duration,
};

use crate::shell::support::background::{Tasks, one_line};
use crate::tasks::{TaskStatus, task_command, task_status};

/// Input of `BackgroundTasks` (none).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BackgroundTasksInput {}

/// One background task.
#[derive(Debug, Serialize, JsonSchema)]
pub struct BackgroundTaskEntry {
    /// Its id.
    pub task_id: String,
    /// The command line.
    pub command: String,
    /// What it does, as described when it started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Where it stands.
    pub status: TaskStatus,
    /// Its exit code, once it exited on its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// How long it ran (or has been running), in milliseconds.
    pub run_time_ms: u64,
    /// The log file holding its output.
    pub log_file: String,
}

/// The structured result of `BackgroundTasks`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct BackgroundTasksResult {
    /// The tasks, oldest first.
    pub tasks: Vec<BackgroundTaskEntry>,
    /// How many are running.
    pub running: usize,
}

impl Render for BackgroundTasksResult {
    /// One line per task: id, status (with the exit code), run time and command.
    fn render(&self) -> Vec<Content> {
        let text = if self.tasks.is_empty() {
            "No background tasks in this session. Start one with Bash and run_in_background: true.".to_string()
        } else {
            let mut text = format!("{} background task(s), {} running:", self.tasks.len(), self.running);
            for entry in &self.tasks {
                let code = entry.exit_code.map(|c| format!(", exit {c}")).unwrap_or_default();
                text.push_str(&format!(
                    "\n{}  {}{code}  {}  {}",
                    entry.task_id,
                    entry.status.as_str(),
                    human_duration(Duration::from_millis(entry.run_time_ms)),
                    one_line(&entry.command, 120)
                ));
            }
            text
        };
        vec![Content::text(text)]
    }
}

/// The `BackgroundTasks` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct BackgroundTasks;

const DESCRIPTION: &str = "Lists this session's background tasks (started by Bash with run_in_background): id, \
status (running, completed, failed, killed), run time and command, and its agents started with Agent in the \
background. Read one with TaskOutput, stop one with TaskStop. (The list of work items to do is another \
tool: TaskList.)";

impl Tool for BackgroundTasks {
    type Input = BackgroundTasksInput;
    type Output = BackgroundTasksResult;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("BackgroundTasks", DESCRIPTION)
            .title("List background tasks")
            .aliases(["background_tasks", "list_background_tasks"])
            .category(Category::Shell)
            .tags(["shell", "task", "background"])
            .read_only()
            .side_effects(SideEffects::None)
            .permission(PermissionClass::Read)
            .annotations(Annotations { read_only: true, destructive: false, idempotent: true, open_world: false })
            .search_hint("background tasks jobs processes list status")
    }

    fn access(&self, _input: &BackgroundTasksInput, _cx: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::shared())
    }

    async fn call(&self, _input: BackgroundTasksInput, cx: ToolContext) -> Result<BackgroundTasksResult, ToolError> {
        let tasks = cx.with_slot::<Tasks, _>(|t| t.all());
        let entries: Vec<BackgroundTaskEntry> = tasks
            .iter()
            .map(|t| {
                let (status, exit_code) = t.status();
                BackgroundTaskEntry {
                    task_id: t.id.clone(),
                    command: t.command.clone(),
                    description: t.description.clone(),
                    status,
                    exit_code,
                    run_time_ms: u64::try_from(t.run_time().as_millis()).unwrap_or(u64::MAX),
                    log_file: t.log.display().to_string(),
                }
            })
            .collect();
        let mut entries = entries;
        if let Some(agents) = cx.agents() {
            entries.extend(agents.list(&cx).into_iter().map(|r| BackgroundTaskEntry {
                task_id: r.agent_id.clone(),
                command: task_command(&r),
                description: Some(r.description.clone()),
                status: task_status(r.status),
                exit_code: None,
                run_time_ms: r.duration_ms,
                log_file: r.full_text_path.as_ref().map(|p| p.display().to_string()).unwrap_or_default(),
            }));
        }
        let running = entries.iter().filter(|e| e.status == TaskStatus::Running).count();
        Ok(BackgroundTasksResult { tasks: entries, running })
    }
}
