//! `TaskUpdate`: changes one task of the task list (Claude Code's name and parameters).
//!
//! Every change of one call lands together or not at all: an unknown id, a deleted task or a
//! cycle of blockers refuses the whole call. Metadata is merged into the task's (a `null`
//! value removes its key); `deleted` removes the task from the list for good (its id is
//! never given again).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use toolbelt_core::{
    Access, Annotations, Category, Content, PermissionClass, Render, SideEffects, Tool, ToolContext, ToolError,
    ToolSpec,
};

use crate::blocking::run_blocking;
use crate::planning::task_store::ops::Changes;
use crate::planning::task_store::store::{TaskListError, TaskListStore};
use crate::planning::task_store::view::{TaskDetail, TaskStatus, parse_id};

/// Input of `TaskUpdate`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskUpdateInput {
    /// The task's id, as TaskCreate and TaskList give it ("3").
    #[serde(rename = "taskId")]
    pub task_id: String,
    /// The new status: `in_progress` when you start the task, `completed` when it is done,
    /// `deleted` to remove it from the list for good.
    pub status: Option<TaskStatus>,
    /// A new subject.
    #[schemars(length(min = 1))]
    pub subject: Option<String>,
    /// A new description.
    pub description: Option<String>,
    /// A new present-continuous form of the subject.
    #[serde(rename = "activeForm")]
    pub active_form: Option<String>,
    /// Who works on the task (an agent's name); an empty string clears it.
    pub owner: Option<String>,
    /// Keys to merge into the task's metadata; a key set to null is removed.
    pub metadata: Option<Map<String, Value>>,
    /// Ids of tasks that cannot start until this one is completed.
    #[serde(rename = "addBlocks")]
    pub add_blocks: Option<Vec<String>>,
    /// Ids of tasks that must be completed before this one can start.
    #[serde(rename = "addBlockedBy")]
    pub add_blocked_by: Option<Vec<String>>,
}

/// A status before and after an update.
#[derive(Debug, Serialize, JsonSchema)]
pub struct StatusChange {
    /// The status before.
    pub from: TaskStatus,
    /// The status after.
    pub to: TaskStatus,
}

/// What `TaskUpdate` did.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskUpdateOutput {
    /// The task as it is now.
    pub task: TaskDetail,
    /// The fields the call set.
    pub updated_fields: Vec<String>,
    /// The status before and after, when it changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_change: Option<StatusChange>,
    /// Things worth knowing, such as a task started while its blockers are still open.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Render for TaskUpdateOutput {
    /// `Updated task #3: status (pending → in_progress), owner.`, then any notes.
    fn render(&self) -> Vec<Content> {
        let id = &self.task.id;
        let mut text = if self.task.status == TaskStatus::Deleted {
            format!("Task #{id} deleted.")
        } else {
            let fields: Vec<String> = self
                .updated_fields
                .iter()
                .map(|f| match (&self.status_change, f.as_str()) {
                    (Some(c), "status") => format!("status ({} → {})", c.from.as_str(), c.to.as_str()),
                    _ => f.clone(),
                })
                .collect();
            format!("Updated task #{id}: {}.", fields.join(", "))
        };
        for note in &self.notes {
            text.push_str(&format!("\nNote: {note}."));
        }
        vec![Content::text(text)]
    }
}

/// The `TaskUpdate` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskUpdate;

const DESCRIPTION: &str = "Change a task of the task list. `status`: set `in_progress` before you start a task \
and `completed` as soon as it is done (not in batches later); `deleted` removes it from the list for good. \
`owner` says who works on it (set yourself when you take a task another agent could take; an empty string \
clears it); a task someone else owns is taken, and claiming it is refused until its owner is cleared. `metadata` is merged into the task's: a key set to null is removed. `addBlocks` names tasks that \
cannot start until this one is completed, `addBlockedBy` tasks that must be completed first. Also `subject`, \
`description` and `activeForm`. All changes of a call apply together or not at all: an unknown id, or blockers \
that would wait for each other in a circle, refuse the whole call and say why.";

impl Tool for TaskUpdate {
    type Input = TaskUpdateInput;
    type Output = TaskUpdateOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("TaskUpdate", DESCRIPTION)
            .title("Update a task")
            .aliases(["task_update", "update_task"])
            .param_alias("task_id", "taskId")
            .param_alias("active_form", "activeForm")
            .param_alias("add_blocks", "addBlocks")
            .param_alias("add_blocked_by", "addBlockedBy")
            .category(Category::Planning)
            .tags(["planning", "tasks"])
            // It changes toolbelt's own store in the user's state directory, never the
            // project's files, and declares that change (`changes_state`), which every mode
            // allows.
            .permission(PermissionClass::Write)
            .side_effects(SideEffects::LocalState)
            .annotations(Annotations { read_only: false, destructive: true, idempotent: false, open_world: false })
            .search_hint("task list update status complete start owner assign block depend delete")
    }

    fn access(&self, _input: &TaskUpdateInput, cx: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::exclusive().changes_state(TaskListStore::of(cx)?.label()))
    }

    async fn call(&self, input: TaskUpdateInput, cx: ToolContext) -> Result<TaskUpdateOutput, ToolError> {
        let id = parse_id(&input.task_id).ok_or_else(|| TaskListError::InvalidId(input.task_id.clone()))?;
        let ids = |list: Option<Vec<String>>| -> Result<Vec<i64>, TaskListError> {
            list.unwrap_or_default()
                .iter()
                .map(|text| parse_id(text).ok_or_else(|| TaskListError::InvalidId(text.clone())))
                .collect()
        };
        let changes = Changes {
            status: input.status,
            subject: input.subject,
            description: input.description,
            active_form: input.active_form,
            owner: input.owner,
            metadata: input.metadata,
            add_blocks: ids(input.add_blocks)?,
            add_blocked_by: ids(input.add_blocked_by)?,
        };
        run_blocking(&cx, move |cx| {
            let updated = TaskListStore::of(cx)?.update(id, changes)?;
            Ok(TaskUpdateOutput {
                task: updated.task,
                updated_fields: updated.fields,
                status_change: updated.status_change.map(|(from, to)| StatusChange { from, to }),
                notes: updated.notes,
            })
        })
        .await
    }
}
