//! Requests whose params do not fit their method.
//!
//! rmcp reads a message whose params do not fit its method (`tools/call` with
//! `"arguments": "x"`) as a custom request of that method, which would be answered "method
//! not found" (`-32601`); params that are not an object, or a `_meta` that is not one, make
//! the whole line unreadable to it (answered `-32600` by the stdio transport); and some
//! fields of the wrong type it drops without a word (a list's `cursor`, `_meta.progressToken`).
//! Each of these is `-32602 Invalid params` with the reason ([`refuse`], [`wrongly_typed`]);
//! only an unknown method is `-32601`.

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, ClientJsonRpcMessage, GetMeta as _, InitializeRequestParams, PaginatedRequestParams,
};
use serde::de::DeserializeOwned;
use serde_json::Value;
use toolbelt_core::json_kind;

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
    let why = envelope(method, params).or_else(|| match method {
        "tools/call" => tools_call(params),
        "initialize" => reason::<InitializeRequestParams>(params),
        m if m.ends_with("/list") => reason::<PaginatedRequestParams>(params),
        _ => None,
    });
    let message = match why {
        Some(why) => format!("invalid params for {method}: {why}"),
        None => format!("invalid params for {method}: they do not match the method's schema in the MCP specification"),
    };
    McpError::invalid_params(message, None)
}

/// A request rmcp read whose params still have a field of the wrong type that it dropped
/// (see the module docs): the request's id and the error to answer it with. `line` is the
/// message as it came, read again only for a list request (a page's `cursor`).
pub(super) fn wrongly_typed(message: &ClientJsonRpcMessage, line: &str) -> Option<(Value, McpError)> {
    let ClientJsonRpcMessage::Request(request) = message else { return None };
    let method = request.request.method();
    let token = request.request.get_meta().get("progressToken");
    let why = match token {
        Some(token) if !(token.is_string() || token.is_number() || token.is_null()) => Some(progress_token(token)),
        _ if method.ends_with("/list") => {
            let value: Value = serde_json::from_str(line).ok()?;
            let params = value.get("params").filter(|p| !p.is_null());
            envelope(method, params).or_else(|| params.and_then(|p| reason::<PaginatedRequestParams>(Some(p))))
        }
        _ => None,
    }?;
    let id = serde_json::to_value(&request.id).unwrap_or(Value::Null);
    Some((id, McpError::invalid_params(format!("invalid params for {method}: {why}"), None)))
}

/// What every method's params must be: an object (its named parameters), whose `_meta` is an
/// object with a `progressToken` that is a string or a number, and whose `cursor` (a list's)
/// is a string.
fn envelope(method: &str, params: Option<&Value>) -> Option<String> {
    let params = params.filter(|p| !p.is_null())?;
    let Value::Object(fields) = params else {
        return Some(format!(
            "`params` must be an object holding the method's named parameters (or be left out), not {}",
            json_kind(params)
        ));
    };
    if let Some(meta) = fields.get("_meta").filter(|m| !m.is_null()) {
        let Value::Object(meta) = meta else {
            return Some(format!("`_meta` must be an object, not {}", json_kind(meta)));
        };
        if let Some(token) = meta.get("progressToken").filter(|t| !(t.is_string() || t.is_number() || t.is_null())) {
            return Some(progress_token(token));
        }
    }
    match fields.get("cursor") {
        Some(cursor) if method.ends_with("/list") && !(cursor.is_string() || cursor.is_null()) => {
            Some(format!("`cursor` must be a string (the `nextCursor` of the page before), not {}", json_kind(cursor)))
        }
        _ => None,
    }
}

fn progress_token(token: &Value) -> String {
    format!("`_meta.progressToken` must be a string or a number, not {}", json_kind(token))
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
        for (method, params, says) in [
            ("tools/call", json!([1]), "`params` must be an object"),
            ("ping", json!("x"), "`params` must be an object"),
            ("tools/call", json!({"name": "Read", "_meta": 5}), "`_meta` must be an object"),
            ("tools/call", json!({"name": "Read", "_meta": {"progressToken": true}}), "progressToken"),
            ("tools/list", json!({"cursor": 5}), "`cursor` must be a string"),
        ] {
            let e = refuse(method, Some(&params));
            assert_eq!(e.code, rmcp::model::ErrorCode::INVALID_PARAMS, "{method} {params}");
            assert!(e.message.contains(says), "{method} {params}: {}", e.message);
        }
    }

    #[test]
    fn fields_rmcp_drops_are_found() {
        let read = |line: &str| serde_json::from_str::<ClientJsonRpcMessage>(line).unwrap();
        let lines = [
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":5}}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"Read","_meta":{"progressToken":{}}}}"#,
        ];
        for line in lines {
            let (id, e) = wrongly_typed(&read(line), line).unwrap_or_else(|| panic!("{line}"));
            assert_eq!(e.code, rmcp::model::ErrorCode::INVALID_PARAMS);
            assert!(id == json!(3) || id == json!("a"), "{id}");
        }
        for line in [
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"c2"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"Read","_meta":{"progressToken":7}}}"#,
        ] {
            assert!(wrongly_typed(&read(line), line).is_none(), "{line}");
        }
    }
}
