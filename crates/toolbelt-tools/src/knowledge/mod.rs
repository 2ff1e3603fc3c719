//! Knowledge and discovery: what an agent can find out about its own tools and skills —
//! `ToolSearch` (loading deferred tools) and `Skill` (loading a skill's instruction). One
//! file per tool; skills' discovery in [`skills`].

use std::sync::Arc;

use toolbelt_core::{DynTool, erase};

pub mod skill;
pub mod skills;
mod support;
pub mod tool_search;

/// Every knowledge tool, erased.
pub fn tools() -> Vec<Arc<dyn DynTool>> {
    vec![erase(tool_search::ToolSearch::default()), erase(skill::SkillTool)]
}
