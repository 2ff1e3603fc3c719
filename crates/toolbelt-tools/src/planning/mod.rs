//! Planning tools: the agent's own bookkeeping and plan mode — `TodoWrite` (the session's
//! checklist), `EnterPlanMode`/`ExitPlanMode` (plan first, then a person approves), `Think`.

mod enter_plan_mode;
mod exit_plan_mode;
mod think;
mod todo_write;

pub use enter_plan_mode::{EnterPlanMode, EnterPlanModeInput, EnterPlanModeOutput, PlanState};
pub use exit_plan_mode::{AllowedPrompt, ExitPlanMode, ExitPlanModeInput, ExitPlanModeOutput};
pub use think::{Think, ThinkInput, ThinkOutput};
pub use todo_write::{Todo, TodoList, TodoStatus, TodoWrite, TodoWriteInput, TodoWriteOutput};

use std::sync::Arc;

use toolbelt_core::{DynTool, erase};

/// Every planning tool, erased.
pub fn tools() -> Vec<Arc<dyn DynTool>> {
    vec![erase(TodoWrite), erase(EnterPlanMode), erase(ExitPlanMode), erase(Think)]
}
