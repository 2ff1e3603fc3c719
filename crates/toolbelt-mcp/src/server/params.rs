//! Requests rmcp could not read as any method it knows.
//!
//! rmcp reads a message whose params do not fit its method (`tools/call` with
//! `"arguments": "x"`) as a custom request of that method, which would be answered "method
//! not found" (`-32601`). A known method with unreadable params is `-32602 Invalid params`,
//! with the reason; only an unknown method is `-32601`.

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolRequestParams, InitializeRequestParams, PaginatedRequestParams};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The requests a client may send that this server answers.
const KNOWN: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "tools/call",
    "tools/list",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "resources/templates/list",
    "subscriptions/listen",
    "completion/complete",
    "logging/setLevel",
];

/// The error for a request of `method` rmcp could not read.
pub(super) fn refuse(method: &str, params: Option<&Value>) -> McpError {
    if !KNOWN.contains(&method) {
        return method_not_found(method);
    }
    let why = match method {
        "tools/call" => tools_call(params),
        "initialize" => reason::<InitializeRequestParams>(params),
        m if m.ends_with("/list") => reason::<PaginatedRequestParams>(params),
        _ => None,
    };
    let message = match why {
        Some(why) => format!("invalid params for {method}: {why}"),
        None => format!("invalid params for {method}: they do not match the method's schema in the MCP specification"),
    };
    McpError::invalid_params(message, None)
}

/// Why `tools/call`'s params cannot be read, saying what `arguments` must be.
fn tools_call(params: Option<&Value>) -> Option<String> {
    let arguments = params.and_then(|p| p.get("arguments"));
    if let Some(arguments) = arguments.filter(|a| !a.is_object() && !a.is_null()) {
        let got = match arguments {
            Value::Array(_) => "an array",
            Value::String(_) => "a string",
            Value::Number(_) => "a number",
            _ => "a boolean",
        };
        return Some(format!(
            "`arguments` must be an object holding the tool's input (e.g. {{\"file_path\": \"a.txt\"}}), not {got}"
        ));
    }
    reason::<CallToolRequestParams>(params)
}

/// The error reading `params` as `T`, if reading fails.
fn reason<T: DeserializeOwned>(params: Option<&Value>) -> Option<String> {
    let params = params.cloned().unwrap_or(Value::Null);
    serde_json::from_value::<T>(params).err().map(|e| e.to_string())
}

fn method_not_found(method: &str) -> McpError {
    McpError::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        format!("method not found: {method}; this server serves tools (tools/list, tools/call) and ping"),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn known_methods_with_bad_params_are_invalid_params() {
        for arguments in [json!("x"), json!([1]), json!(3)] {
            let e = refuse("tools/call", Some(&json!({"name": "Read", "arguments": arguments})));
            assert_eq!(e.code, rmcp::model::ErrorCode::INVALID_PARAMS);
            assert!(e.message.contains("`arguments` must be an object"), "{}", e.message);
        }
        let e = refuse("tools/call", Some(&json!({"name": 5})));
        assert_eq!(e.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        assert!(e.message.contains("invalid type"), "{}", e.message);
        let e = refuse("no/such", None);
        assert_eq!(e.code, rmcp::model::ErrorCode::METHOD_NOT_FOUND);
        assert!(e.message.contains("no/such"));
    }
}
