//! A call as front ends hand it in, and the result they get back.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolbelt_core::{Content, ToolError};

/// One call to one tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The caller's id for the call (the model's `tool_use_id`).
    pub id: String,
    /// The tool name or alias.
    pub name: String,
    /// The raw JSON input.
    #[serde(default)]
    pub input: Value,
}

impl ToolCall {
    /// A call of `name` with `input`, identified by `id`.
    pub fn new(id: impl Into<String>, name: impl Into<String>, input: Value) -> Self {
        Self { id: id.into(), name: name.into(), input }
    }
}

/// What the model gets back from one call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolResult {
    /// The call's id.
    pub id: String,
    /// The canonical name of the tool that ran, when the name resolved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Model-facing content, already cut to the budget.
    pub content: Vec<Content>,
    /// The structured result, if the tool has a typed result.
    pub structured: Option<Value>,
    /// Whether this is an error.
    pub is_error: bool,
    /// How the call ended: `ok`, `tool_error` (the tool described a failure), or the kind of
    /// [`ToolError`] that ended it (`invalid_input`, `denied`, `timed_out`…).
    pub outcome: &'static str,
    /// Wall time from arrival to result.
    #[serde(skip)]
    pub duration: Duration,
}

impl ToolResult {
    /// All text content joined by newlines.
    pub fn text(&self) -> String {
        let parts: Vec<&str> = self.content.iter().filter_map(Content::as_text).collect();
        parts.join("\n")
    }

    pub(crate) fn from_error(id: &str, tool: Option<String>, error: &ToolError, duration: Duration) -> Self {
        Self {
            id: id.to_string(),
            tool,
            content: vec![Content::text(error.to_string())],
            structured: None,
            is_error: true,
            outcome: error.kind(),
            duration,
        }
    }
}
