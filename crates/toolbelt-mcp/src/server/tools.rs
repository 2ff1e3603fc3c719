//! The registry's tools as MCP `Tool`s, for `tools/list`, and which of them a session gets:
//! the agent tools only where agents can run.

use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::Value;
use toolbelt_core::{AGENT_TOOLS, Agents, ToolSpec};
use toolbelt_runtime::{Runtime, Session};

/// Whether `name` (a canonical name) is one of the agent tools.
pub(super) fn is_agent_tool(name: &str) -> bool {
    AGENT_TOOLS.contains(&name)
}

/// The deferred tools `session` has loaded (`ToolSearch`), to see whether a call loaded more.
pub(super) fn loaded(session: &Session) -> usize {
    session.state().with_slot::<toolbelt_core::LoadedTools, _>(|l| l.names.len())
}

/// Whether agents can run in `session`: the runtime has an agent host, and it has a model for
/// this session (a provider of its own, or the session's client offers sampling).
pub(super) fn agents_run_in(runtime: &Runtime, session: &Session) -> bool {
    runtime.services().get::<Agents>().is_some_and(|agents| agents.0.available(session.state()))
}

/// The refusal of a call to an agent tool in a session where agents cannot run (the tool is
/// not listed there): what is missing and what to configure. `None` for any other call.
/// `inline`: the client speaks 2026-07-28, where it cannot lend its model mid-call.
pub(super) fn refuse_agent_tool(runtime: &Runtime, session: &Session, name: &str, inline: bool) -> Option<McpError> {
    // By name or alias (`Task` is `Agent`); a tool a deny rule hides is the runtime's to refuse.
    let entry = runtime.registry().lookup(name).ok()?;
    let canonical = &entry.spec().name;
    if !is_agent_tool(canonical) || agents_run_in(runtime, session) {
        return None;
    }
    // Providers are configured, but none could be set up (a key variable the host did not
    // pass on): which, and what to set, as `toolbelt config check` says it.
    if let Some(why) = runtime.services().get::<Agents>().and_then(|agents| agents.0.unusable()) {
        return Some(McpError::invalid_params(
            format!(
                "`{canonical}` is not available in this session: agents need a model, and none is usable here: \
                 {why}. (Agents can also run on the host's own model when the client declares the `sampling` \
                 capability, with `sampling.tools` so they can use tools; this one does not.)"
            ),
            None,
        ));
    }
    if inline {
        return Some(McpError::invalid_params(
            format!(
                "`{canonical}` is not available in this session: agents need a model, and there is none here — this \
                 client speaks MCP 2026-07-28, where a server cannot use the client's model in the middle of a call \
                 (MCP sampling needs a session opened with initialize, up to 2025-11-25), and no model provider is \
                 configured for agents. Configure a provider where the server runs (set OPENAI_API_KEY or \
                 ANTHROPIC_API_KEY, or add [agent.providers.NAME] to the settings), or connect with the initialize \
                 handshake and the `sampling` capability"
            ),
            None,
        ));
    }
    Some(McpError::invalid_params(
        format!(
            "`{canonical}` is not available in this session: agents need a model, and there is none here — this \
             client does not offer MCP sampling and no model provider is configured for agents. Declare the \
             `sampling` capability in the client (with `sampling.tools` so agents can use tools), or configure a \
             provider where the server runs (set OPENAI_API_KEY or ANTHROPIC_API_KEY, or add [agent.providers.NAME] \
             to the settings; `toolbelt config check` says what is in force)"
        ),
        None,
    ))
}

/// A tool as `tools/list` shows it: its name, title, description, input and output schemas,
/// and its behaviour hints (with the title again, for clients that read it there).
pub(super) fn to_mcp(spec: &ToolSpec) -> Result<Tool, McpError> {
    let a = spec.annotations;
    let mut annotations = ToolAnnotations::new()
        .read_only(a.read_only)
        .destructive(a.destructive)
        .idempotent(a.idempotent)
        .open_world(a.open_world);
    annotations.title.clone_from(&spec.title);
    let mut tool = Tool::new(spec.name.clone(), spec.description.clone(), object(&spec.name, &spec.input_schema)?)
        .with_annotations(annotations);
    tool.title.clone_from(&spec.title);
    if let Some(output) = &spec.output_schema {
        tool.output_schema = Some(object(&spec.name, output)?);
    }
    Ok(tool)
}

/// A JSON Schema, which MCP wants as an object.
fn object(tool: &str, schema: &Value) -> Result<Arc<JsonObject>, McpError> {
    match schema {
        Value::Object(schema) => Ok(Arc::new(schema.clone())),
        other => Err(McpError::internal_error(
            format!("cannot list the tools: the schema of {tool} is not a JSON object: {other}"),
            None,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolbelt_core::ExportFormat;

    /// `tools/list` shows each built-in tool as `toolbelt tools --format mcp` exports it.
    #[test]
    fn tools_are_listed_as_the_mcp_export() {
        let tools = toolbelt_tools::builtin();
        assert!(!tools.is_empty());
        for spec in tools.iter().map(|t| t.spec()) {
            let tool = to_mcp(spec).unwrap();
            assert_eq!(serde_json::to_value(&tool).unwrap(), ExportFormat::Mcp.render(spec), "{}", spec.name);
        }
    }
}
