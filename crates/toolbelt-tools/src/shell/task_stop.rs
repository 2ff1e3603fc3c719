//! `TaskStop`: kills a background task and every process it started.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{
    Access, AgentStatus, Annotations, Category, Content, PermissionClass, Render, SideEffects, Tool, ToolContext,
    ToolError, ToolSpec, human_duration, is_agent_id,
};

use crate::shell::support::background::{Tasks, one_line, unknown_task};
use crate::shell::support::result::stopped_what;
use crate::tasks::{TaskStatus, task_command, task_status};

/// Input of `TaskStop`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskStopInput {
    /// The task's id, as Bash returned it when it started the task (`bash_1`).
    pub task_id: String,
}

/// The structured result of `TaskStop`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TaskStopResult {
    /// The task's id.
    pub task_id: String,
    /// Whether this call stopped it (false: it had already ended).
    pub stopped: bool,
    /// Where it stands now.
    pub status: TaskStatus,
    /// Its exit code, if it had exited on its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Its command line (for an agent, its type and task).
    pub command: String,
    /// How long it ran, in milliseconds.
    pub run_time_ms: u64,
    /// Whether a stop reaches every process it started (a cgroup holds them all); when false,
    /// a process that left its session and closed its descriptors may survive (`toolbelt
    /// sandbox check` says why).
    pub whole_tree: bool,
}

impl Render for TaskStopResult {
    /// What was stopped and how thoroughly, or that the task had already ended.
    fn render(&self) -> Vec<Content> {
        let command = one_line(&self.command, 120);
        let text = if self.stopped {
            format!(
                "Stopped task {} (`{command}`) after {}: {}.",
                self.task_id,
                human_duration(Duration::from_millis(self.run_time_ms)),
                stopped_what(self.whole_tree).replacen("the command", "it", 1)
            )
        } else {
            let code = self.exit_code.map(|c| format!(", exit code {c}")).unwrap_or_default();
            format!(
                "Task {} (`{command}`) had already ended ({}{code}); nothing to stop.",
                self.task_id,
                self.status.as_str()
            )
        };
        vec![Content::text(text)]
    }
}

/// The `TaskStop` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskStop;

const DESCRIPTION: &str = "Stops a background task started by Bash with run_in_background: kills its command \
and every process it started (children, grandchildren, daemons it spawned). Its output so far stays readable with \
TaskOutput. Given a background agent's id (`agent_1`), stops the agent and everything it started.";

impl Tool for TaskStop {
    type Input = TaskStopInput;
    type Output = TaskStopResult;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("TaskStop", DESCRIPTION)
            .title("Stop a background task")
            .aliases(["KillShell", "KillBash", "task_stop"])
            .param_alias("shell_id", "task_id")
            .param_alias("bash_id", "task_id")
            .category(Category::Shell)
            .tags(["shell", "task", "background"])
            .permission(PermissionClass::Read)
            .side_effects(SideEffects::LocalState)
            .annotations(Annotations { read_only: false, destructive: true, idempotent: true, open_world: false })
            .search_hint("kill stop background task process shell")
    }

    fn access(&self, input: &TaskStopInput, _cx: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::exclusive().changes_state(format!("task {}", input.task_id)))
    }

    async fn call(&self, input: TaskStopInput, cx: ToolContext) -> Result<TaskStopResult, ToolError> {
        if is_agent_id(&input.task_id)
            && let Some(agents) = cx.agents()
        {
            let was_running = agents
                .wait(&cx, &input.task_id, Duration::ZERO)
                .await
                .is_some_and(|r| r.status == AgentStatus::Running);
            let report = agents.stop(&cx, &input.task_id).await.ok_or_else(|| unknown_task(&cx, &input.task_id))?;
            return Ok(TaskStopResult {
                task_id: report.agent_id.clone(),
                stopped: was_running,
                status: task_status(report.status),
                exit_code: None,
                command: task_command(&report),
                run_time_ms: report.duration_ms,
                whole_tree: true,
            });
        }
        let task =
            cx.with_slot::<Tasks, _>(|t| t.get(&input.task_id)).ok_or_else(|| unknown_task(&cx, &input.task_id))?;
        // The kill scans /proc and waits for the processes to die: a few milliseconds.
        let stopper = std::sync::Arc::clone(&task);
        let stopped = tokio::task::spawn_blocking(move || stopper.stop())
            .await
            .map_err(|e| ToolError::internal(format!("stopping the task failed: {e}")))?;
        let (status, exit_code) = task.status();
        Ok(TaskStopResult {
            task_id: task.id.clone(),
            stopped,
            status,
            exit_code,
            command: task.command.clone(),
            run_time_ms: u64::try_from(task.run_time().as_millis()).unwrap_or(u64::MAX),
            whole_tree: task.is_held(),
        })
    }
}
