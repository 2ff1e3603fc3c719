//! An upstream server's result as a toolbelt output.

use serde_json::Value;
use toolbelt_core::{Content, ToolOutput};

/// Text and images kept as they are; embedded text resources as their text; audio, blobs and
/// links described in a line (the model can fetch a link with ReadMcpResource).
pub fn output_from_result(result: &Value) -> ToolOutput {
    let mut out = ToolOutput::text("");
    out.content.clear();
    for block in result["content"].as_array().into_iter().flatten() {
        out.content.push(content_from_block(block));
    }
    if let Some(structured) = result.get("structuredContent").filter(|v| !v.is_null()) {
        if out.content.is_empty() {
            out.content.push(Content::text(structured.to_string()));
        }
        out.structured = Some(structured.clone());
    }
    if out.content.is_empty() {
        out.content.push(Content::text("(the tool returned no content)"));
    }
    if result["isError"] == Value::Bool(true) { out.into_error() } else { out }
}

/// One MCP content block.
pub fn content_from_block(block: &Value) -> Content {
    let s = |key: &str| block[key].as_str().unwrap_or_default();
    match s("type") {
        "text" => Content::text(s("text")),
        "image" => Content::Image { data: s("data").to_string(), mime_type: s("mimeType").to_string() },
        "resource" => {
            let resource = &block["resource"];
            match resource["text"].as_str() {
                Some(text) => Content::text(text),
                None => Content::text(format!(
                    "[binary resource {} ({}), {} bytes of base64]",
                    resource["uri"].as_str().unwrap_or("?"),
                    resource["mimeType"].as_str().unwrap_or("unknown type"),
                    resource["blob"].as_str().map_or(0, str::len)
                )),
            }
        }
        "resource_link" => Content::text(format!(
            "[resource {}{}]",
            s("uri"),
            if s("name").is_empty() { String::new() } else { format!(" ({})", s("name")) }
        )),
        "audio" => Content::text(format!("[audio ({}), {} bytes of base64]", s("mimeType"), s("data").len())),
        other => Content::text(format!("[{other} content]")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blocks_become_content() {
        let out = output_from_result(&json!({
            "content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "file:///a", "text": "inside"}},
                {"type": "resource_link", "uri": "file:///b", "name": "b"},
            ],
            "structuredContent": {"n": 1},
        }));
        assert!(!out.is_error);
        assert_eq!(out.joined_text(), "hello\ninside\n[resource file:///b (b)]");
        assert_eq!(out.structured, Some(json!({"n": 1})));
        assert!(output_from_result(&json!({"content": [], "isError": true})).is_error);
    }
}
