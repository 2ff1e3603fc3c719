//! OpenAI-compatible Chat Completions, streamed: OpenAI itself, and the servers that speak its
//! protocol (Ollama, vLLM, llama.cpp, LM Studio, OpenRouter…).
//!
//! The request: `POST {base_url}/chat/completions` with `stream: true` and
//! `stream_options.include_usage`; the system prompt as the first `system` message; tool calls
//! as an assistant message's `tool_calls` (arguments as JSON text); tool results as `tool`
//! messages of text (images named, since the protocol takes text results); `max_tokens`, which
//! every compatible server takes. The reply: `data:` lines of chunks up to `data: [DONE]`,
//! text in `delta.content`, tool calls in `delta.tool_calls[]` by `index` (the id and name in
//! a call's first fragment, its arguments in pieces; parallel calls interleave), the reason in
//! `finish_reason`, usage in the last chunk.

use serde_json::{Map, Value, json};
use toolbelt_core::BoxFuture;

use super::Timeouts;
use super::http::{Hints, Http, status_error};
use super::reply::Assembler;
use crate::config::ProviderConfig;
use crate::message::{Message, Part, Reply, Request, Role, StopReason, ToolChoice, Usage};
use crate::provider::{Provider, ProviderError, StreamSink};

/// A provider speaking OpenAI-compatible Chat Completions.
pub struct OpenAiProvider {
    name: String,
    model: String,
    url: String,
    key: Option<String>,
    http: Http,
}

impl std::fmt::Debug for OpenAiProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        f.debug_struct("OpenAiProvider")
            .field("name", &self.name)
            .field("model", &self.model)
            .field("url", &self.url)
            .field("key", &self.key.as_ref().map(|_| "…"))
            .finish()
    }
}

impl OpenAiProvider {
    /// The provider `config` describes, sending `key` (read from its `api_key_env`) when
    /// there is one.
    pub fn new(config: &ProviderConfig, key: Option<String>, timeouts: Timeouts) -> Result<Self, ProviderError> {
        let base = super::base_url(config)?;
        let hints = Hints::new(config, key.is_some(), (config.name == "openai").then_some("OPENAI_MODEL"));
        Ok(Self {
            name: config.name.clone(),
            model: config.model.clone().unwrap_or_else(|| super::default_model(config.kind).to_string()),
            url: format!("{base}/chat/completions"),
            key,
            http: Http::new(hints, timeouts)?,
        })
    }

    async fn stream(&self, request: &Request, events: StreamSink<'_>) -> Result<Reply, ProviderError> {
        let headers: Vec<(&'static str, String)> =
            self.key.iter().map(|key| ("authorization", format!("Bearer {key}"))).collect();
        let body = request_body(request);
        let mut stream = self.http.post(&self.url, &headers, &body, &request.model).await?;
        let mut reply = Assembler::default();
        let (mut finish, mut usage, mut done) = (None::<String>, Usage::default(), false);
        while let Some(event) = stream.next(reply.began()).await? {
            if event.data.trim() == "[DONE]" {
                done = true;
                break;
            }
            let chunk: Value = serde_json::from_str(&event.data).map_err(|e| {
                stream.error(format!("a `data:` line is not JSON ({e}): {}", super::http::snippet(&event.data)))
            })?;
            if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
                return Err(self.stream_error(error, &request.model));
            }
            if let Some(u) = chunk.get("usage").filter(|u| u.is_object()) {
                usage = Usage {
                    input_tokens: u["prompt_tokens"].as_u64().unwrap_or(0),
                    output_tokens: u["completion_tokens"].as_u64().unwrap_or(0),
                };
            }
            let choices = chunk.get("choices").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
            for choice in choices.iter().filter(|c| c["index"].as_u64().unwrap_or(0) == 0) {
                let delta = &choice["delta"];
                if let Some(text) = delta["content"].as_str() {
                    reply.text(text, events);
                }
                for call in delta["tool_calls"].as_array().map(Vec::as_slice).unwrap_or_default() {
                    let id = call["id"].as_str();
                    let index = call["index"].as_u64().unwrap_or_else(|| reply.index_of(id));
                    let function = &call["function"];
                    let arguments = match &function["arguments"] {
                        Value::String(s) => Some(s.clone()),
                        Value::Null => None,
                        // A server that sends the arguments as an object rather than text.
                        other => Some(other.to_string()),
                    };
                    reply.call(index, id, function["name"].as_str(), arguments.as_deref(), events);
                }
                if let Some(reason) = choice["finish_reason"].as_str() {
                    finish = Some(reason.to_string());
                }
            }
        }
        if !done {
            return Err(stream.cut_short("its `data: [DONE]` line"));
        }
        let calls = reply.has_calls();
        let parts = reply.finish().map_err(|m| stream.error(m))?;
        Ok(Reply { parts, stop: stop_reason(finish.as_deref(), calls), usage })
    }

    /// An `{"error": {…}}` chunk: a status error when it carries an HTTP code, else a stream
    /// error with the API's message.
    fn stream_error(&self, error: &Value, model: &str) -> ProviderError {
        let message = error["message"].as_str().or(error.as_str()).map(str::to_string);
        let code = error["code"].as_u64().and_then(|c| u16::try_from(c).ok()).filter(|c| (400..600).contains(c));
        let kind = [&error["type"], &error["code"]].iter().filter_map(|v| v.as_str()).collect::<Vec<_>>().join(" ");
        let status = code.or(if kind.contains("rate_limit") {
            Some(429)
        } else if kind.contains("server_error") || kind.contains("overloaded") {
            Some(500)
        } else {
            None
        });
        match status {
            Some(status) => status_error(&self.http.hints, status, message, None, model, &self.url),
            None => ProviderError::Stream {
                provider: self.name.clone(),
                message: format!(
                    "the stream reported an error: {}",
                    message.unwrap_or_else(|| super::http::snippet(&error.to_string()))
                ),
            },
        }
    }
}

impl Provider for OpenAiProvider {
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

/// Why the model stopped. Some compatible servers say `stop` after tool calls: a reply that
/// holds calls wants them run.
fn stop_reason(finish: Option<&str>, calls: bool) -> StopReason {
    match finish {
        Some("length") => StopReason::MaxTokens,
        Some("content_filter") => StopReason::Refusal,
        _ if calls => StopReason::ToolUse,
        Some("stop") | None => StopReason::EndTurn,
        Some("tool_calls" | "function_call") => StopReason::ToolUse,
        Some(other) => StopReason::Other(other.to_string()),
    }
}

/// The request's JSON body.
pub(crate) fn request_body(request: &Request) -> Value {
    let mut messages = Vec::new();
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    for message in &request.messages {
        push_message(&mut messages, message);
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("messages".into(), Value::Array(messages));
    body.insert("stream".into(), json!(true));
    body.insert("stream_options".into(), json!({"include_usage": true}));
    body.insert("max_tokens".into(), json!(request.max_tokens));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.input_schema,
                }})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        let choice = match request.tool_choice {
            ToolChoice::Auto => "auto",
            ToolChoice::None => "none",
        };
        body.insert("tool_choice".into(), json!(choice));
    }
    Value::Object(body)
}

/// One message of the conversation as Chat Completions messages: an assistant message with
/// its `tool_calls`; a user message's tool results as `tool` messages first (they must follow
/// the calls they answer), then its text as a `user` message.
fn push_message(out: &mut Vec<Value>, message: &Message) {
    let text = message.text();
    match message.role {
        Role::Assistant => {
            let calls: Vec<Value> = message
                .tool_uses()
                .map(|(id, name, input)| {
                    let arguments = match input {
                        // Arguments that were not JSON go back as the model wrote them.
                        Value::String(raw) => raw.clone(),
                        other => other.to_string(),
                    };
                    json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
                })
                .collect();
            let mut m =
                json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) }});
            if !calls.is_empty() {
                m["tool_calls"] = Value::Array(calls);
            }
            out.push(m);
        }
        Role::User => {
            for part in &message.parts {
                if let Part::ToolResult { id, content, is_error } = part {
                    let content = Part::result_text(content, *is_error);
                    out.push(json!({"role": "tool", "tool_call_id": id, "content": content}));
                }
            }
            let only_results = message.parts.iter().all(|p| matches!(p, Part::ToolResult { .. }));
            if !only_results || message.parts.is_empty() {
                out.push(json!({"role": "user", "content": text}));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use toolbelt_core::Content;

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
                        Part::ToolUse { id: "c1".into(), name: "Read".into(), input: json!({"file_path": "a"}) },
                        Part::ToolUse { id: "c2".into(), name: "Bash".into(), input: json!("{bad") },
                    ],
                },
                Message {
                    role: Role::User,
                    parts: vec![
                        Part::ToolResult { id: "c1".into(), content: vec![Content::text("body")], is_error: false },
                        Part::ToolResult { id: "c2".into(), content: vec![Content::text("not JSON")], is_error: true },
                        Part::text("and then?"),
                    ],
                },
            ],
            tools: std::sync::Arc::from([ToolDef {
                name: "Read".into(),
                description: "reads".into(),
                input_schema: json!({"type": "object"}),
            }]),
            tool_choice: ToolChoice::None,
            max_tokens: 100,
        };
        let body = request_body(&request);
        assert_eq!(
            body["messages"],
            json!([
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "Read", "arguments": "{\"file_path\":\"a\"}"}},
                    {"id": "c2", "type": "function", "function": {"name": "Bash", "arguments": "{bad"}},
                ]},
                {"role": "tool", "tool_call_id": "c1", "content": "body"},
                {"role": "tool", "tool_call_id": "c2", "content": "Error: not JSON"},
                {"role": "user", "content": "and then?"},
            ])
        );
        assert_eq!(body["tool_choice"], "none");
        assert_eq!(body["tools"][0]["function"]["parameters"], json!({"type": "object"}));
        let bare = Request { tools: std::sync::Arc::from([]), system: String::new(), ..request };
        let body = request_body(&bare);
        assert!(body.get("tools").is_none() && body.get("tool_choice").is_none(), "{body}");
        assert_eq!(body["messages"][0]["role"], "user");
    }

    #[test]
    fn stop_reasons() {
        assert_eq!(stop_reason(Some("stop"), false), StopReason::EndTurn);
        assert_eq!(stop_reason(Some("stop"), true), StopReason::ToolUse);
        assert_eq!(stop_reason(Some("tool_calls"), true), StopReason::ToolUse);
        assert_eq!(stop_reason(Some("length"), true), StopReason::MaxTokens);
        assert_eq!(stop_reason(Some("content_filter"), false), StopReason::Refusal);
        assert_eq!(stop_reason(Some("eos"), false), StopReason::Other("eos".into()));
    }
}
