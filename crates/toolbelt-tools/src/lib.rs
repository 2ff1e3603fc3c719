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
pub mod cron;
pub mod custom;
mod dirs;
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
pub mod storage;
mod tasks;
pub mod web;

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
    tools.extend(cron::tools());
    tools
}

/// Registers every built-in tool, described with the default limits.
pub fn register_builtin(registry: &Registry) -> Result<(), RegistryError> {
    register_builtin_with(registry, &CallLimits::DEFAULT)
}

/// Registers every built-in tool, described with `limits`. Their schemas, derived from their
/// types (and compiled by this crate's schema tests), are compiled at each tool's first call.
///
/// A tool this machine cannot run (PowerShell without `pwsh`) is registered disabled with
/// the reason: never listed, and a call by its name is answered with what to install.
pub fn register_builtin_with(registry: &Registry, limits: &CallLimits) -> Result<(), RegistryError> {
    let unavailable = shell::unavailable();
    builtin_with(limits).into_iter().try_for_each(|tool| {
        match unavailable.iter().find(|(name, _)| *name == tool.names().name) {
            Some((_, why)) => registry.register_disabled(tool, why.clone()),
            None => registry.register_lazy(tool),
        }
    })
}
