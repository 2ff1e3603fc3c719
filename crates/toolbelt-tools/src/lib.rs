//! The built-in tools, one file per tool, grouped by family.
//!
//! Tools here implement [`toolbelt_core::Tool`]: they declare what a call touches and never
//! check permissions themselves — the runtime authorizes from the declaration. They see only
//! the narrow [`toolbelt_core::ToolContext`], never the runtime, the policy or MCP.

use std::sync::Arc;

use toolbelt_core::{DynTool, Registry, RegistryError, erase};

mod blocking;
pub mod files;
pub mod planning;
pub mod search;
pub mod shell;

/// Every built-in tool, erased, in no particular order (the registry sorts by name).
pub fn builtin() -> Vec<Arc<dyn DynTool>> {
    let mut tools = vec![erase(planning::TodoWrite)];
    tools.extend(files::tools());
    tools.extend(search::tools());
    tools.extend(shell::tools());
    tools
}

/// Registers every built-in tool.
pub fn register_builtin(registry: &Registry) -> Result<(), RegistryError> {
    builtin().into_iter().try_for_each(|tool| registry.register(tool))
}
