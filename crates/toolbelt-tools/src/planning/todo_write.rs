//! `TodoWrite`: the agent's checklist for the session, replaced whole on every call (the
//! persistent, shared task list is `TaskCreate` and its siblings).
//!
//! Same shape as Claude Code's (`todos[{content, status, activeForm}]`), so models use it
//! without being taught. The list lives in the session (and survives across invocations of
//! a named CLI session); each call answers with the list and what changed since the last
//! call, so the model sees at a glance that its update landed.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{
    Access, Annotations, Category, Content, PermissionClass, Render, SessionSlot, SideEffects, Tool, ToolContext,
    ToolError, ToolSpec,
};

/// Where a task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on now (keep exactly one task in progress).
    InProgress,
    /// Done.
    Completed,
}

/// One task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Todo {
    /// What to do, in the imperative ("Run the tests").
    #[schemars(length(min = 1))]
    pub content: String,
    /// Where the task stands.
    pub status: TodoStatus,
    /// The same task in the present continuous ("Running the tests"), shown while it is in
    /// progress.
    #[serde(rename = "activeForm")]
    #[schemars(length(min = 1))]
    pub active_form: String,
}

/// Input of `TodoWrite`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoWriteInput {
    /// The whole updated list, in order. It replaces the previous list.
    pub todos: Vec<Todo>,
}

/// The session's task list.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TodoList {
    /// The tasks, in order.
    pub todos: Vec<Todo>,
}

impl SessionSlot for TodoList {
    const KEY: &'static str = "todos";
    const SHARED: bool = true;
}

/// The structured result of `TodoWrite`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TodoWriteOutput {
    /// The list as it is now.
    pub todos: Vec<Todo>,
    /// How many tasks are pending.
    pub pending: usize,
    /// How many tasks are in progress.
    pub in_progress: usize,
    /// How many tasks are completed.
    pub completed: usize,
    /// What changed since the previous list ("2 added", "1 completed").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<String>,
    /// A nudge when not exactly one task is in progress.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The nudge for a list with `in_progress` tasks in progress and `pending` pending.
fn nudge(in_progress: usize, pending: usize) -> Option<String> {
    if in_progress > 1 {
        Some(format!("{in_progress} tasks are in progress; keep exactly one in progress and finish it first."))
    } else if in_progress == 0 && pending > 0 {
        Some("no task is in progress; mark the next one `in_progress` before starting it.".to_string())
    } else {
        None
    }
}

impl Render for TodoWriteOutput {
    /// The counts, what changed, the list as checkboxes, and a nudge when not exactly one
    /// task is in progress.
    fn render(&self) -> Vec<Content> {
        let (todos, pending, in_progress, completed) = (&self.todos, self.pending, self.in_progress, self.completed);
        let mut text = format!(
            "Todo list updated: {} task{} ({completed} completed, {in_progress} in progress, {pending} pending).",
            todos.len(),
            if todos.len() == 1 { "" } else { "s" }
        );
        if !self.changes.is_empty() {
            text.push_str(&format!(" Since the last update: {}.", self.changes.join(", ")));
        }
        for t in todos {
            let line = match t.status {
                TodoStatus::Completed => format!("\n[x] {}", t.content),
                TodoStatus::InProgress => format!("\n[~] {}", t.active_form),
                TodoStatus::Pending => format!("\n[ ] {}", t.content),
            };
            text.push_str(&line);
        }
        if let Some(note) = &self.note {
            text.push_str(&format!("\nNote: {note}"));
        }
        vec![Content::text(text)]
    }
}

/// The `TodoWrite` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct TodoWrite;

const DESCRIPTION: &str = "Create and manage a structured task list for the current session. \
Send the whole list every time: it replaces the previous one. Use it for work with three or \
more steps: add the steps as `pending`, mark one `in_progress` before starting it, and mark it \
`completed` as soon as it is done (do not batch completions). Keep exactly one task in progress. \
Each task has `content` (imperative: \"Run the tests\") and `activeForm` (present continuous: \
\"Running the tests\"). For work that must outlive this session or be shared with other agents, use the task \
list instead (TaskCreate, TaskUpdate, TaskList).";

impl Tool for TodoWrite {
    type Input = TodoWriteInput;
    type Output = TodoWriteOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("TodoWrite", DESCRIPTION)
            .title("Update the todo list")
            .aliases(["todo_write"])
            .category(Category::Planning)
            .tags(["planning", "session"])
            // It changes nothing outside the session, so it needs no permission beyond a read's.
            .permission(PermissionClass::Read)
            .side_effects(SideEffects::LocalState)
            .annotations(Annotations { read_only: false, destructive: false, idempotent: true, open_world: false })
            .search_hint("todo task list plan checklist progress steps")
    }

    fn access(&self, _input: &TodoWriteInput, _cx: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::exclusive().changes_state(TodoList::KEY))
    }

    async fn call(&self, input: TodoWriteInput, cx: ToolContext) -> Result<TodoWriteOutput, ToolError> {
        let previous = cx.with_slot::<TodoList, _>(|list| std::mem::replace(&mut list.todos, input.todos.clone()));
        let todos = input.todos;
        let count = |s: TodoStatus| todos.iter().filter(|t| t.status == s).count();
        let (pending, in_progress, completed) =
            (count(TodoStatus::Pending), count(TodoStatus::InProgress), count(TodoStatus::Completed));
        let changes = describe_changes(&previous, &todos);
        let note = nudge(in_progress, pending);
        Ok(TodoWriteOutput { todos, pending, in_progress, completed, changes, note })
    }
}

/// "2 added, 1 completed, 1 removed": what changed between two lists, by task content.
fn describe_changes(before: &[Todo], after: &[Todo]) -> Vec<String> {
    let find = |list: &[Todo], content: &str| list.iter().find(|t| t.content == content).map(|t| t.status);
    let added = after.iter().filter(|t| find(before, &t.content).is_none()).count();
    let removed = before.iter().filter(|t| find(after, &t.content).is_none()).count();
    let newly = |status: TodoStatus| {
        after.iter().filter(|t| t.status == status && find(before, &t.content).is_some_and(|s| s != status)).count()
    };
    let mut out = Vec::new();
    for (n, what) in [
        (added, "added"),
        (newly(TodoStatus::Completed), "completed"),
        (newly(TodoStatus::InProgress), "started"),
        (newly(TodoStatus::Pending), "reopened"),
        (removed, "removed"),
    ] {
        if n > 0 {
            out.push(format!("{n} {what}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use toolbelt_core::{Prepared, ToolOutput, erase};

    /// Runs a call the way the registry does, through the erased tool.
    async fn call(input: TodoWriteInput, cx: &ToolContext) -> ToolOutput {
        erase(TodoWrite).call(Prepared::new(serde_json::Value::Null, input), cx.clone()).await.unwrap()
    }

    fn todo(content: &str, status: TodoStatus) -> Todo {
        Todo { content: content.into(), status, active_form: format!("{content}ing") }
    }

    #[tokio::test]
    async fn replaces_the_list_and_reports_changes() {
        let cx = ToolContext::detached(PathBuf::from("/"));
        let first =
            TodoWriteInput { todos: vec![todo("Plan", TodoStatus::InProgress), todo("Build", TodoStatus::Pending)] };
        let out = call(first, &cx).await;
        assert_eq!(
            out.joined_text(),
            "Todo list updated: 2 tasks (0 completed, 1 in progress, 1 pending). Since the last update: 2 added.\n\
             [~] Planing\n[ ] Build"
        );
        let second = TodoWriteInput {
            todos: vec![
                todo("Plan", TodoStatus::Completed),
                todo("Build", TodoStatus::InProgress),
                todo("Ship", TodoStatus::Pending),
            ],
        };
        let out = call(second, &cx).await;
        assert!(
            out.joined_text().contains("Since the last update: 1 added, 1 completed, 1 started."),
            "{}",
            out.joined_text()
        );
        assert_eq!(out.structured.as_ref().unwrap()["completed"], 1);
        assert_eq!(cx.with_slot::<TodoList, _>(|l| l.todos.len()), 3);
    }

    #[tokio::test]
    async fn nudges_when_not_exactly_one_task_is_in_progress() {
        let cx = ToolContext::detached(PathBuf::from("/"));
        let two = TodoWriteInput { todos: vec![todo("A", TodoStatus::InProgress), todo("B", TodoStatus::InProgress)] };
        let text = call(two, &cx).await.joined_text();
        assert!(text.ends_with("2 tasks are in progress; keep exactly one in progress and finish it first."));
        let none = TodoWriteInput { todos: vec![todo("A", TodoStatus::Pending)] };
        let text = call(none, &cx).await.joined_text();
        assert!(text.ends_with("mark the next one `in_progress` before starting it."));
    }
}
