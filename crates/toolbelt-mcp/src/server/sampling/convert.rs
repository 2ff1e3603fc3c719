//! The loop's conversation as a `sampling/createMessage` request, and the client's answer as
//! a [`Reply`].

use std::sync::Arc;

use rmcp::model::{
    ContentBlock, CreateMessageRequestParams, CreateMessageResult, JsonObject, ModelHint, ModelPreferences,
    Role as McpRole, SamplingMessage, SamplingMessageContentBlock, Tool, ToolChoice as McpToolChoice,
    ToolResultContent,
};
use serde_json::Value;
use toolbelt_agent::{Message, Part, ProviderError, Reply, Request, Role, StopReason, ToolChoice, ToolDef, Usage};
use toolbelt_core::Content;

use super::{NAME, NO_TOOLS_NOTICE};

/// The request for `request`: with its tools and tool choice when the client takes tools
/// (`tools`), else text only with the notice heading the system prompt. A model is hinted
/// (`modelPreferences.hints`) only when one was chosen, i.e. it is not `default_model`.
pub(super) fn params(request: &Request, tools: bool, default_model: &str) -> CreateMessageRequestParams {
    let messages = if tools { with_tools(&request.messages) } else { text_only(&request.messages) };
    let mut params = CreateMessageRequestParams::new(messages, request.max_tokens);
    let system = if tools {
        request.system.clone()
    } else if request.system.trim().is_empty() {
        NO_TOOLS_NOTICE.to_string()
    } else {
        format!("{NO_TOOLS_NOTICE}\n\n{}", request.system)
    };
    if !system.trim().is_empty() {
        params = params.with_system_prompt(system);
    }
    let model = request.model.trim();
    if !model.is_empty() && model != default_model {
        params = params.with_model_preferences(ModelPreferences::new().with_hints(vec![ModelHint::new(model)]));
    }
    if tools && !request.tools.is_empty() {
        params =
            params.with_tools(request.tools.iter().map(tool).collect()).with_tool_choice(match request.tool_choice {
                ToolChoice::Auto => McpToolChoice::auto(),
                ToolChoice::None => McpToolChoice::none(),
            });
    }
    params
}

/// A tool as sampling shows it: its name, description and input schema.
fn tool(def: &ToolDef) -> Tool {
    let schema = match &def.input_schema {
        Value::Object(schema) => schema.clone(),
        _ => {
            let mut any = JsonObject::new();
            any.insert("type".into(), Value::String("object".into()));
            any
        }
    };
    Tool::new(def.name.clone(), def.description.clone(), Arc::new(schema))
}

/// The conversation with tool calls and results as sampling content. As the protocol wants,
/// a message of results holds nothing else (text that came with them follows in a message of
/// its own), and every call is answered in the user message after it: a call left without a
/// result (the agent was stopped while it ran) is answered as not run.
fn with_tools(messages: &[Message]) -> Vec<SamplingMessage> {
    let mut out = Vec::new();
    let mut unanswered: Vec<String> = Vec::new();
    for message in messages {
        match message.role {
            Role::Assistant => {
                answer_left(&mut out, &mut unanswered, Vec::new());
                let mut blocks = Vec::new();
                for part in &message.parts {
                    match part {
                        Part::Text { text } => blocks.push(SamplingMessageContentBlock::text(text.as_str())),
                        Part::ToolUse { id, name, input } => {
                            unanswered.push(id.clone());
                            blocks.push(SamplingMessageContentBlock::tool_use(
                                id.as_str(),
                                name.as_str(),
                                object(input),
                            ));
                        }
                        Part::ToolResult { .. } => blocks.push(SamplingMessageContentBlock::text(as_text(part))),
                    }
                }
                push(&mut out, McpRole::Assistant, blocks);
            }
            Role::User => {
                let mut results = Vec::new();
                let mut others = Vec::new();
                for part in &message.parts {
                    match part {
                        Part::ToolResult { id, content, is_error } if unanswered.contains(id) => {
                            unanswered.retain(|u| u != id);
                            let blocks = content.iter().map(block).collect();
                            let result = if *is_error {
                                ToolResultContent::error(id.as_str(), blocks)
                            } else {
                                ToolResultContent::new(id.as_str(), blocks)
                            };
                            results.push(SamplingMessageContentBlock::ToolResult(result));
                        }
                        Part::Text { text } => others.push(SamplingMessageContentBlock::text(text.as_str())),
                        _ => others.push(SamplingMessageContentBlock::text(as_text(part))),
                    }
                }
                answer_left(&mut out, &mut unanswered, results);
                push(&mut out, McpRole::User, others);
            }
        }
    }
    answer_left(&mut out, &mut unanswered, Vec::new());
    out
}

/// Pushes the user message of `results`, with a "not run" result for each call still
/// unanswered.
fn answer_left(
    out: &mut Vec<SamplingMessage>,
    unanswered: &mut Vec<String>,
    mut results: Vec<SamplingMessageContentBlock>,
) {
    for id in unanswered.drain(..) {
        let text = "this call was not run: the agent was stopped before it finished";
        results.push(SamplingMessageContentBlock::ToolResult(ToolResultContent::error(
            id,
            vec![ContentBlock::text(text)],
        )));
    }
    push(out, McpRole::User, results);
}

/// The conversation as text alone, for a client that takes no tools: calls and results
/// (there are none unless the conversation began elsewhere) are told in words.
fn text_only(messages: &[Message]) -> Vec<SamplingMessage> {
    let mut out = Vec::new();
    for message in messages {
        let role = match message.role {
            Role::User => McpRole::User,
            Role::Assistant => McpRole::Assistant,
        };
        let blocks = message.parts.iter().map(|p| SamplingMessageContentBlock::text(as_text(p))).collect();
        push(&mut out, role, blocks);
    }
    out
}

/// A part in words.
fn as_text(part: &Part) -> String {
    match part {
        Part::Text { text } => text.clone(),
        Part::ToolUse { name, input, .. } => format!("[called the tool {name} with {input}]"),
        Part::ToolResult { content, is_error, .. } => {
            format!("[tool result]\n{}", Part::result_text(content, *is_error))
        }
    }
}

fn push(out: &mut Vec<SamplingMessage>, role: McpRole, mut blocks: Vec<SamplingMessageContentBlock>) {
    match blocks.len() {
        0 => {}
        1 => out.extend(blocks.pop().map(|b| SamplingMessage::new(role, b))),
        _ => out.push(SamplingMessage::new_multiple(role, blocks)),
    }
}

/// A tool's input as the object sampling wants (another provider's history may hold other
/// JSON).
fn object(input: &Value) -> JsonObject {
    match input {
        Value::Object(map) => map.clone(),
        Value::Null => JsonObject::new(),
        other => {
            let mut map = JsonObject::new();
            map.insert("input".into(), other.clone());
            map
        }
    }
}

fn block(content: &Content) -> ContentBlock {
    match content {
        Content::Text { text } => ContentBlock::text(text.as_str()),
        Content::Image { data, mime_type } => ContentBlock::image(data.as_str(), mime_type.as_str()),
    }
}

/// The client's answer as a reply: its text and (when the client takes tools) tool calls, in
/// order, and why it stopped. Sampling reports no token counts.
pub(super) fn reply(result: CreateMessageResult, tools: bool) -> Result<Reply, ProviderError> {
    let stream = |message: String| ProviderError::Stream { provider: NAME.into(), message };
    if result.message.role != McpRole::Assistant {
        return Err(stream("the MCP client answered with a user message; a sampling answer is the assistant's".into()));
    }
    let mut parts = Vec::new();
    for content in result.message.content.into_vec() {
        match content {
            SamplingMessageContentBlock::Text(text) => parts.push(Part::text(text.text)),
            SamplingMessageContentBlock::ToolUse(call) if tools => {
                parts.push(Part::ToolUse { id: call.id, name: call.name, input: Value::Object(call.input) });
            }
            SamplingMessageContentBlock::ToolUse(call) => parts.push(Part::text(format!(
                "[the model asked to call {}, but this MCP host's sampling takes no tools]",
                call.name
            ))),
            SamplingMessageContentBlock::Image(image) => parts.push(Part::text(format!(
                "[the model answered with an image ({}), which an agent cannot keep]",
                image.mime_type
            ))),
            SamplingMessageContentBlock::Audio(audio) => parts.push(Part::text(format!(
                "[the model answered with audio ({}), which an agent cannot keep]",
                audio.mime_type
            ))),
            SamplingMessageContentBlock::ToolResult(_) => {
                return Err(stream(
                    "the MCP client's answer holds a tool result, which only the server's user messages may".into(),
                ));
            }
            _ => parts.push(Part::text("[the model answered with content of a kind this server does not know]")),
        }
    }
    let calls = parts.iter().any(|p| matches!(p, Part::ToolUse { .. }));
    let stop = match result.stop_reason.as_deref() {
        Some(CreateMessageResult::STOP_REASON_TOOL_USE) | None if calls => StopReason::ToolUse,
        Some(CreateMessageResult::STOP_REASON_END_MAX_TOKEN) => StopReason::MaxTokens,
        Some("refusal") => StopReason::Refusal,
        Some(
            CreateMessageResult::STOP_REASON_END_TURN
            | CreateMessageResult::STOP_REASON_END_SEQUENCE
            | CreateMessageResult::STOP_REASON_TOOL_USE,
        )
        | None => StopReason::EndTurn,
        Some(other) => StopReason::Other(other.to_string()),
    };
    Ok(Reply { parts, stop, usage: Usage::default() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(messages: Vec<Message>, model: &str) -> Request {
        Request {
            model: model.into(),
            system: "You are a careful agent.".into(),
            messages,
            tools: Arc::from([ToolDef {
                name: "Read".into(),
                description: "Reads a file.".into(),
                input_schema: json!({"type": "object", "properties": {"file_path": {"type": "string"}}}),
            }]),
            tool_choice: ToolChoice::Auto,
            max_tokens: 1000,
        }
    }

    fn call(id: &str) -> Part {
        Part::ToolUse { id: id.into(), name: "Read".into(), input: json!({"file_path": "a.txt"}) }
    }

    fn result(id: &str) -> Part {
        Part::ToolResult { id: id.into(), content: vec![Content::text("1\thello")], is_error: false }
    }

    #[test]
    fn a_conversation_with_tools_is_sent_as_the_protocol_wants() {
        let messages = vec![
            Message::user("Read a.txt"),
            Message { role: Role::Assistant, parts: vec![Part::text("Reading."), call("c1")] },
            Message { role: Role::User, parts: vec![result("c1"), Part::text("and hurry")] },
        ];
        let params = params(&request(messages, "the default"), true, "the default");
        params.validate().unwrap();
        let sent = serde_json::to_value(&params).unwrap();
        assert_eq!(
            sent,
            json!({
                "messages": [
                    {"role": "user", "content": {"type": "text", "text": "Read a.txt"}},
                    {"role": "assistant", "content": [
                        {"type": "text", "text": "Reading."},
                        {"type": "tool_use", "id": "c1", "name": "Read", "input": {"file_path": "a.txt"}},
                    ]},
                    {"role": "user", "content": {"type": "tool_result", "toolUseId": "c1",
                        "content": [{"type": "text", "text": "1\thello"}]}},
                    {"role": "user", "content": {"type": "text", "text": "and hurry"}},
                ],
                "systemPrompt": "You are a careful agent.",
                "maxTokens": 1000,
                "tools": [{"name": "Read", "description": "Reads a file.",
                    "inputSchema": {"type": "object", "properties": {"file_path": {"type": "string"}}}}],
                "toolChoice": {"mode": "auto"},
            })
        );
    }

    #[test]
    fn a_chosen_model_is_hinted_and_the_last_turn_may_forbid_tools() {
        let mut req = request(vec![Message::user("hi")], "big-model");
        req.tool_choice = ToolChoice::None;
        let sent = serde_json::to_value(params(&req, true, "the default")).unwrap();
        assert_eq!(sent["modelPreferences"], json!({"hints": [{"name": "big-model"}]}));
        assert_eq!(sent["toolChoice"], json!({"mode": "none"}));
    }

    #[test]
    fn a_call_left_without_result_is_answered_as_not_run() {
        // Stopped while its tools ran, then continued with a message.
        let messages = vec![
            Message::user("Read a.txt"),
            Message { role: Role::Assistant, parts: vec![call("c1"), call("c2")] },
            Message { role: Role::User, parts: vec![result("c2"), Part::text("go on")] },
        ];
        let params = params(&request(messages, ""), true, "");
        params.validate().unwrap();
        let sent = serde_json::to_value(&params).unwrap();
        let results = &sent["messages"][2]["content"];
        assert_eq!(results[0]["toolUseId"], "c2");
        assert_eq!(results[1]["toolUseId"], "c1");
        assert_eq!(results[1]["isError"], true);
        assert!(results[1]["content"][0]["text"].as_str().unwrap().contains("not run"));
        assert_eq!(sent["messages"][3]["content"]["text"], "go on");
        assert!(sent.get("modelPreferences").is_none());
    }

    #[test]
    fn without_tools_the_request_is_text_and_says_so_first() {
        let messages = vec![
            Message::user("Read a.txt"),
            Message { role: Role::Assistant, parts: vec![call("c1")] },
            Message { role: Role::User, parts: vec![result("c1")] },
        ];
        let params = params(&request(messages, "x"), false, "x");
        params.validate().unwrap();
        let sent = serde_json::to_value(&params).unwrap();
        assert!(sent.get("tools").is_none() && sent.get("toolChoice").is_none(), "{sent}");
        let system = sent["systemPrompt"].as_str().unwrap();
        assert_eq!(system.lines().next(), Some(NO_TOOLS_NOTICE));
        assert!(system.ends_with("You are a careful agent."));
        assert_eq!(sent["messages"][1]["content"]["type"], "text");
        assert_eq!(sent["messages"][2]["content"]["text"], "[tool result]\n1\thello");
    }

    fn answer(value: serde_json::Value) -> CreateMessageResult {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn answers_become_replies() {
        let calls = answer(json!({
            "role": "assistant", "model": "m", "stopReason": "toolUse",
            "content": [{"type": "text", "text": "Let me look."},
                        {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a.txt"}}],
        }));
        let reply = reply(calls.clone(), true).unwrap();
        assert_eq!(reply.stop, StopReason::ToolUse);
        assert_eq!(
            reply.parts,
            vec![
                Part::text("Let me look."),
                Part::ToolUse { id: "t1".into(), name: "Read".into(), input: json!({"file_path": "a.txt"}) },
            ]
        );
        // Without tools, a call the model makes anyway is told, not run.
        let told = super::reply(calls, false).unwrap();
        assert!(matches!(&told.parts[1], Part::Text { text } if text.contains("takes no tools")));
        assert_eq!(told.stop, StopReason::EndTurn);
        let single = answer(json!({"role": "assistant", "model": "m", "content": {"type": "text", "text": "Done."}}));
        let done = super::reply(single, true).unwrap();
        assert_eq!((done.parts, done.stop), (vec![Part::text("Done.")], StopReason::EndTurn));
        let cut = answer(json!({"role": "assistant", "model": "m", "stopReason": "maxTokens",
            "content": {"type": "text", "text": "Half"}}));
        assert_eq!(super::reply(cut, true).unwrap().stop, StopReason::MaxTokens);
        let user = answer(json!({"role": "user", "model": "m", "content": {"type": "text", "text": "?"}}));
        let err = super::reply(user, true).unwrap_err().to_string();
        assert!(err.starts_with("model provider `MCP sampling` sent a reply that could not be read"), "{err}");
    }
}
