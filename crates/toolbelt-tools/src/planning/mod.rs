//! Planning tools: the agent's own bookkeeping, kept in the session — `TodoWrite` (the
//! session's checklist), `EnterPlanMode`/`ExitPlanMode` (plan first, then a person approves),
//! `Think`, and the worktree tools (`EnterWorktree`, `ExitWorktree`: which checkout the
//! session works in), with what they share in [`worktree`].

mod enter_plan_mode;
mod enter_worktree;
mod exit_plan_mode;
mod exit_worktree;
mod think;
mod todo_write;
pub(crate) mod worktree;

pub use enter_plan_mode::{EnterPlanMode, EnterPlanModeInput, EnterPlanModeOutput, PlanState};
pub use enter_worktree::{EnterWorktree, EnterWorktreeInput, EnterWorktreeOutput, WorktreeOrigin};
pub use exit_plan_mode::{AllowedPrompt, ExitPlanMode, ExitPlanModeInput, ExitPlanModeOutput};
pub use exit_worktree::{ExitAction, ExitOutcome, ExitWorktree, ExitWorktreeInput, ExitWorktreeOutput};
pub use think::{Think, ThinkInput, ThinkOutput};
pub use todo_write::{Todo, TodoList, TodoStatus, TodoWrite, TodoWriteInput, TodoWriteOutput};
pub use worktree::session::{EnteredWorktree, WorktreeDir, WorktreeSession, resume as resume_worktree};

use std::sync::Arc;

use toolbelt_core::{DynTool, erase};

/// Every planning tool but the worktree ones, erased.
pub fn tools() -> Vec<Arc<dyn DynTool>> {
    vec![erase(TodoWrite), erase(EnterPlanMode), erase(ExitPlanMode), erase(Think)]
}

/// The worktree tools, erased.
pub fn worktree_tools() -> Vec<Arc<dyn DynTool>> {
    vec![erase(EnterWorktree), erase(ExitWorktree)]
}
