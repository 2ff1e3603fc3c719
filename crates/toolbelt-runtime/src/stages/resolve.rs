//! Stage 1: find the tool by name or alias.

use toolbelt_core::{ToolEntry, ToolError};

use crate::runtime::Runtime;

/// Looks the name up; an unknown name's error lists the closest registered tools.
pub(super) fn run(rt: &Runtime, name: &str) -> Result<ToolEntry, ToolError> {
    rt.registry.lookup(name)
}
