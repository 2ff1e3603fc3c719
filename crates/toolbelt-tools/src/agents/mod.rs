//! Agent tools: `Agent` starts sub-agents, `SendMessage` continues them, `TeamCreate`,
//! `TeamDelete` and `TaskBroadcast` manage teams. Each reaches the agent loop through the
//! [`toolbelt_core::AgentService`] among the runtime's services; background agents are read
//! and stopped with the shell's `TaskOutput` and `TaskStop`, one set of task tools for both.
//!
//! They are not among [`crate::builtin`]: a front end registers them only when agents can
//! run (a model provider is configured, or an MCP host offers sampling), so they are never
//! listed and failing.

use std::sync::Arc;

use toolbelt_core::{DynTool, erase};

pub mod agent;
pub mod send_message;
pub(crate) mod support;
pub mod task_broadcast;
pub mod team;
pub mod team_create;
pub mod team_delete;

pub use crate::tasks::render_report;
pub use agent::{Agent, AgentInput};
pub use send_message::{SendMessage, SendMessageInput};
pub use support::AgentResult;
pub use task_broadcast::{TaskBroadcast, TaskBroadcastInput};
pub use team::TeamResult;
pub use team_create::{TeamCreate, TeamCreateInput};
pub use team_delete::{TeamDelete, TeamDeleteInput};

/// An agent type the `Agent` tool's description lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentType {
    /// Its name (`subagent_type`).
    pub name: String,
    /// What it is for (the first line is shown).
    pub description: String,
}

/// Every agent tool, erased; `Agent` listing `types`.
pub fn tools(types: &[AgentType]) -> Vec<Arc<dyn DynTool>> {
    vec![erase(Agent::new(types)), erase(SendMessage), erase(TeamCreate), erase(TeamDelete), erase(TaskBroadcast)]
}
