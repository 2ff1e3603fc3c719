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
    /// How the call ended.
    pub outcome: Outcome,
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
}

/// How a call ended. Serialized (in `--json` output and the audit log) as the snake-case
/// name: `ok`, `tool_error`, `invalid_input`, `timed_out`…; an ending by a [`ToolError`] has
/// the name of its [`ToolError::kind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The tool ran and succeeded.
    Ok,
    /// The tool ran and described a failure of its own (its output is the error).
    ToolError,
    /// No tool has the name ([`ToolError::UnknownTool`]).
    UnknownTool,
    /// The tool is disabled ([`ToolError::Disabled`]).
    Disabled,
    /// The input did not match the tool's schema ([`ToolError::InvalidInput`]).
    InvalidInput,
    /// The policy, a hook or a person refused the call ([`ToolError::Denied`]).
    Denied,
    /// The tool failed, or a hook blocked its result ([`ToolError::Failed`]).
    Failed,
    /// The caller cancelled the call ([`ToolError::Cancelled`]).
    Cancelled,
    /// The call ran past its timeout ([`ToolError::TimedOut`]).
    TimedOut,
    /// A fault in the tool or the runtime ([`ToolError::Internal`]).
    Internal,
    /// A front end got a line that is not a call at all (a batch file's bad line); the
    /// runtime never saw it.
    InvalidLine,
}

impl Outcome {
    /// Every outcome, in declaration order.
    pub const ALL: [Outcome; 11] = [
        Outcome::Ok,
        Outcome::ToolError,
        Outcome::UnknownTool,
        Outcome::Disabled,
        Outcome::InvalidInput,
        Outcome::Denied,
        Outcome::Failed,
        Outcome::Cancelled,
        Outcome::TimedOut,
        Outcome::Internal,
        Outcome::InvalidLine,
    ];

    /// The name it is serialized as.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::ToolError => "tool_error",
            Outcome::UnknownTool => "unknown_tool",
            Outcome::Disabled => "disabled",
            Outcome::InvalidInput => "invalid_input",
            Outcome::Denied => "denied",
            Outcome::Failed => "failed",
            Outcome::Cancelled => "cancelled",
            Outcome::TimedOut => "timed_out",
            Outcome::Internal => "internal",
            Outcome::InvalidLine => "invalid_line",
        }
    }

    /// Whether the model gets an error: every outcome but [`Outcome::Ok`].
    pub fn is_error(self) -> bool {
        self != Outcome::Ok
    }
}

impl From<&ToolError> for Outcome {
    fn from(error: &ToolError) -> Self {
        match error {
            ToolError::UnknownTool { .. } => Outcome::UnknownTool,
            ToolError::Disabled { .. } => Outcome::Disabled,
            ToolError::InvalidInput { .. } => Outcome::InvalidInput,
            ToolError::Denied { .. } => Outcome::Denied,
            ToolError::Failed { .. } => Outcome::Failed,
            ToolError::Cancelled => Outcome::Cancelled,
            ToolError::TimedOut { .. } => Outcome::TimedOut,
            ToolError::Internal { .. } => Outcome::Internal,
        }
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Compares with the serialized name (`result.outcome == "denied"`).
impl PartialEq<str> for Outcome {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

/// Compares with the serialized name (`result.outcome == "denied"`).
impl PartialEq<&str> for Outcome {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

#[cfg(test)]
mod tests {
    use toolbelt_core::FieldError;

    use super::*;

    #[test]
    fn outcomes_serialize_as_their_names_and_errors_as_their_kinds() {
        for outcome in Outcome::ALL {
            assert_eq!(serde_json::to_value(outcome).unwrap(), outcome.as_str());
            assert_eq!(outcome.to_string(), outcome.as_str());
            assert_eq!(outcome.is_error(), outcome != Outcome::Ok);
        }
        let errors = [
            ToolError::UnknownTool { name: "x".into(), suggestions: Vec::new() },
            ToolError::Disabled { name: "x".into(), reason: None },
            ToolError::InvalidInput { tool: "x".into(), problems: Vec::<FieldError>::new() },
            ToolError::Denied { reason: "no".into() },
            ToolError::failed("no"),
            ToolError::Cancelled,
            ToolError::timed_out(Duration::from_secs(1), None),
            ToolError::internal("no"),
        ];
        for error in &errors {
            assert_eq!(Outcome::from(error).as_str(), error.kind());
        }
    }
}
