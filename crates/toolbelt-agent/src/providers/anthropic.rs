//! Anthropic Messages, streamed.
//!
//! The request: `POST {base_url}/v1/messages` with `x-api-key`, `anthropic-version:
//! 2023-06-01` and `stream: true`; the system prompt in `system`; tools as `{name,
//! description, input_schema}`; tool results as `tool_result` blocks of a user message (text
//! and image blocks, `is_error`), ahead of its text as the API requires. The reply: events
//! `message_start` (usage), `content_block_start` (a text or `tool_use` block with its id and
//! name), `content_block_delta` (`text_delta`, `input_json_delta`), `content_block_stop`,
//! `message_delta` (the stop reason, usage), `message_stop`; `ping`s; and `error` events
//! (`overloaded_error` is retried like an HTTP 529).

use serde_json::{Map, Value, json};
use toolbelt_core::{BoxFuture, Content};

use super::Timeouts;
use super::http::{Hints, Http, snippet, status_error};
use super::reply::Assembler;
use crate::config::ProviderConfig;
use crate::message::{Message, Part, Reply, Request, Role, StopReason, ToolChoice, Usage};
use crate::provider::{Provider, ProviderError, StreamSink};

/// The API version every request names.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// A provider speaking Anthropic Messages.
pub struct AnthropicProvider {
    name: String,
    model: String,
    url: String,
    key: Option<String>,
    http: Http,
}

impl std::fmt::Debug for AnthropicProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        f.debug_struct("AnthropicProvider")
            .field("name", &self.name)
            .field("model", &self.model)
            .field("url", &self.url)
            .field("key", &self.key.as_ref().map(|_| "…"))
            .finish()
    }
}

impl AnthropicProvider {
    /// The provider `config` describes, sending `key` (read from its `api_key_env`) when
    /// there is one.
    pub fn new(config: &ProviderConfig, key: Option<String>, timeouts: Timeouts) -> Result<Self, ProviderError> {
        let base = super::base_url(config)?;
        // A base URL given with its `/v1` gets no second one.
        let url = if base.ends_with("/v1") { format!("{base}/messages") } else { format!("{base}/v1/messages") };
        let hints = Hints::new(config, key.is_some(), (config.name == "anthropic").then_some("ANTHROPIC_MODEL"));
        Ok(Self {
            name: config.name.clone(),
            model: config.model.clone().unwrap_or_else(|| super::default_model(config.kind).to_string()),
            url,
            key,
            http: Http::new(hints, timeouts)?,
        })
    }

    async fn stream(&self, request: &Request, events: StreamSink<'_>) -> Result<Reply, ProviderError> {
        let mut headers = vec![("anthropic-version", ANTHROPIC_VERSION.to_string())];
        headers.extend(self.key.iter().map(|key| ("x-api-key", key.clone())));
        let body = request_body(request);
        let mut stream = self.http.post(&self.url, &headers, &body, &request.model).await?;
        let mut reply = Assembler::default();
        let (mut stop, mut usage, mut done) = (None::<String>, Usage::default(), false);
        while let Some(event) = stream.next(reply.began()).await? {
            let data: Value = serde_json::from_str(&event.data)
                .map_err(|e| stream.error(format!("an event's data is not JSON ({e}): {}", snippet(&event.data))))?;
            let kind = data["type"].as_str().or(event.event.as_deref()).unwrap_or_default();
            let index = data["index"].as_u64().unwrap_or(0);
            match kind {
                "message_start" => {
                    let u = &data["message"]["usage"];
                    usage.input_tokens = input_tokens(u);
                    usage.output_tokens = u["output_tokens"].as_u64().unwrap_or(0);
                }
                "content_block_start" => {
                    let block = &data["content_block"];
                    match block["type"].as_str() {
                        Some("text") => reply.text(block["text"].as_str().unwrap_or_default(), events),
                        Some("tool_use") => {
                            // The input streams in as JSON text; a whole one given here is kept.
                            let input = block["input"]
                                .as_object()
                                .filter(|o| !o.is_empty())
                                .map(|_| block["input"].to_string());
                            reply.call(index, block["id"].as_str(), block["name"].as_str(), input.as_deref(), events);
                        }
                        // Thinking and server-side tool blocks are not part of the reply.
                        _ => {}
                    }
                }
                "content_block_delta" => {
                    let delta = &data["delta"];
                    match delta["type"].as_str() {
                        Some("text_delta") => reply.text(delta["text"].as_str().unwrap_or_default(), events),
                        Some("input_json_delta") => {
                            reply.call(index, None, None, delta["partial_json"].as_str(), events);
                        }
                        _ => {}
                    }
                }
                "message_delta" => {
                    if let Some(reason) = data["delta"]["stop_reason"].as_str() {
                        stop = Some(reason.to_string());
                    }
                    let u = &data["usage"];
                    if let Some(out) = u["output_tokens"].as_u64() {
                        usage.output_tokens = out;
                    }
                    if u["input_tokens"].as_u64().is_some_and(|n| n > 0) {
                        usage.input_tokens = input_tokens(u);
                    }
                }
                "message_stop" => {
                    done = true;
                    break;
                }
                "error" => return Err(self.error_event(&data["error"], &request.model)),
                // `ping`, `content_block_stop`, and events newer than this client.
                _ => {}
            }
        }
        if !done {
            return Err(stream.cut_short("its `message_stop` event"));
        }
        let parts = reply.finish().map_err(|m| stream.error(m))?;
        Ok(Reply { parts, stop: stop_reason(stop.as_deref()), usage })
    }

    /// An `error` event: the HTTP status its type stands for (so an `overloaded_error` is
    /// retried like a 529), with the API's message.
    fn error_event(&self, error: &Value, model: &str) -> ProviderError {
        let message = error["message"].as_str().map(str::to_string);
        let status = match error["type"].as_str().unwrap_or_default() {
            "invalid_request_error" => 400,
            "authentication_error" => 401,
            "permission_error" => 403,
            "not_found_error" => 404,
            "request_too_large" => 413,
            "rate_limit_error" => 429,
            "api_error" => 500,
            "timeout_error" => 504,
            "overloaded_error" => 529,
            other => {
                return ProviderError::Stream {
                    provider: self.name.clone(),
                    message: format!(
                        "the stream reported an error ({}): {}",
                        if other.is_empty() { "of no type" } else { other },
                        message.unwrap_or_else(|| snippet(&error.to_string()))
                    ),
                };
            }
        };
        status_error(&self.http.hints, status, message, None, model, &self.url)
    }
}

impl Provider for AnthropicProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn default_model(&self) -> &str {
        &self.model
    }

    fn complete<'a>(
        &'a self,
        request: &'a Request,
        events: StreamSink<'a>,
    ) -> BoxFuture<'a, Result<Reply, ProviderError>> {
        Box::pin(self.stream(request, events))
    }
}

/// Tokens read: fresh input plus what was written to and read from the prompt cache.
fn input_tokens(usage: &Value) -> u64 {
    ["input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"]
        .iter()
        .filter_map(|k| usage[*k].as_u64())
        .sum()
}

fn stop_reason(reason: Option<&str>) -> StopReason {
    match reason {
        Some("end_turn" | "stop_sequence") | None => StopReason::EndTurn,
        Some("tool_use") => StopReason::ToolUse,
        Some("max_tokens" | "model_context_window_exceeded") => StopReason::MaxTokens,
        Some("refusal") => StopReason::Refusal,
        Some(other) => StopReason::Other(other.to_string()),
    }
}

/// The request's JSON body.
pub(crate) fn request_body(request: &Request) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("max_tokens".into(), json!(request.max_tokens));
    body.insert("stream".into(), json!(true));
    if !request.system.is_empty() {
        body.insert("system".into(), json!(request.system));
    }
    body.insert("messages".into(), Value::Array(request.messages.iter().map(message).collect()));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        let choice = match request.tool_choice {
            ToolChoice::Auto => "auto",
            ToolChoice::None => "none",
        };
        body.insert("tool_choice".into(), json!({"type": choice}));
    }
    Value::Object(body)
}

fn message(message: &Message) -> Value {
    let role = match message.role {
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    // Tool results come first in a user message, as the API requires.
    let mut blocks: Vec<Value> = message
        .parts
        .iter()
        .filter_map(|part| match part {
            Part::ToolResult { id, content, is_error } => {
                let mut block = json!({"type": "tool_result", "tool_use_id": id, "is_error": is_error});
                if !content.is_empty() {
                    block["content"] = Value::Array(content.iter().map(result_block).collect());
                }
                Some(block)
            }
            _ => None,
        })
        .collect();
    for part in &message.parts {
        match part {
            // The API refuses empty text blocks.
            Part::Text { text } if text.is_empty() => {}
            Part::Text { text } => blocks.push(json!({"type": "text", "text": text})),
            Part::ToolUse { id, name, input } => {
                // Arguments that were not JSON go back inside an object, which the API requires.
                let input = match input {
                    Value::Object(_) => input.clone(),
                    other => json!({"unparsed_arguments": other}),
                };
                blocks.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
            }
            Part::ToolResult { .. } => {}
        }
    }
    if blocks.is_empty() {
        // The API refuses a message with no content.
        blocks.push(json!({"type": "text", "text": "(empty)"}));
    }
    json!({"role": role, "content": blocks})
}

fn result_block(content: &Content) -> Value {
    match content {
        Content::Text { text } => json!({"type": "text", "text": text}),
        Content::Image { data, mime_type } => {
            json!({"type": "image", "source": {"type": "base64", "media_type": mime_type, "data": data}})
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::ToolDef;

    #[test]
    fn the_body_carries_the_system_tools_calls_and_results() {
        let request = Request {
            model: "m".into(),
            system: "be brief".into(),
            messages: vec![
                Message::user("hi"),
                Message {
                    role: Role::Assistant,
                    parts: vec![
                        Part::text("Reading."),
                        Part::ToolUse { id: "t1".into(), name: "Read".into(), input: json!({"file_path": "a.png"}) },
                        Part::ToolUse { id: "t2".into(), name: "Bash".into(), input: json!("{bad") },
                    ],
                },
                Message {
                    role: Role::User,
                    parts: vec![
                        Part::text("also this"),
                        Part::ToolResult {
                            id: "t1".into(),
                            content: vec![
                                Content::text("an image"),
                                Content::Image { data: "AAAA".into(), mime_type: "image/png".into() },
                            ],
                            is_error: false,
                        },
                        Part::ToolResult { id: "t2".into(), content: Vec::new(), is_error: true },
                    ],
                },
            ],
            tools: std::sync::Arc::from([ToolDef {
                name: "Read".into(),
                description: "reads".into(),
                input_schema: json!({"type": "object"}),
            }]),
            tool_choice: ToolChoice::Auto,
            max_tokens: 100,
        };
        let body = request_body(&request);
        assert_eq!(body["system"], "be brief");
        assert_eq!(body["tool_choice"], json!({"type": "auto"}));
        assert_eq!(
            body["tools"],
            json!([{"name": "Read", "description": "reads", "input_schema": {"type": "object"}}])
        );
        assert_eq!(
            body["messages"],
            json!([
                {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Reading."},
                    {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a.png"}},
                    {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"unparsed_arguments": "{bad"}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "is_error": false, "content": [
                        {"type": "text", "text": "an image"},
                        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
                    ]},
                    {"type": "tool_result", "tool_use_id": "t2", "is_error": true},
                    {"type": "text", "text": "also this"},
                ]},
            ])
        );
        let bare = Request { tools: std::sync::Arc::from([]), system: String::new(), ..request };
        let body = request_body(&bare);
        assert!(body.get("tools").is_none() && body.get("tool_choice").is_none() && body.get("system").is_none());
    }

    #[test]
    fn stop_reasons_and_cached_input() {
        assert_eq!(stop_reason(Some("tool_use")), StopReason::ToolUse);
        assert_eq!(stop_reason(Some("stop_sequence")), StopReason::EndTurn);
        assert_eq!(stop_reason(Some("max_tokens")), StopReason::MaxTokens);
        assert_eq!(stop_reason(Some("refusal")), StopReason::Refusal);
        assert_eq!(stop_reason(Some("pause_turn")), StopReason::Other("pause_turn".into()));
        let u = json!({"input_tokens": 5, "cache_read_input_tokens": 100, "output_tokens": 1});
        assert_eq!(input_tokens(&u), 105);
    }
}
