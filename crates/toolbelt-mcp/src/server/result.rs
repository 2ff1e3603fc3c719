//! A runtime result as an MCP `CallToolResult`.

use rmcp::model::{CallToolResult, ContentBlock};
use toolbelt_core::Content;
use toolbelt_runtime::ToolResult;

/// Text and image content, `structuredContent` when the tool declares an output schema, and
/// `isError` for a failure the model should read.
pub(super) fn to_mcp(result: &ToolResult, has_output_schema: bool) -> CallToolResult {
    let content = result.content.iter().map(block).collect();
    let mut out = if result.is_error { CallToolResult::error(content) } else { CallToolResult::success(content) };
    if has_output_schema {
        out.structured_content.clone_from(&result.structured);
    }
    out
}

fn block(content: &Content) -> ContentBlock {
    match content {
        Content::Text { text } => ContentBlock::text(text.as_str()),
        Content::Image { data, mime_type } => ContentBlock::image(data.as_str(), mime_type.as_str()),
    }
}
