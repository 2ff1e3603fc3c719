//! How results and events are printed.

use std::io::Write as _;

use serde_json::{Map, Value, json};
use toolbelt_core::Content;
use toolbelt_runtime::ToolResult;

/// `{"is_error","content","structured","duration_ms"}` — the `call --json` shape.
pub fn call_json(r: &ToolResult) -> Value {
    json!({
        "is_error": r.is_error,
        "content": r.content,
        "structured": r.structured,
        "duration_ms": duration_ms(r),
    })
}

/// One `batch` result line: the call's id, the tool that ran and how it ended, then the
/// `call --json` fields.
pub fn batch_json(r: &ToolResult) -> Value {
    let mut map = Map::new();
    map.insert("id".into(), json!(r.id));
    if let Some(tool) = &r.tool {
        map.insert("tool".into(), json!(tool));
    }
    map.insert("outcome".into(), json!(r.outcome));
    if let Value::Object(rest) = call_json(r) {
        map.extend(rest);
    }
    Value::Object(map)
}

fn duration_ms(r: &ToolResult) -> f64 {
    (r.duration.as_secs_f64() * 1_000_000.0).round() / 1000.0
}

/// Writes the model-facing text of a result as one line-terminated block, images described
/// in a line, without copying the text.
pub fn write_result_text(r: &ToolResult) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    for (i, c) in r.content.iter().enumerate() {
        if i > 0 {
            out.write_all(b"\n")?;
        }
        match c {
            Content::Text { text } => out.write_all(text.as_bytes())?,
            Content::Image { data, mime_type } => {
                write!(out, "[image: {mime_type}, {} bytes base64]", data.len())?;
            }
        }
    }
    out.write_all(b"\n")?;
    out.flush()
}

/// Writes one line to stdout, holding the lock so lines from concurrent calls never mix.
pub fn line(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.write_all(b"\n")?;
    out.flush()
}
