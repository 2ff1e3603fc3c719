//! What a [`super::ScriptedServer`] answers, turn by turn, and how each turn is written in
//! each protocol's own streaming shape.

use std::time::Duration;

use serde_json::{Value, json};

use crate::message::{StopReason, Usage};

/// Which protocol a scripted server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// OpenAI Chat Completions, streamed (`POST /v1/chat/completions`).
    OpenAi,
    /// Anthropic Messages, streamed (`POST /v1/messages`).
    Anthropic,
}

/// One tool call a scripted turn makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptedCall {
    /// Its id.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// Its arguments as the model writes them (JSON text, or not).
    pub arguments: String,
}

#[derive(Debug, Clone)]
pub(crate) enum Answer {
    Reply { text: Option<String>, calls: Vec<ScriptedCall> },
    HttpError { status: u16, message: String, body: Option<Value>, retry_after: Option<String> },
    Truncated(String),
    Malformed,
    StreamError { kind: String, message: String },
}

/// One scripted answer to one request.
#[derive(Debug, Clone)]
pub struct Turn {
    pub(crate) answer: Answer,
    pub(crate) delay: Duration,
    pub(crate) stall: Duration,
    pub(crate) stop: Option<StopReason>,
    pub(crate) usage: Usage,
    pub(crate) conversation: Option<String>,
}

impl Turn {
    fn of(answer: Answer) -> Self {
        Turn {
            answer,
            delay: Duration::ZERO,
            stall: Duration::ZERO,
            stop: None,
            usage: Usage { input_tokens: 21, output_tokens: 8 },
            conversation: None,
        }
    }

    /// A reply of text, streamed in several chunks.
    pub fn text(text: impl Into<String>) -> Self {
        Self::of(Answer::Reply { text: Some(text.into()), calls: Vec::new() })
    }

    /// A reply making one tool call with `input` as its arguments (split across fragments).
    pub fn tool_call(id: impl Into<String>, name: impl Into<String>, input: Value) -> Self {
        Self::tool_calls([(id.into(), name.into(), input)])
    }

    /// A reply making several tool calls at once, their fragments interleaved.
    pub fn tool_calls(calls: impl IntoIterator<Item = (String, String, Value)>) -> Self {
        let calls = calls
            .into_iter()
            .map(|(id, name, input)| ScriptedCall { id, name, arguments: input.to_string() })
            .collect();
        Self::of(Answer::Reply { text: None, calls })
    }

    /// A reply making one tool call whose arguments are `raw` as written (invalid JSON, say).
    pub fn tool_call_raw(id: impl Into<String>, name: impl Into<String>, raw: impl Into<String>) -> Self {
        let call = ScriptedCall { id: id.into(), name: name.into(), arguments: raw.into() };
        Self::of(Answer::Reply { text: None, calls: vec![call] })
    }

    /// Text the reply starts with, before its tool calls.
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        if let Answer::Reply { text: t, .. } = &mut self.answer {
            *t = Some(text.into());
        }
        self
    }

    /// An HTTP error: `status` with the protocol's JSON error body carrying `message`.
    pub fn http_error(status: u16, message: impl Into<String>) -> Self {
        Self::of(Answer::HttpError { status, message: message.into(), body: None, retry_after: None })
    }

    /// An HTTP error with exactly this JSON body.
    pub fn http_error_body(status: u16, body: Value) -> Self {
        Self::of(Answer::HttpError { status, message: String::new(), body: Some(body), retry_after: None })
    }

    /// The `retry-after` header of an HTTP error (`"2"`, or an HTTP date).
    pub fn retry_after(mut self, value: impl Into<String>) -> Self {
        if let Answer::HttpError { retry_after, .. } = &mut self.answer {
            *retry_after = Some(value.into());
        }
        self
    }

    /// A stream that begins with `text` and ends without its terminator (`[DONE]`,
    /// `message_stop`), as a connection cut short does.
    pub fn truncated(text: impl Into<String>) -> Self {
        Self::of(Answer::Truncated(text.into()))
    }

    /// A stream whose second event is not JSON.
    pub fn malformed() -> Self {
        Self::of(Answer::Malformed)
    }

    /// A stream that reports an error before any content: Anthropic's `error` event with
    /// this type (`overloaded_error`…), OpenAI's `{"error": {"type", "message"}}` chunk.
    pub fn stream_error(kind: impl Into<String>, message: impl Into<String>) -> Self {
        Self::of(Answer::StreamError { kind: kind.into(), message: message.into() })
    }

    /// Waits this long before answering.
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Pauses this long in the middle of the stream, after its first piece of content.
    pub fn stall(mut self, stall: Duration) -> Self {
        self.stall = stall;
        self
    }

    /// Ends the reply for this reason instead of the natural one (end of turn, tool use).
    pub fn stop(mut self, stop: StopReason) -> Self {
        self.stop = Some(stop);
        self
    }

    /// The usage the reply reports.
    pub fn usage(mut self, input_tokens: u64, output_tokens: u64) -> Self {
        self.usage = Usage { input_tokens, output_tokens };
        self
    }

    /// Answers only a request of the conversation whose first user message contains
    /// `marker` (the first such turn left, in script order): agents running side by side,
    /// whose requests arrive in any order, each get their own turns.
    pub fn in_conversation(mut self, marker: impl Into<String>) -> Self {
        self.conversation = Some(marker.into());
        self
    }

    /// Whether this turn may answer a request whose first user message is `first`.
    pub(crate) fn answers(&self, first: &str) -> bool {
        self.conversation.as_deref().is_none_or(|marker| first.contains(marker))
    }
}

/// `text` in up to four pieces, cut at character boundaries.
pub(crate) fn pieces(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let size = chars.len().div_ceil(4).max(1);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

/// The JSON error body of `status` in `protocol`'s shape.
pub(crate) fn error_body(protocol: Protocol, status: u16, message: &str) -> Value {
    let kind = match status {
        400 | 422 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    };
    match protocol {
        Protocol::OpenAi => json!({"error": {"message": message, "type": kind, "param": null, "code": null}}),
        Protocol::Anthropic => json!({"type": "error", "error": {"type": kind, "message": message}}),
    }
}

/// A stream's events, in order; `None` marks where a stall goes.
pub(crate) fn events(protocol: Protocol, turn: &Turn, model: &str, n: usize) -> Vec<Option<String>> {
    match protocol {
        Protocol::OpenAi => openai(turn, model, n),
        Protocol::Anthropic => anthropic(turn, model, n),
    }
}

fn data(value: Value) -> Option<String> {
    Some(format!("data: {value}\n\n"))
}

fn openai(turn: &Turn, model: &str, n: usize) -> Vec<Option<String>> {
    let id = format!("chatcmpl-scripted-{n}");
    let chunk = |delta: Value, finish: Value| {
        data(json!({"id": id, "object": "chat.completion.chunk", "created": 1_700_000_000, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}))
    };
    let mut out = vec![chunk(json!({"role": "assistant", "content": ""}), Value::Null)];
    let (text, calls) = match &turn.answer {
        Answer::Reply { text, calls } => (text.as_deref(), calls.as_slice()),
        Answer::Truncated(text) => {
            out.extend(pieces(text).into_iter().take(2).map(|p| chunk(json!({"content": p}), Value::Null)));
            return out;
        }
        Answer::Malformed => {
            out.push(Some("data: {\"id\": \"chatcmpl\", \"choices\": [{\"delta\": {\"content\": \"hel\n\n".into()));
            out.push(Some("data: [DONE]\n\n".into()));
            return out;
        }
        Answer::StreamError { kind, message } => {
            out.push(data(json!({"error": {"message": message, "type": kind, "param": null, "code": null}})));
            out.push(Some("data: [DONE]\n\n".into()));
            return out;
        }
        Answer::HttpError { .. } => return Vec::new(),
    };
    for (i, piece) in text.map(pieces).unwrap_or_default().into_iter().enumerate() {
        out.push(chunk(json!({"content": piece}), Value::Null));
        if i == 0 {
            out.push(None);
        }
    }
    // Each call opens with its id, name and first fragment; the rest of their fragments
    // interleave, as parallel calls do.
    let fragments: Vec<Vec<String>> = calls.iter().map(|c| pieces(&c.arguments)).collect();
    for (index, call) in calls.iter().enumerate() {
        let first = fragments[index].first().cloned().unwrap_or_default();
        out.push(chunk(
            json!({"tool_calls": [{"index": index, "id": call.id, "type": "function",
                "function": {"name": call.name, "arguments": first}}]}),
            Value::Null,
        ));
        if index == 0 && text.is_none() {
            out.push(None);
        }
    }
    let most = fragments.iter().map(Vec::len).max().unwrap_or(0);
    for round in 1..most {
        for (index, parts) in fragments.iter().enumerate() {
            if let Some(part) = parts.get(round) {
                out.push(chunk(
                    json!({"tool_calls": [{"index": index, "function": {"arguments": part}}]}),
                    Value::Null,
                ));
            }
        }
    }
    let finish = match &turn.stop {
        Some(StopReason::MaxTokens) => "length".to_string(),
        Some(StopReason::Refusal) => "content_filter".to_string(),
        Some(StopReason::EndTurn) => "stop".to_string(),
        Some(StopReason::ToolUse) => "tool_calls".to_string(),
        Some(StopReason::Other(other)) => other.clone(),
        None if calls.is_empty() => "stop".to_string(),
        None => "tool_calls".to_string(),
    };
    out.push(chunk(json!({}), json!(finish)));
    let u = turn.usage;
    out.push(data(json!({"id": id, "object": "chat.completion.chunk", "created": 1_700_000_000, "model": model,
        "choices": [], "usage": {"prompt_tokens": u.input_tokens, "completion_tokens": u.output_tokens,
        "total_tokens": u.input_tokens + u.output_tokens}})));
    out.push(Some("data: [DONE]\n\n".into()));
    out
}

fn event(name: &str, value: Value) -> Option<String> {
    Some(format!("event: {name}\ndata: {value}\n\n"))
}

fn anthropic(turn: &Turn, model: &str, n: usize) -> Vec<Option<String>> {
    let u = turn.usage;
    let mut out = vec![
        event(
            "message_start",
            json!({"type": "message_start", "message": {"id": format!("msg_scripted_{n}"), "type": "message",
                "role": "assistant", "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": u.input_tokens, "output_tokens": 1}}}),
        ),
        event("ping", json!({"type": "ping"})),
    ];
    let text_block = |out: &mut Vec<Option<String>>, index: usize, text: &str, all: bool| {
        out.push(event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
        ));
        let parts = pieces(text);
        let count = if all { parts.len() } else { 2 };
        for (i, piece) in parts.into_iter().take(count).enumerate() {
            out.push(event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}),
            ));
            if i == 0 && all {
                out.push(None);
            }
        }
    };
    let (text, calls) = match &turn.answer {
        Answer::Reply { text, calls } => (text.as_deref(), calls.as_slice()),
        Answer::Truncated(text) => {
            text_block(&mut out, 0, text, false);
            return out;
        }
        Answer::Malformed => {
            out.push(Some("event: content_block_start\ndata: {\"type\": \"content_block_start\", \"ind\n\n".into()));
            out.push(event("message_stop", json!({"type": "message_stop"})));
            return out;
        }
        Answer::StreamError { kind, message } => {
            out.push(event("error", json!({"type": "error", "error": {"type": kind, "message": message}})));
            return out;
        }
        Answer::HttpError { .. } => return Vec::new(),
    };
    let mut index = 0;
    if let Some(text) = text {
        text_block(&mut out, index, text, true);
        out.push(event("content_block_stop", json!({"type": "content_block_stop", "index": index})));
        index += 1;
    }
    for call in calls {
        out.push(event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block":
                {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}}),
        ));
        if index == 0 {
            out.push(None);
        }
        // The API's first fragment is empty.
        for part in std::iter::once(String::new()).chain(pieces(&call.arguments)) {
            out.push(event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": part}}),
            ));
        }
        out.push(event("content_block_stop", json!({"type": "content_block_stop", "index": index})));
        index += 1;
    }
    let stop = match &turn.stop {
        Some(StopReason::MaxTokens) => "max_tokens".to_string(),
        Some(StopReason::Refusal) => "refusal".to_string(),
        Some(StopReason::EndTurn) => "end_turn".to_string(),
        Some(StopReason::ToolUse) => "tool_use".to_string(),
        Some(StopReason::Other(other)) => other.clone(),
        None if calls.is_empty() => "end_turn".to_string(),
        None => "tool_use".to_string(),
    };
    out.push(event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
            "usage": {"output_tokens": u.output_tokens}}),
    ));
    out.push(event("message_stop", json!({"type": "message_stop"})));
    out
}
