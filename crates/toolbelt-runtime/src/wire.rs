//! Calls and results in the shapes model APIs speak, so an agent loop hands the model's tool
//! calls to the runtime and its results back without writing the glue:
//!
//! | API | a call the model makes | the result it takes back |
//! |---|---|---|
//! | OpenAI Chat Completions | `tool_calls[i]`: `{id, type: "function", function: {name, arguments}}` | a `{"role": "tool", tool_call_id, content}` message |
//! | OpenAI Responses | a `{"type": "function_call", call_id, name, arguments}` item | a `{"type": "function_call_output", call_id, output}` item |
//! | Anthropic Messages | a `{"type": "tool_use", id, name, input}` block | a `{"type": "tool_result", tool_use_id, content, is_error}` block |
//!
//! The tools themselves go out with [`toolbelt_core::ExportFormat`].

use serde_json::{Value, json};
use toolbelt_core::Content;

use crate::call::{Outcome, ToolCall, ToolResult};

/// A tool call the model sent that cannot be turned into a call; answer it with
/// [`ToolResult::rejected`] so the model sees what was wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct WireError {
    /// The call's id, when it had one (the result must carry it).
    pub id: Option<String>,
    /// What was wrong, for the model.
    pub message: String,
}

impl WireError {
    fn new(id: Option<&str>, message: impl Into<String>) -> Self {
        Self { id: id.map(str::to_string), message: message.into() }
    }
}

fn str_field<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

impl ToolCall {
    /// A call from an OpenAI tool call: a Chat Completions `tool_calls` entry
    /// (`{id, function: {name, arguments}}`) or a Responses `function_call` item
    /// (`{call_id, name, arguments}`). `arguments` is a JSON string; an empty one means `{}`.
    pub fn from_openai(call: &Value) -> Result<Self, WireError> {
        let id = str_field(call, "id").filter(|_| call.get("function").is_some()).or(str_field(call, "call_id"));
        let id = id.ok_or_else(|| WireError::new(None, "the tool call has no `id` (or `call_id`)"))?;
        let function = call.get("function").unwrap_or(call);
        let name =
            str_field(function, "name").ok_or_else(|| WireError::new(Some(id), "the tool call names no tool"))?;
        let input = match function.get("arguments") {
            Some(Value::String(text)) if text.trim().is_empty() => json!({}),
            Some(Value::String(text)) => serde_json::from_str(text).map_err(|e| {
                WireError::new(
                    Some(id),
                    format!("the arguments of `{name}` are not valid JSON ({e}); send a JSON object"),
                )
            })?,
            Some(other) => other.clone(),
            None => json!({}),
        };
        Ok(Self::new(id, name, input))
    }

    /// A call from an Anthropic `tool_use` content block (`{id, name, input}`).
    pub fn from_anthropic(block: &Value) -> Result<Self, WireError> {
        let id = str_field(block, "id").ok_or_else(|| WireError::new(None, "the tool_use block has no `id`"))?;
        let name =
            str_field(block, "name").ok_or_else(|| WireError::new(Some(id), "the tool_use block names no tool"))?;
        Ok(Self::new(id, name, block.get("input").cloned().unwrap_or_else(|| json!({}))))
    }
}

impl ToolResult {
    /// The result for a call that could not be made (its [`WireError`]): an error the model
    /// reads, carrying the call's id.
    pub fn rejected(id: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            tool: None,
            content: vec![Content::text(message)],
            structured: None,
            is_error: true,
            outcome: Outcome::InvalidInput,
            duration: std::time::Duration::ZERO,
        }
    }

    /// The text an API that takes only text gets: the text content, each image named.
    fn text_with_images_named(&self) -> String {
        let parts: Vec<String> = self
            .content
            .iter()
            .map(|c| match c {
                Content::Text { text } => text.clone(),
                Content::Image { mime_type, data } => {
                    format!(
                        "[an image ({mime_type}, {} bytes) is not shown: this API takes text results only]",
                        data.len() / 4 * 3
                    )
                }
            })
            .collect();
        let text = parts.join("\n");
        if self.is_error && !text.starts_with("Error") { format!("Error: {text}") } else { text }
    }

    /// The Chat Completions message answering the call: `{"role": "tool", tool_call_id, content}`.
    /// Chat Completions has no error flag: an error's text starts with `Error:`.
    pub fn to_openai_chat(&self) -> Value {
        json!({"role": "tool", "tool_call_id": self.id, "content": self.text_with_images_named()})
    }

    /// The Responses API item answering the call: `{"type": "function_call_output", call_id, output}`.
    pub fn to_openai_responses(&self) -> Value {
        json!({"type": "function_call_output", "call_id": self.id, "output": self.text_with_images_named()})
    }

    /// The Anthropic `tool_result` block answering the call: text and images as content
    /// blocks, `is_error` set for errors.
    pub fn to_anthropic(&self) -> Value {
        let content: Vec<Value> = self
            .content
            .iter()
            .map(|c| match c {
                Content::Text { text } => json!({"type": "text", "text": text}),
                Content::Image { data, mime_type } => {
                    json!({"type": "image", "source": {"type": "base64", "media_type": mime_type, "data": data}})
                }
            })
            .collect();
        let mut block = json!({"type": "tool_result", "tool_use_id": self.id, "content": content});
        if self.is_error {
            block["is_error"] = json!(true);
        }
        block
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_calls_in_both_apis() {
        let chat = json!({"id": "call_1", "type": "function", "function": {"name": "Read", "arguments": "{\"file_path\":\"a\"}"}});
        assert_eq!(ToolCall::from_openai(&chat).unwrap(), ToolCall::new("call_1", "Read", json!({"file_path": "a"})));
        let responses =
            json!({"type": "function_call", "id": "fc_9", "call_id": "call_2", "name": "Glob", "arguments": ""});
        assert_eq!(ToolCall::from_openai(&responses).unwrap(), ToolCall::new("call_2", "Glob", json!({})));
        let bad = json!({"id": "call_3", "function": {"name": "Read", "arguments": "{oops"}});
        let e = ToolCall::from_openai(&bad).unwrap_err();
        assert_eq!(e.id.as_deref(), Some("call_3"));
        assert!(e.message.contains("not valid JSON"), "{e}");
        let r = ToolResult::rejected("call_3", e.message).to_openai_chat();
        assert_eq!(r["tool_call_id"], "call_3");
        assert!(r["content"].as_str().unwrap().starts_with("Error: "));
    }

    #[test]
    fn anthropic_calls_and_results() {
        let block = json!({"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}});
        assert_eq!(
            ToolCall::from_anthropic(&block).unwrap(),
            ToolCall::new("toolu_1", "Bash", json!({"command": "ls"}))
        );
        assert!(ToolCall::from_anthropic(&json!({"name": "x"})).is_err());
        let result = ToolResult {
            id: "toolu_1".into(),
            tool: Some("Read".into()),
            content: vec![Content::text("hi"), Content::Image { data: "AAAA".into(), mime_type: "image/png".into() }],
            structured: None,
            is_error: false,
            outcome: Outcome::Ok,
            duration: std::time::Duration::ZERO,
        };
        let block = result.to_anthropic();
        assert_eq!(block["tool_use_id"], "toolu_1");
        assert_eq!(block["content"][1]["source"]["media_type"], "image/png");
        assert!(block.get("is_error").is_none());
        assert!(result.to_openai_responses()["output"].as_str().unwrap().contains("image/png, 3 bytes"));
        assert_eq!(ToolResult::rejected("t", "no").to_anthropic()["is_error"], true);
    }
}
