//! Planning tools: the agent's own bookkeeping, kept in the session.
//!
//! The worktree tools (`EnterWorktree`, `ExitWorktree`) live here too — which checkout the
//! session works in is part of its bookkeeping — with what they share in [`worktree`].

mod todo_write;

pub use todo_write::{Todo, TodoList, TodoStatus, TodoWrite, TodoWriteInput, TodoWriteOutput};

mod enter_worktree;
mod exit_worktree;
pub(crate) mod worktree;

pub use enter_worktree::{EnterWorktree, EnterWorktreeInput, EnterWorktreeOutput, WorktreeOrigin};
pub use exit_worktree::{ExitAction, ExitOutcome, ExitWorktree, ExitWorktreeInput, ExitWorktreeOutput};
pub use worktree::session::{EnteredWorktree, WorktreeDir, WorktreeSession, resume as resume_worktree};

/// The worktree tools, erased.
pub fn worktree_tools() -> Vec<std::sync::Arc<dyn toolbelt_core::DynTool>> {
    vec![toolbelt_core::erase(EnterWorktree), toolbelt_core::erase(ExitWorktree)]
}
