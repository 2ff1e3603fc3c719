//! Planning tools: the agent's own bookkeeping, kept in the session.
//!
//! The task list (`TaskCreate`, `TaskGet`, `TaskUpdate`, `TaskList`) is kept on disk instead,
//! shared by the sessions, sub-agents and processes working on one list; its machinery is in
//! [`task_store`], and which list a call works on is the [`TaskListStore`] service.

mod task_create;
mod task_get;
mod task_list;
pub mod task_store;
mod task_update;
mod todo_write;

pub use task_create::{TaskCreate, TaskCreateInput, TaskCreateOutput};
pub use task_get::{TaskGet, TaskGetInput, TaskGetOutput};
pub use task_list::{TaskList, TaskListInput};
pub use task_store::store::{DEFAULT_LIST, TASK_LIST_VAR, TaskListError, TaskListStore};
pub use task_store::view::{TaskDetail, TaskLine, TaskListing, TaskStatus};
pub use task_update::{StatusChange, TaskUpdate, TaskUpdateInput, TaskUpdateOutput};
pub use todo_write::{Todo, TodoList, TodoStatus, TodoWrite, TodoWriteInput, TodoWriteOutput};

/// The task list's tools, erased (`TodoWrite` is registered on its own).
pub fn task_tools() -> Vec<std::sync::Arc<dyn toolbelt_core::DynTool>> {
    use toolbelt_core::erase;
    vec![erase(TaskCreate), erase(TaskGet), erase(TaskUpdate), erase(TaskList)]
}
