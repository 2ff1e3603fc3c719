//! A runtime result as an MCP `CallToolResult`.

use rmcp::ErrorData as McpError;
use rmcp::model::CallToolResult;
use serde_json::{Value, json};
use toolbelt_core::Content;
use toolbelt_runtime::ToolResult;

/// Text and image content, `structuredContent` when the tool declares an output schema, and
/// `isError` for a failure the model should read.
pub(super) fn to_mcp(result: &ToolResult, has_output_schema: bool) -> Result<CallToolResult, McpError> {
    let content: Vec<Value> = result
        .content
        .iter()
        .map(|c| match c {
            Content::Text { text } => json!({"type": "text", "text": text}),
            Content::Image { data, mime_type } => json!({"type": "image", "data": data, "mimeType": mime_type}),
        })
        .collect();
    let mut out = json!({"content": content, "isError": result.is_error});
    if has_output_schema && let Some(structured) = &result.structured {
        out["structuredContent"] = structured.clone();
    }
    serde_json::from_value(out).map_err(|e| McpError::internal_error(format!("cannot encode the result: {e}"), None))
}
