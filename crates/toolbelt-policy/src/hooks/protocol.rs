//! Claude Code's hook JSON: what a hook is given, and what its answer means for each event.

use serde_json::{Map, Value, json};
use toolbelt_core::{Content, ToolError, ToolOutput};

use super::runner::Response;
use crate::{CallInfo, Decision, Finished, HookEvent, SessionInfo};

/// The input of a PreToolUse, PostToolUse or PostToolUseFailure hook.
pub(super) fn call_input(event: HookEvent, call: &CallInfo<'_>, mode: &str, result: Option<&Finished<'_>>) -> Value {
    let mut input = json!({
        "session_id": call.session.id(),
        "cwd": call.cwd,
        "permission_mode": session_mode(call, mode),
        "hook_event_name": event.as_str(),
        "tool_name": call.tool.name,
        "tool_input": call.input,
        "tool_use_id": call.call_id,
    });
    if let (Some(done), Value::Object(map)) = (result, &mut input) {
        match done.result {
            Ok(output) => {
                let response = match &output.structured {
                    Some(structured) => structured.clone(),
                    None => Value::String(output.joined_text()),
                };
                map.insert("tool_response".into(), response);
            }
            Err(error) => {
                map.insert("error".into(), Value::String(error.to_string()));
                map.insert("is_interrupt".into(), Value::Bool(matches!(error, ToolError::Cancelled)));
            }
        }
    }
    input
}

/// The mode hooks are told: the session's own when a person switched it, else the configured one.
fn session_mode<'a>(call: &CallInfo<'_>, configured: &'a str) -> &'a str {
    match call.session.with_slot::<crate::SessionMode, _>(|m| m.mode) {
        Some(mode) => mode.as_str(),
        None => configured,
    }
}

/// The input of a SessionStart or SessionEnd hook.
pub(super) fn session_input(event: HookEvent, session: &SessionInfo<'_>, mode: &str) -> Value {
    let reason_key = if event == HookEvent::SessionStart { "source" } else { "reason" };
    let mut map = Map::new();
    map.insert("session_id".into(), json!(session.session_id));
    map.insert("cwd".into(), json!(session.cwd));
    map.insert("permission_mode".into(), json!(mode));
    map.insert("hook_event_name".into(), json!(event.as_str()));
    map.insert(reason_key.into(), json!(session.reason));
    Value::Object(map)
}

/// What one PreToolUse handler said.
#[derive(Debug, Default)]
pub(super) struct PreAnswer {
    pub decision: Option<(Decision, String)>,
    pub updated_input: Option<Value>,
    pub context: Option<String>,
    pub summary: String,
    pub failed: bool,
}

pub(super) fn pre_answer(response: Response) -> PreAnswer {
    match response {
        Response::Json(v) => {
            log_system_message(&v);
            let hso = &v["hookSpecificOutput"];
            let mut answer = PreAnswer::default();
            if v["continue"] == Value::Bool(false) {
                let why = v["stopReason"].as_str().unwrap_or("a hook stopped the call").to_string();
                answer.decision = Some((Decision::Deny, why));
            } else if let Some(d) = hso["permissionDecision"].as_str() {
                let reason = hso["permissionDecisionReason"].as_str().unwrap_or("").to_string();
                answer.decision = match d {
                    "allow" => Some((Decision::Allow, or(reason, "a hook allowed it"))),
                    // `defer` hands the decision to a person, as `ask` does.
                    "ask" | "defer" => Some((Decision::Ask, or(reason, "a hook asks for approval"))),
                    "deny" => Some((Decision::Deny, or(reason, "a hook denied it"))),
                    other => {
                        answer.failed = true;
                        answer.summary = format!("error: unknown permissionDecision `{other}`");
                        None
                    }
                };
            } else if let Some(d) = v["decision"].as_str() {
                // The older top-level form.
                let reason = v["reason"].as_str().unwrap_or("").to_string();
                answer.decision = match d {
                    "approve" => Some((Decision::Allow, or(reason, "a hook approved it"))),
                    "block" => Some((Decision::Deny, or(reason, "a hook blocked it"))),
                    _ => None,
                };
            }
            answer.updated_input = hso.get("updatedInput").filter(|u| u.is_object()).cloned();
            answer.context = hso["additionalContext"].as_str().filter(|s| !s.is_empty()).map(str::to_string);
            if answer.summary.is_empty() {
                answer.summary = summarize(&answer);
            }
            answer
        }
        Response::Block(stderr) => {
            let reason = or(stderr, "a hook blocked it (exit status 2)");
            PreAnswer {
                summary: format!("deny: {reason}"),
                decision: Some((Decision::Deny, reason)),
                ..PreAnswer::default()
            }
        }
        Response::Failed(why) => PreAnswer { summary: format!("error: {why}"), failed: true, ..PreAnswer::default() },
        Response::Text(_) | Response::Nothing => PreAnswer { summary: "no decision".into(), ..PreAnswer::default() },
    }
}

fn summarize(answer: &PreAnswer) -> String {
    let mut parts = Vec::new();
    if let Some((decision, reason)) = &answer.decision {
        let name = match decision {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        };
        parts.push(if reason.is_empty() { name.to_string() } else { format!("{name}: {reason}") });
    }
    if answer.updated_input.is_some() {
        parts.push("rewrote the input".into());
    }
    if answer.context.is_some() {
        parts.push("added context".into());
    }
    if parts.is_empty() { "no decision".into() } else { parts.join("; ") }
}

/// What one PostToolUse / PostToolUseFailure handler said.
#[derive(Debug, Default)]
pub(super) struct PostAnswer {
    pub block: Option<String>,
    pub replace: Option<ToolOutput>,
    pub context: Option<String>,
    pub summary: String,
    pub failed: bool,
}

pub(super) fn post_answer(event: HookEvent, response: Response) -> PostAnswer {
    match response {
        Response::Json(v) => {
            log_system_message(&v);
            let hso = &v["hookSpecificOutput"];
            let mut answer = PostAnswer::default();
            if v["continue"] == Value::Bool(false) {
                answer.block = Some(v["stopReason"].as_str().unwrap_or("a hook stopped here").to_string());
            } else if v["decision"].as_str() == Some("block") {
                answer.block = Some(v["reason"].as_str().unwrap_or("a hook blocked the result").to_string());
            }
            answer.replace = hso.get("updatedMCPToolOutput").map(output_from_json);
            answer.context = hso["additionalContext"].as_str().filter(|s| !s.is_empty()).map(str::to_string);
            answer.summary = match (&answer.block, &answer.replace, &answer.context) {
                (Some(reason), _, _) => format!("block: {reason}"),
                (None, Some(_), _) => "replaced the output".into(),
                (None, None, Some(_)) => "added context".into(),
                _ => "no decision".into(),
            };
            answer
        }
        Response::Block(stderr) if event == HookEvent::PostToolUseFailure => {
            PostAnswer { summary: "added context".into(), context: Some(stderr), ..PostAnswer::default() }
        }
        Response::Block(stderr) => {
            let reason = or(stderr, "a hook blocked the result (exit status 2)");
            PostAnswer { summary: format!("block: {reason}"), block: Some(reason), ..PostAnswer::default() }
        }
        Response::Failed(why) => PostAnswer { summary: format!("error: {why}"), failed: true, ..PostAnswer::default() },
        Response::Text(_) | Response::Nothing => PostAnswer { summary: "no decision".into(), ..PostAnswer::default() },
    }
}

/// What a SessionStart handler adds: `additionalContext`, or plain text printed on stdout.
pub(super) fn session_context(response: &Response) -> Option<String> {
    match response {
        Response::Json(v) => v["hookSpecificOutput"]["additionalContext"].as_str().map(str::to_string),
        Response::Text(text) => Some(text.clone()),
        _ => None,
    }
}

/// A replacement output from JSON: a string, MCP content blocks, or any JSON shown as text.
fn output_from_json(value: &Value) -> ToolOutput {
    let text_blocks: Option<Vec<Content>> = value.as_array().and_then(|blocks| {
        blocks.iter().map(|b| (b["type"] == "text").then(|| b["text"].as_str().map(Content::text)).flatten()).collect()
    });
    match (value, text_blocks) {
        (Value::String(s), _) => ToolOutput::text(s.clone()),
        (_, Some(blocks)) if !blocks.is_empty() => {
            let mut out = ToolOutput::text("");
            out.content = blocks;
            out
        }
        (other, _) => ToolOutput::text(other.to_string()),
    }
}

fn log_system_message(v: &Value) {
    if let Some(message) = v["systemMessage"].as_str() {
        tracing::info!("hook says: {message}");
    }
}

fn or(text: String, fallback: &str) -> String {
    if text.trim().is_empty() { fallback.to_string() } else { text.trim().to_string() }
}
