//! `TaskCreate`: adds a task to the task list (Claude Code's name and parameters).
//!
//! The task list outlives the session: it is kept on disk (see [`super::TaskListStore`]) and
//! shared by every session, sub-agent and process working on the same list. A new task is
//! `pending`, with no owner and nothing blocking it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use toolbelt_core::{
    Access, Annotations, Category, Content, PermissionClass, Render, SideEffects, Tool, ToolContext, ToolError,
    ToolSpec,
};

use crate::blocking::run_blocking;
use crate::planning::task_store::ops::NewTask;
use crate::planning::task_store::store::TaskListStore;
use crate::planning::task_store::view::TaskDetail;

/// Input of `TaskCreate`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskCreateInput {
    /// A short title, in the imperative ("Fix the login redirect").
    #[schemars(length(min = 1))]
    pub subject: String,
    /// What is to be done, with what whoever takes the task needs to know.
    pub description: String,
    /// The subject in the present continuous ("Fixing the login redirect"), shown while the
    /// task is in progress.
    #[serde(rename = "activeForm")]
    pub active_form: Option<String>,
    /// Anything to attach to the task, as a JSON object.
    pub metadata: Option<Map<String, Value>>,
}

/// What `TaskCreate` added.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TaskCreateOutput {
    /// The new task.
    pub task: TaskDetail,
}

impl Render for TaskCreateOutput {
    /// `Task #3 created: Fix the login redirect`.
    fn render(&self) -> Vec<Content> {
        vec![Content::text(format!("Task #{} created: {}", self.task.id, self.task.subject))]
    }
}

/// The `TaskCreate` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskCreate;

const DESCRIPTION: &str = "Add a task to the task list: the work items kept on disk for this project (or for \
the list chosen by name) and shared by every session and agent working on it, sub-agents included, so they outlive \
this session. Use it for work of several steps, or work that others may pick up. Give a short imperative \
`subject`, a `description` saying what is to be done, and `activeForm` (the subject in the present continuous, \
shown while the task is in progress). The task starts `pending`, with no owner; the answer gives its id, which \
TaskGet and TaskUpdate take. Say which tasks must wait for which with TaskUpdate (addBlocks, addBlockedBy). For a \
quick checklist of this session only, TodoWrite is lighter.";

impl Tool for TaskCreate {
    type Input = TaskCreateInput;
    type Output = TaskCreateOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("TaskCreate", DESCRIPTION)
            .title("Add a task")
            .aliases(["task_create", "create_task"])
            .param_alias("active_form", "activeForm")
            .category(Category::Planning)
            .tags(["planning", "tasks"])
            // It changes toolbelt's own store in the user's state directory, never the
            // project's files, and declares that change (`changes_state`), which every mode
            // allows.
            .permission(PermissionClass::Write)
            .side_effects(SideEffects::LocalState)
            .annotations(Annotations { read_only: false, destructive: false, idempotent: false, open_world: false })
            .search_hint("task list create add new todo work item plan shared")
    }

    fn access(&self, _input: &TaskCreateInput, cx: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::exclusive().changes_state(TaskListStore::of(cx)?.label()))
    }

    async fn call(&self, input: TaskCreateInput, cx: ToolContext) -> Result<TaskCreateOutput, ToolError> {
        run_blocking(&cx, move |cx| {
            let store = TaskListStore::of(cx)?;
            let new = NewTask {
                subject: input.subject,
                description: input.description,
                active_form: input.active_form,
                metadata: input.metadata.unwrap_or_default(),
            };
            Ok(TaskCreateOutput { task: store.create(new)? })
        })
        .await
    }
}
