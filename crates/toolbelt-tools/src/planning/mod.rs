//! Planning tools: the agent's own bookkeeping — `TodoWrite` (the session's checklist),
//! `EnterPlanMode`/`ExitPlanMode` (plan first, then a person approves), `Think`, and the
//! worktree tools (`EnterWorktree`, `ExitWorktree`: which checkout the session works in),
//! with what they share in [`worktree`].
//!
//! The task list (`TaskCreate`, `TaskGet`, `TaskUpdate`, `TaskList`) is kept on disk instead,
//! shared by the sessions, sub-agents and processes working on one list; its machinery is in
//! [`task_store`], and which list a call works on is the [`TaskListStore`] service.

mod enter_plan_mode;
mod enter_worktree;
mod exit_plan_mode;
mod exit_worktree;
mod task_create;
mod task_get;
mod task_list;
pub mod task_store;
mod task_update;
mod think;
mod todo_write;
pub(crate) mod worktree;

pub use enter_plan_mode::{EnterPlanMode, EnterPlanModeInput, EnterPlanModeOutput, PlanState};
pub use enter_worktree::{EnterWorktree, EnterWorktreeInput, EnterWorktreeOutput, WorktreeOrigin};
pub use exit_plan_mode::{AllowedPrompt, ExitPlanMode, ExitPlanModeInput, ExitPlanModeOutput};
pub use exit_worktree::{ExitAction, ExitOutcome, ExitWorktree, ExitWorktreeInput, ExitWorktreeOutput};
pub use task_create::{TaskCreate, TaskCreateInput, TaskCreateOutput};
pub use task_get::{TaskGet, TaskGetInput, TaskGetOutput};
pub use task_list::{TaskList, TaskListInput};
pub use task_store::store::{DEFAULT_LIST, TASK_LIST_VAR, TaskListError, TaskListStore};
pub use task_store::view::{TaskDetail, TaskLine, TaskListing, TaskStatus};
pub use task_update::{StatusChange, TaskUpdate, TaskUpdateInput, TaskUpdateOutput};
pub use think::{Think, ThinkInput, ThinkOutput};
pub use todo_write::{Todo, TodoList, TodoStatus, TodoWrite, TodoWriteInput, TodoWriteOutput};
pub use worktree::session::{EnteredWorktree, WorktreeDir, WorktreeSession, resume as resume_worktree};

use std::sync::Arc;

use toolbelt_core::{DynTool, erase};

/// Every planning tool but the worktree and task list ones, erased.
pub fn tools() -> Vec<Arc<dyn DynTool>> {
    vec![erase(TodoWrite), erase(EnterPlanMode), erase(ExitPlanMode), erase(Think)]
}

/// The worktree tools, erased.
pub fn worktree_tools() -> Vec<Arc<dyn DynTool>> {
    vec![erase(EnterWorktree), erase(ExitWorktree)]
}

/// The task list's tools, erased.
pub fn task_tools() -> Vec<Arc<dyn DynTool>> {
    vec![erase(TaskCreate), erase(TaskGet), erase(TaskUpdate), erase(TaskList)]
}
