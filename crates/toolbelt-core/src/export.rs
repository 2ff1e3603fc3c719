//! A tool's schema in the shapes the big APIs take.

use serde_json::{Map, Value, json};

use crate::spec::ToolSpec;

/// Which shape to export a tool in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// OpenAI function calling: `{"type":"function","function":{name,description,parameters}}`.
    OpenAi,
    /// Anthropic tool use: `{name,description,input_schema}`.
    Anthropic,
    /// MCP `tools/list`: `{name,title?,description,inputSchema,outputSchema?,annotations}`.
    Mcp,
}

impl ExportFormat {
    /// Parses `openai`, `anthropic` or `mcp`.
    pub fn parse(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "openai" => Some(Self::OpenAi),
            "anthropic" => Some(Self::Anthropic),
            "mcp" => Some(Self::Mcp),
            _ => None,
        }
    }

    /// One tool's schema in this format.
    pub fn render(self, spec: &ToolSpec) -> Value {
        export_spec(spec, self)
    }
}

fn export_spec(spec: &ToolSpec, format: ExportFormat) -> Value {
    match format {
        ExportFormat::OpenAi => json!({
            "type": "function",
            "function": {
                "name": spec.name,
                "description": spec.description,
                "parameters": spec.input_schema,
            }
        }),
        ExportFormat::Anthropic => json!({
            "name": spec.name,
            "description": spec.description,
            "input_schema": spec.input_schema,
        }),
        ExportFormat::Mcp => {
            let mut tool = Map::new();
            tool.insert("name".into(), json!(spec.name));
            if let Some(title) = &spec.title {
                tool.insert("title".into(), json!(title));
            }
            tool.insert("description".into(), json!(spec.description));
            tool.insert("inputSchema".into(), spec.input_schema.clone());
            if let Some(out) = &spec.output_schema {
                tool.insert("outputSchema".into(), out.clone());
            }
            let a = spec.annotations;
            let mut annotations = Map::new();
            if let Some(title) = &spec.title {
                annotations.insert("title".into(), json!(title));
            }
            annotations.insert("readOnlyHint".into(), json!(a.read_only));
            annotations.insert("destructiveHint".into(), json!(a.destructive));
            annotations.insert("idempotentHint".into(), json!(a.idempotent));
            annotations.insert("openWorldHint".into(), json!(a.open_world));
            tool.insert("annotations".into(), Value::Object(annotations));
            Value::Object(tool)
        }
    }
}
