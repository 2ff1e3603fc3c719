//! `TaskList`: the task list, in id order (Claude Code's name). Background shell commands and
//! agents are listed by `BackgroundTasks`.

use schemars::JsonSchema;
use serde::Deserialize;
use toolbelt_core::{Access, Annotations, Category, Content, Render, Tool, ToolContext, ToolError, ToolSpec};

use crate::blocking::run_blocking;
use crate::planning::task_store::store::TaskListStore;
use crate::planning::task_store::view::TaskListing;

/// Input of `TaskList` (none).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskListInput {}

impl Render for TaskListing {
    /// One line per task: `#3 [pending] Ship it (owner: alice) [blocked by #1, #2]`.
    fn render(&self) -> Vec<Content> {
        let text = if self.tasks.is_empty() {
            match &self.list {
                Some(name) => format!("No tasks in the task list `{name}`. Add one with TaskCreate."),
                None => "No tasks. Add one with TaskCreate.".to_string(),
            }
        } else {
            self.tasks.iter().map(|t| t.text()).collect::<Vec<_>>().join("\n")
        };
        vec![Content::text(text)]
    }
}

/// The `TaskList` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskList;

const DESCRIPTION: &str = "List the task list: each task's id, status, subject, owner, and the tasks still \
blocking it (those not completed yet), in id order; deleted tasks are gone. Use it to see what is left and to \
pick the next task: a pending one with no owner and nothing blocking it, lowest id first. The list is shared \
with other agents and sessions, so look again before taking a task, and claim it with TaskUpdate (owner, \
status in_progress). TaskGet shows a task in full. Background shell commands and agents are listed by \
BackgroundTasks, not here.";

impl Tool for TaskList {
    type Input = TaskListInput;
    type Output = TaskListing;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("TaskList", DESCRIPTION)
            .title("List the tasks")
            .aliases(["task_list", "list_tasks"])
            .category(Category::Planning)
            .tags(["planning", "tasks"])
            .read_only()
            .annotations(Annotations { read_only: true, destructive: false, idempotent: true, open_world: false })
            .search_hint("task list tasks todo work items status owner blockers next")
    }

    fn access(&self, _input: &TaskListInput, _cx: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::shared())
    }

    async fn call(&self, _input: TaskListInput, cx: ToolContext) -> Result<TaskListing, ToolError> {
        run_blocking(&cx, |cx| Ok(TaskListStore::of(cx)?.list()?)).await
    }
}
