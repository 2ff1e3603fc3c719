//! Agent definitions (placeholder until discovery lands).

use toolbelt_policy::PermissionMode;

/// An agent definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentDefinition {
    /// Its name.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// The tools it may use; every tool when absent.
    pub tools: Option<Vec<String>>,
    /// Tools it may not use.
    pub disallowed_tools: Vec<String>,
    /// Its model.
    pub model: Option<String>,
    /// Its permission mode.
    pub permission_mode: Option<PermissionMode>,
    /// Its turn limit.
    pub max_turns: Option<u32>,
    /// Its system prompt.
    pub system_prompt: String,
}
