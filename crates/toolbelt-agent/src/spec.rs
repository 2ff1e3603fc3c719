//! What a run of an agent definition works with: its model, prompt, tools and limits.

use std::collections::HashSet;
use std::sync::Arc;

use toolbelt_core::AGENT_TOOLS;
use toolbelt_policy::{PermissionMode, SessionMode};
use toolbelt_runtime::{Runtime, Session};

use crate::config::AgentLimits;
use crate::definitions::AgentDefinition;
use crate::message::ToolDef;
use crate::provider::Provider;
use crate::run::RunSpec;

/// Model names that are another agent's aliases for its own models (`sonnet`, `inherit`…):
/// a definition written for it runs on the provider's default model here.
const MODEL_ALIASES: [&str; 5] = ["inherit", "sonnet", "opus", "haiku", "default"];

/// The run spec of `def` on `provider`: the model asked for (else the definition's, else the
/// provider's default), the definition's prompt and tools from `runtime`'s registry, its turn
/// limit within `limits`. The agent tools are among its tools only when `may_spawn`.
pub fn run_spec(
    runtime: &Runtime,
    provider: Arc<dyn Provider>,
    model: Option<&str>,
    def: &AgentDefinition,
    limits: &AgentLimits,
    may_spawn: bool,
) -> RunSpec {
    let model = model
        .map(str::to_string)
        .or_else(|| def.model.clone())
        .filter(|m| !MODEL_ALIASES.contains(&m.to_ascii_lowercase().as_str()))
        .unwrap_or_else(|| provider.default_model().to_string());
    let (tools, allowed) = tool_set(runtime, def, may_spawn, provider.supports_tools());
    RunSpec {
        provider,
        model,
        system: def.system_prompt.clone(),
        tools,
        allowed,
        max_turns: def.max_turns.map_or(limits.max_turns, |t| t.min(limits.max_turns)),
        budget: limits.time_budget,
        max_tokens: limits.max_tokens,
    }
}

/// Makes `session`'s permission mode `wanted` when that is stricter than the mode in force
/// (an agent definition can tighten the policy, never loosen it).
pub fn apply_mode(runtime: &Runtime, session: &Session, wanted: Option<PermissionMode>) {
    if let (Some(current), Some(wanted)) = (runtime.permission_mode(session.state()), wanted) {
        let mode = current.stricter(wanted);
        if mode != current {
            session.state().with_slot::<SessionMode, _>(|m| m.mode = Some(mode));
        }
    }
}

/// The tools an agent of `def` is shown and may call: the definition's list (every tool
/// when it has none) less its disallowed ones, less the agent tools unless it may start
/// agents itself; none when the provider takes no tools.
fn tool_set(
    runtime: &Runtime,
    def: &AgentDefinition,
    may_spawn: bool,
    takes_tools: bool,
) -> (Vec<ToolDef>, HashSet<String>) {
    let mut tools = Vec::new();
    let mut allowed = HashSet::new();
    if !takes_tools {
        return (tools, allowed);
    }
    for entry in runtime.registry().entries() {
        let spec = entry.spec();
        if !entry.is_enabled() {
            continue;
        }
        let listed = def.tools.as_ref().is_none_or(|list| list.iter().any(|n| n == "*" || spec.answers_to(n)));
        let barred = def.disallowed_tools.iter().any(|n| spec.answers_to(n));
        let agent_tool = AGENT_TOOLS.contains(&spec.name.as_str());
        if !listed || barred || (agent_tool && !may_spawn) {
            continue;
        }
        allowed.insert(spec.name.clone());
        tools.push(ToolDef {
            name: spec.name.clone(),
            description: spec.description.clone(),
            input_schema: spec.input_schema.clone(),
        });
    }
    (tools, allowed)
}
