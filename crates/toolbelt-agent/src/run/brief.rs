//! One-line descriptions of tool calls and results, for progress lines and for saying what
//! a stopped agent was doing.

use serde_json::Value;
use toolbelt_runtime::{ToolCall, ToolResult};

/// The longest brief, in characters.
const MAX_BRIEF: usize = 120;

/// `Bash(cargo test)`, `Read(src/lib.rs)`: the tool and the input field that says most.
pub fn brief_call(call: &ToolCall) -> String {
    const KEYS: [&str; 9] =
        ["command", "file_path", "path", "pattern", "url", "query", "description", "prompt", "task_id"];
    let arg =
        KEYS.iter().find_map(|k| call.input.get(*k).and_then(Value::as_str)).map(str::to_string).unwrap_or_else(|| {
            let text = call.input.to_string();
            if text == "{}" || text == "null" { String::new() } else { text }
        });
    format!("{}({})", call.name, cut(&one_line(&arg), MAX_BRIEF))
}

/// The first line of a result's text, cut short, marked when it is an error.
pub fn brief_result(result: &ToolResult) -> String {
    let text = result.text();
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let line = cut(first.trim(), MAX_BRIEF);
    if result.is_error { format!("error: {line}") } else { line }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn names_the_telling_argument() {
        let call = ToolCall::new("1", "Bash", json!({"command": "cargo   test\n--all", "timeout": 5}));
        assert_eq!(brief_call(&call), "Bash(cargo test --all)");
        let call = ToolCall::new("1", "TodoWrite", json!({}));
        assert_eq!(brief_call(&call), "TodoWrite()");
        let long = "x".repeat(300);
        assert!(brief_call(&ToolCall::new("1", "Read", json!({"file_path": long}))).ends_with("…)"));
    }
}
