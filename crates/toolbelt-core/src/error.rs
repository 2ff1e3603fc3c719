//! The one error type on the call path.

use std::fmt;
use std::time::Duration;

use crate::format::human_duration;

/// One problem with one field of a call's input.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FieldError {
    /// JSON Pointer to the offending value (`/offset`, `/edits/2/old_string`; `` for the root).
    pub path: String,
    /// What is wrong, e.g. `expected integer, got string`.
    pub message: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() { "/" } else { &self.path };
        write!(f, "{path}: {}", self.message)
    }
}

/// Everything that can end a call without a normal result.
///
/// The model-visible kinds become `is_error` results whose text is this error's `Display`;
/// [`ToolError::Internal`] is also logged, since it means a fault on our side.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ToolError {
    /// No tool answers to the name.
    #[error("{}", unknown_tool_message(name, suggestions))]
    UnknownTool {
        /// The name that was called.
        name: String,
        /// Registered names closest to it, best first.
        suggestions: Vec<String>,
    },
    /// The tool exists but is disabled in this session.
    #[error("{}", disabled_message(name, reason.as_deref()))]
    Disabled {
        /// The tool's canonical name.
        name: String,
        /// Why, when the registry was told (the setting that leaves it out, and where).
        reason: Option<String>,
    },
    /// The input does not match the tool's schema; every failing field is listed.
    #[error("{}", invalid_input_message(tool, problems))]
    InvalidInput {
        /// The tool's canonical name.
        tool: String,
        /// Every problem found, in document order.
        problems: Vec<FieldError>,
    },
    /// The policy or a hook refused the call.
    #[error("permission denied: {reason}")]
    Denied {
        /// Why, and what would allow it.
        reason: String,
    },
    /// The tool ran and failed; the message says what went wrong and what to do.
    #[error("{message}")]
    Failed {
        /// Model-facing explanation.
        message: String,
    },
    /// The call was cancelled before it finished.
    #[error("cancelled: the call was interrupted before it finished")]
    Cancelled,
    /// The call ran past its time limit and was stopped.
    #[error("timed out after {}: the call was stopped; {advice}", human_duration(*after))]
    TimedOut {
        /// The limit that was reached.
        after: Duration,
        /// What to do: the setting (or parameter) that set the limit, to raise, or a smaller
        /// task ([`ToolError::timed_out`] words it).
        advice: String,
    },
    /// A fault on our side (a bug, a panic, a broken invariant). Logged as well.
    #[error("internal error: {message}")]
    Internal {
        /// What broke.
        message: String,
    },
}

impl ToolError {
    /// The call ran out of its `after` limit, which `setting` set when a setting did
    /// (`` `lint.timeout` ``, in words as the model should read them): the advice names what
    /// binds.
    pub fn timed_out(after: Duration, setting: Option<&str>) -> Self {
        let advice = match setting {
            Some(setting) => {
                format!("the limit is {setting} in the settings: ask the user to raise it, or give a smaller task")
            }
            None => "retry with a larger timeout or a smaller task".to_string(),
        };
        ToolError::TimedOut { after, advice }
    }

    /// A model-facing failure with the given message.
    pub fn failed(message: impl Into<String>) -> Self {
        ToolError::Failed { message: message.into() }
    }

    /// An internal fault with the given message.
    pub fn internal(message: impl Into<String>) -> Self {
        ToolError::Internal { message: message.into() }
    }

    /// A short stable name for the kind, for logs, audit and structured results.
    pub fn kind(&self) -> &'static str {
        match self {
            ToolError::UnknownTool { .. } => "unknown_tool",
            ToolError::Disabled { .. } => "disabled",
            ToolError::InvalidInput { .. } => "invalid_input",
            ToolError::Denied { .. } => "denied",
            ToolError::Failed { .. } => "failed",
            ToolError::Cancelled => "cancelled",
            ToolError::TimedOut { .. } => "timed_out",
            ToolError::Internal { .. } => "internal",
        }
    }
}

fn disabled_message(name: &str, reason: Option<&str>) -> String {
    match reason {
        Some(reason) => format!("tool `{name}` is disabled: {reason}"),
        None => format!("tool `{name}` is disabled in this session; use another tool or ask the user to enable it"),
    }
}

fn unknown_tool_message(name: &str, suggestions: &[String]) -> String {
    match suggestions {
        [] => format!("unknown tool `{name}`; list the available tools and call one of those"),
        [one] => format!("unknown tool `{name}`; did you mean `{one}`?"),
        many => {
            let list: Vec<String> = many.iter().map(|s| format!("`{s}`")).collect();
            format!("unknown tool `{name}`; did you mean one of {}?", list.join(", "))
        }
    }
}

fn invalid_input_message(tool: &str, problems: &[FieldError]) -> String {
    let mut out = format!(
        "invalid input for `{tool}` ({} problem{}); fix these fields and call again:",
        problems.len(),
        if problems.len() == 1 { "" } else { "s" }
    );
    for p in problems {
        out.push_str("\n  ");
        out.push_str(&p.to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_fix() {
        let e = ToolError::UnknownTool { name: "Raed".into(), suggestions: vec!["Read".into()] };
        assert_eq!(e.to_string(), "unknown tool `Raed`; did you mean `Read`?");
        let e = ToolError::InvalidInput {
            tool: "Read".into(),
            problems: vec![
                FieldError { path: "/offset".into(), message: "expected integer, got string".into() },
                FieldError { path: "".into(), message: "missing required field `file_path`".into() },
            ],
        };
        assert_eq!(
            e.to_string(),
            "invalid input for `Read` (2 problems); fix these fields and call again:\n  \
             /offset: expected integer, got string\n  /: missing required field `file_path`"
        );
        assert_eq!(
            ToolError::timed_out(Duration::from_millis(1500), None).to_string(),
            "timed out after 1.5 s: the call was stopped; retry with a larger timeout or a smaller task"
        );
        assert_eq!(
            ToolError::timed_out(Duration::from_secs(600), Some("`runtime.max_timeout`")).to_string(),
            "timed out after 600 s: the call was stopped; the limit is `runtime.max_timeout` in the settings: ask the \
             user to raise it, or give a smaller task"
        );
    }
}
