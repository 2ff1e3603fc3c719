//! An upstream server's result as a toolbelt output.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::Value;
use toolbelt_core::{Content, ToolOutput};

/// Text and images kept as they are; embedded text resources as their text; audio, blobs and
/// links described in a line (the model can fetch a link with ReadMcpResource).
pub fn output_from_result(result: &CallToolResult) -> ToolOutput {
    let mut out = ToolOutput { content: result.content.iter().map(content_from_block).collect(), ..Default::default() };
    if let Some(structured) = result.structured_content.as_ref().filter(|v| !v.is_null()) {
        if out.content.is_empty() {
            out.content.push(Content::text(structured.to_string()));
        }
        out.structured = Some(structured.clone());
    }
    if out.content.is_empty() {
        out.content.push(Content::text("(the tool returned no content)"));
    }
    if result.is_error == Some(true) { out.into_error() } else { out }
}

/// One MCP content block.
pub fn content_from_block(block: &ContentBlock) -> Content {
    match block {
        ContentBlock::Text(text) => Content::text(&text.text),
        ContentBlock::Image(image) => Content::Image { data: image.data.clone(), mime_type: image.mime_type.clone() },
        ContentBlock::Resource(embedded) => content_from_resource(&embedded.resource),
        ContentBlock::ResourceLink(link) => Content::text(if link.name.is_empty() {
            format!("[resource {}]", link.uri)
        } else {
            format!("[resource {} ({})]", link.uri, link.name)
        }),
        ContentBlock::Audio(audio) => {
            Content::text(format!("[audio ({}), {} bytes of base64]", audio.mime_type, audio.data.len()))
        }
        _ => Content::text("[content of a kind this client does not know]"),
    }
}

/// A resource's contents: its text, or a line describing its blob.
pub fn content_from_resource(resource: &ResourceContents) -> Content {
    match resource {
        ResourceContents::TextResourceContents { text, .. } => Content::text(text),
        ResourceContents::BlobResourceContents { uri, mime_type, blob, .. } => Content::text(format!(
            "[binary resource {uri} ({}), {} bytes of base64]",
            mime_type.as_deref().unwrap_or("unknown type"),
            blob.len()
        )),
        _ => Content::text("[a resource of a kind this client does not know]"),
    }
}

/// A `tools/call` result rmcp could not read as one (a content block of a kind newer than it
/// knows), read block by block: a block it cannot read becomes a line naming its type.
pub fn lenient_result(result: &Value) -> CallToolResult {
    let content = result["content"].as_array().into_iter().flatten().map(|block| {
        serde_json::from_value::<ContentBlock>(block.clone())
            .unwrap_or_else(|_| ContentBlock::text(format!("[{} content]", block["type"].as_str().unwrap_or_default())))
    });
    let mut out = CallToolResult::success(content.collect());
    out.structured_content = result.get("structuredContent").cloned();
    out.is_error = result["isError"].as_bool();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::Resource;
    use serde_json::json;

    #[test]
    fn blocks_become_content() {
        let mut result = CallToolResult::success(vec![
            ContentBlock::text("hello"),
            ContentBlock::image("AAAA", "image/png"),
            ContentBlock::resource(ResourceContents::text("inside", "file:///a")),
            ContentBlock::resource_link(Resource::new("file:///b", "b")),
            ContentBlock::resource_link(Resource::new("file:///c", "")),
            ContentBlock::audio("AAAAAAAA", "audio/wav"),
        ]);
        result.structured_content = Some(json!({"n": 1}));
        let out = output_from_result(&result);
        assert!(!out.is_error);
        assert_eq!(
            out.joined_text(),
            "hello\ninside\n[resource file:///b (b)]\n[resource file:///c]\n[audio (audio/wav), 8 bytes of base64]"
        );
        assert_eq!(out.content[1], Content::Image { data: "AAAA".into(), mime_type: "image/png".into() });
        assert_eq!(out.structured, Some(json!({"n": 1})));
        assert!(output_from_result(&CallToolResult::error(vec![])).is_error);
    }

    #[test]
    fn structured_content_alone_is_the_text_and_nothing_says_so() {
        let mut result = CallToolResult::success(vec![]);
        result.structured_content = Some(json!({"n": 1}));
        assert_eq!(output_from_result(&result).joined_text(), r#"{"n":1}"#);
        result.structured_content = Some(Value::Null);
        let out = output_from_result(&result);
        assert_eq!((out.joined_text().as_str(), out.structured), ("(the tool returned no content)", None));
    }

    #[test]
    fn a_block_of_an_unknown_kind_is_named() {
        let result = lenient_result(&json!({
            "content": [{"type": "text", "text": "hi"}, {"type": "hologram", "data": "x"}],
            "isError": true,
        }));
        let out = output_from_result(&result);
        assert!(out.is_error);
        assert_eq!(out.joined_text(), "hi\n[hologram content]");
    }

    #[test]
    fn a_binary_resource_is_described() {
        let blob = ResourceContents::BlobResourceContents {
            uri: "file:///x.bin".into(),
            mime_type: None,
            blob: "AAAA".into(),
            meta: None,
        };
        assert_eq!(
            content_from_resource(&blob),
            Content::text("[binary resource file:///x.bin (unknown type), 4 bytes of base64]")
        );
    }
}
