//! Knowledge and discovery: what an agent can find out about its own tools and skills —
//! `ToolSearch` (loading deferred tools). One file per tool.

use std::sync::Arc;

use toolbelt_core::{DynTool, erase};

mod support;
pub mod tool_search;

/// Every knowledge tool, erased.
pub fn tools() -> Vec<Arc<dyn DynTool>> {
    vec![erase(tool_search::ToolSearch::default())]
}
