//! Interaction tools: talking to the person behind the session, through the runtime's
//! [`toolbelt_core::Asker`] — `AskUserQuestion` (questions with choices) and `Brief` (a
//! message). One file each.

use std::sync::Arc;

use toolbelt_core::{DynTool, erase};

pub mod ask_user_question;
pub mod brief;

/// Every interaction tool, erased.
pub fn tools() -> Vec<Arc<dyn DynTool>> {
    vec![erase(ask_user_question::AskUserQuestion), erase(brief::Brief)]
}
