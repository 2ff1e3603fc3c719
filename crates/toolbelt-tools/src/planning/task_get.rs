//! `TaskGet`: one task of the task list in full (Claude Code's name and parameters).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{Access, Annotations, Category, Content, Render, Tool, ToolContext, ToolError, ToolSpec};

use crate::blocking::run_blocking;
use crate::planning::task_store::store::{TaskListError, TaskListStore};
use crate::planning::task_store::view::{TaskDetail, parse_id};

/// Input of `TaskGet`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskGetInput {
    /// The task's id, as TaskCreate and TaskList give it ("3").
    #[serde(rename = "taskId")]
    pub task_id: String,
}

/// The task `TaskGet` read.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TaskGetOutput {
    /// The task.
    pub task: TaskDetail,
}

impl Render for TaskGetOutput {
    /// Subject, status, owner, description, blockers (open or done) and metadata, a line each.
    fn render(&self) -> Vec<Content> {
        vec![Content::text(self.task.text())]
    }
}

/// The `TaskGet` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskGet;

const DESCRIPTION: &str = "Read one task of the task list in full: subject, description, status, owner, \
metadata, the tasks it blocks and the tasks blocking it (each marked open or done). Read a task before starting \
it, to know what it asks and whether anything still blocks it. Ids come from TaskCreate and TaskList.";

impl Tool for TaskGet {
    type Input = TaskGetInput;
    type Output = TaskGetOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("TaskGet", DESCRIPTION)
            .title("Read a task")
            .aliases(["task_get", "get_task"])
            .param_alias("task_id", "taskId")
            .category(Category::Planning)
            .tags(["planning", "tasks"])
            .read_only()
            .annotations(Annotations { read_only: true, destructive: false, idempotent: true, open_world: false })
            .search_hint("task list get read show details blockers")
    }

    fn access(&self, _input: &TaskGetInput, _cx: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::shared())
    }

    async fn call(&self, input: TaskGetInput, cx: ToolContext) -> Result<TaskGetOutput, ToolError> {
        let id = parse_id(&input.task_id).ok_or_else(|| TaskListError::InvalidId(input.task_id.clone()))?;
        run_blocking(&cx, move |cx| Ok(TaskGetOutput { task: TaskListStore::of(cx)?.get(id)? })).await
    }
}
