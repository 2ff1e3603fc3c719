//! What a run of an agent definition works with: its model, prompt, tools and limits.

use std::collections::HashSet;
use std::sync::Arc;

use toolbelt_core::EventSink;
use toolbelt_policy::{PermissionMode, SessionMode};
use toolbelt_runtime::{Runtime, Session};

use crate::config::AgentLimits;
use crate::definitions::{AgentDefinition, AgentTools};
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
    let (tools, allowed, deferred) = tool_set(runtime, def, may_spawn, provider.supports_tools());
    RunSpec {
        provider,
        model,
        system: def.system_prompt.clone(),
        tools,
        allowed,
        deferred: Arc::new(deferred),
        max_turns: def.max_turns.map_or(limits.max_turns, |t| t.min(limits.max_turns)),
        budget: limits.time_budget,
        max_tokens: limits.max_tokens,
        tool_events: EventSink::none(),
        definition: def.name.clone(),
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

/// The tools an agent of `def` is shown and may call, out of `runtime`'s enabled tools
/// ([`AgentDefinition::tool_set`]), and which of them are deferred (shown once loaded); none
/// when the provider takes no tools. Descriptions are as the tools give them to `session`.
fn tool_set(
    runtime: &Runtime,
    def: &AgentDefinition,
    may_spawn: bool,
    takes_tools: bool,
) -> (Arc<[ToolDef]>, HashSet<String>, HashSet<String>) {
    if !takes_tools {
        return (Arc::from([]), HashSet::new(), HashSet::new());
    }
    let registry = runtime.registry();
    let entries: Vec<_> = registry.entries().into_iter().filter(|e| e.is_enabled()).collect();
    let names: Vec<&str> = entries.iter().map(|e| e.spec().name.as_str()).collect();
    let resolve = |name: &str| registry.entry(name).map(|e| e.spec().name.clone());
    let agent_tools = if may_spawn { AgentTools::AsListed } else { AgentTools::Withheld };
    let set = def.tool_set(&names, resolve, agent_tools);
    let deferred: HashSet<String> = registry.deferred().into_iter().filter(|n| set.contains(n)).collect();
    let tools = entries
        .iter()
        .filter(|e| set.contains(&e.spec().name))
        .map(|e| ToolDef {
            name: e.spec().name.clone(),
            description: e.spec().description.clone(),
            input_schema: e.spec().input_schema.clone(),
        })
        .collect();
    (tools, set.tools.into_iter().collect(), deferred)
}
