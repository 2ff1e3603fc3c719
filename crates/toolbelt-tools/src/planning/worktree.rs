//! What `EnterWorktree` and `ExitWorktree` share; none of it is a tool.
//!
//! * [`git`]: git run so that it starts no program a repository names (hooks, filters, the
//!   file-system monitor);
//! * [`shadow`]: the repository of toolbelt's own that checkouts and `status` run in, so no
//!   filter the repository defines can run;
//! * [`session`]: where worktrees are made, the session slot that remembers what was entered,
//!   names, and how the working directory and workspace roots move into a worktree and back;
//! * [`at_risk`]: what removing a worktree would lose.
//!
//! Kept apart from the other planning tools' helpers (a module of its own, not `support`) so
//! the worktree tools stay one self-contained corner of the family.

pub(crate) mod at_risk;
pub(crate) mod git;
pub(crate) mod session;
pub(crate) mod shadow;
