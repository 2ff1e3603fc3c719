//! The built-in tools, one file per tool, grouped by family.
//!
//! Tools here implement [`toolbelt_core::Tool`]: they declare what a call touches and never
//! check permissions themselves — the runtime authorizes from the declaration. They see only
//! the narrow [`toolbelt_core::ToolContext`], never the runtime, the policy or MCP.

use std::sync::Arc;

use toolbelt_core::{CallLimits, DynTool, Registry, RegistryError};

pub mod agents;
mod blocking;
pub mod code;
pub mod files;
mod formats;
mod fs;
pub mod interaction;
pub mod knowledge;
pub mod language_servers;
pub mod planning;
mod process;
pub mod search;
pub mod settings;
pub mod shell;
pub mod snippets;
mod sqlite;
mod tasks;
pub mod web;

/// `$XDG_STATE_HOME/toolbelt` (`~/.local/state/toolbelt`; a per-user folder of the temp
/// directory when neither variable is set): where tools keep what they make outside the
/// project when the front end named no place for it.
pub(crate) fn default_state_dir() -> std::path::PathBuf {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(std::path::PathBuf::from);
    let state = var("XDG_STATE_HOME")
        .or_else(|| var("HOME").map(|h| h.join(".local/state")))
        .unwrap_or_else(|| std::env::temp_dir().join(format!("toolbelt-{}", nix::unistd::geteuid())));
    state.join("toolbelt")
}

/// `$XDG_DATA_HOME/toolbelt` (`~/.local/share/toolbelt`; a per-user folder of the temp
/// directory when neither variable is set): where tools keep what the user makes to keep
/// (snippets) when the front end named no place for it.
pub(crate) fn default_data_dir() -> std::path::PathBuf {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(std::path::PathBuf::from);
    let data = var("XDG_DATA_HOME")
        .or_else(|| var("HOME").map(|h| h.join(".local/share")))
        .unwrap_or_else(|| std::env::temp_dir().join(format!("toolbelt-{}", nix::unistd::geteuid())));
    data.join("toolbelt")
}

/// Every built-in tool, erased, in no particular order (the registry sorts by name), described
/// with the default limits.
pub fn builtin() -> Vec<Arc<dyn DynTool>> {
    builtin_with(&CallLimits::DEFAULT)
}

/// Every built-in tool, described with the limits the runtime will enforce (a description
/// that states a timeout or an output budget states these).
pub fn builtin_with(limits: &CallLimits) -> Vec<Arc<dyn DynTool>> {
    let mut tools = planning::tools();
    tools.extend(interaction::tools());
    tools.extend(knowledge::tools());
    tools.extend(code::tools());
    tools.extend(files::tools());
    tools.extend(search::tools());
    tools.extend(shell::tools(limits));
    tools.extend(web::tools());
    tools.extend(planning::worktree_tools());
    tools.extend(planning::task_tools());
    tools.extend(snippets::tools());
    tools
}

/// Registers every built-in tool, described with the default limits.
pub fn register_builtin(registry: &Registry) -> Result<(), RegistryError> {
    register_builtin_with(registry, &CallLimits::DEFAULT)
}

/// Registers every built-in tool, described with `limits`. Their schemas, derived from their
/// types (and compiled by this crate's schema tests), are compiled at each tool's first call.
pub fn register_builtin_with(registry: &Registry, limits: &CallLimits) -> Result<(), RegistryError> {
    builtin_with(limits).into_iter().try_for_each(|tool| registry.register_lazy(tool))
}
