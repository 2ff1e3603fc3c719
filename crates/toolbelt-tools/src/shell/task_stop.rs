//! `TaskStop`: kills a background task and every process it started.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{
    Access, Annotations, Category, PermissionClass, SideEffects, Tool, ToolContext, ToolError, ToolOutput, ToolSpec,
    output_schema,
};

use toolbelt_core::human_duration;

use crate::shell::support::background::{TaskStatus, Tasks, one_line, unknown_task};
use crate::shell::support::result::to_value;

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
}

/// The `TaskStop` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskStop;

const DESCRIPTION: &str = "Stops a background task started by Bash with run_in_background: kills its command \
and every process it started (children, grandchildren, daemons it spawned). Its output so far stays readable with \
TaskOutput.";

impl Tool for TaskStop {
    type Input = TaskStopInput;
    const NAME: &'static str = "TaskStop";

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(Self::NAME, DESCRIPTION)
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
            .output_schema(output_schema::<TaskStopResult>())
    }

    fn access(&self, input: &TaskStopInput, _cx: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::exclusive().changes_state(format!("task {}", input.task_id)))
    }

    async fn call(&self, input: TaskStopInput, cx: ToolContext) -> Result<ToolOutput, ToolError> {
        let task =
            cx.with_slot::<Tasks, _>(|t| t.get(&input.task_id)).ok_or_else(|| unknown_task(&cx, &input.task_id))?;
        // The kill scans /proc and waits for the processes to die: a few milliseconds.
        let stopper = std::sync::Arc::clone(&task);
        let stopped = tokio::task::spawn_blocking(move || stopper.stop())
            .await
            .map_err(|e| ToolError::internal(format!("stopping the task failed: {e}")))?;
        let (status, exit_code) = task.status();
        let command = one_line(&task.command, 120);
        let text = if stopped {
            format!(
                "Stopped task {} (`{command}`) after {}: {}.",
                task.id,
                human_duration(task.run_time()),
                crate::shell::support::result::stopped_what(task.is_held()).replacen("the command", "it", 1)
            )
        } else {
            let code = exit_code.map(|c| format!(", exit code {c}")).unwrap_or_default();
            format!("Task {} (`{command}`) had already ended ({}{code}); nothing to stop.", task.id, status.as_str())
        };
        let structured = TaskStopResult { task_id: task.id.clone(), stopped, status, exit_code };
        Ok(ToolOutput::text(text).with_structured(to_value(&structured)?))
    }
}
