//! The registry's tools as MCP `Tool`s, for `tools/list`.

use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::Value;
use toolbelt_core::ToolSpec;

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
