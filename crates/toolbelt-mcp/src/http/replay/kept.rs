//! An event of a resumable stream as [`super::Replay`] keeps it: the message as its JSON text,
//! brought back as a message when a stream is resumed.

use std::time::Duration;

use rmcp::model::ServerJsonRpcMessage;
use rmcp::transport::streamable_http_server::session::ServerSseMessage;

/// Whether a message ends its request's stream: the answer.
pub(super) fn is_answer(message: &ServerJsonRpcMessage) -> bool {
    matches!(message, ServerJsonRpcMessage::Response(_) | ServerJsonRpcMessage::Error(_))
}

/// An event as kept: its message as JSON text (a fraction of the memory of the message
/// itself), or the retry hint of a priming event.
#[derive(Debug)]
pub(super) enum Kept {
    Message { json: Box<[u8]>, answer: bool },
    Priming(Option<Duration>),
}

impl Kept {
    pub(super) fn of(event: &ServerSseMessage) -> Kept {
        match event.message.as_deref() {
            Some(message) => Kept::Message {
                json: serde_json::to_vec(message).unwrap_or_default().into_boxed_slice(),
                answer: is_answer(message),
            },
            None => Kept::Priming(event.retry),
        }
    }

    pub(super) fn size(&self) -> usize {
        match self {
            Kept::Message { json, .. } => json.len(),
            Kept::Priming(_) => 0,
        }
    }

    pub(super) fn is_answer(&self) -> bool {
        matches!(self, Kept::Message { answer: true, .. })
    }

    /// The event again, with its id; `None` if its text cannot be read back (never: it was
    /// written from a message).
    pub(super) fn event(&self, id: String) -> Option<ServerSseMessage> {
        match self {
            Kept::Message { json, .. } => revive(json).map(|message| ServerSseMessage::new(id, message)),
            Kept::Priming(Some(retry)) => Some(ServerSseMessage::priming(id, *retry)),
            Kept::Priming(None) => None,
        }
    }
}

/// A message from its JSON text, as rmcp's "custom" kinds, which write their result, params
/// or error back as they were read: the JSON first sent (reading it back as the typed message
/// could pick another kind of result, and lose fields).
fn revive(json: &[u8]) -> Option<ServerJsonRpcMessage> {
    use rmcp::model::{
        CustomNotification, CustomRequest, CustomResult, ErrorData, JsonRpcError, JsonRpcNotification, JsonRpcRequest,
        JsonRpcResponse, JsonRpcVersion2_0, RequestId, ServerNotification, ServerRequest, ServerResult,
    };
    let mut object: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(json).ok()?;
    let id = match object.remove("id") {
        Some(id) => Some(serde_json::from_value::<RequestId>(id).ok()?),
        None => None,
    };
    let jsonrpc = JsonRpcVersion2_0;
    if let Some(result) = object.remove("result") {
        let result = ServerResult::CustomResult(CustomResult::new(result));
        return Some(ServerJsonRpcMessage::Response(JsonRpcResponse { jsonrpc, id: id?, result }));
    }
    if let Some(error) = object.remove("error") {
        let error = serde_json::from_value::<ErrorData>(error).ok()?;
        return Some(ServerJsonRpcMessage::Error(JsonRpcError { jsonrpc, id, error }));
    }
    let method = object.remove("method")?.as_str()?.to_string();
    let params = object.remove("params");
    Some(match id {
        Some(id) => ServerJsonRpcMessage::Request(JsonRpcRequest {
            jsonrpc,
            id,
            request: ServerRequest::CustomRequest(CustomRequest::new(method, params)),
        }),
        None => ServerJsonRpcMessage::Notification(JsonRpcNotification {
            jsonrpc,
            notification: ServerNotification::CustomNotification(CustomNotification::new(method, params)),
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_come_back_as_they_were_sent() {
        let lines = [
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"x"}],"structuredContent":{"b":1,"a":[true,null]},"isError":false}}"#,
            r#"{"jsonrpc":"2.0","id":"s-1","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"bad","data":{"why":"x"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2,"message":"out"}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"elicitation/create","params":{"message":"ok?","requestedSchema":{"type":"object","properties":{}}}}"#,
        ];
        for line in lines {
            let message: ServerJsonRpcMessage = serde_json::from_str(line).unwrap();
            let sent = serde_json::to_value(&message).unwrap();
            let kept = Kept::of(&ServerSseMessage::from_message(message));
            let again = kept.event("0-1".into()).unwrap();
            assert_eq!(serde_json::to_value(again.message.as_deref().unwrap()).unwrap(), sent, "{line}");
            assert_eq!(again.event_id.as_deref(), Some("0-1"));
        }
    }
}
