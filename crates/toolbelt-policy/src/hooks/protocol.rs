//! Claude Code's hook JSON: what a hook is given, and what its answer means for each event.

use serde_json::{Map, Value, json};
use toolbelt_core::{Content, ToolError, ToolOutput};

use super::outcome::{HookFailure, HookOutcome};
use super::runner::Response;
use crate::{CallInfo, Decision, Finished, HookEvent, SessionInfo, SubagentInfo};

/// The input of a PreToolUse hook.
pub(super) fn pre_input(call: &CallInfo<'_>, mode: &str) -> Value {
    call_input(HookEvent::PreToolUse, call, mode)
}

/// The input of a PostToolUse or PostToolUseFailure hook: the call's, with its result.
pub(super) fn post_input(event: HookEvent, done: &Finished<'_>, mode: &str) -> Value {
    let mut input = call_input(event, &done.call, mode);
    if let Value::Object(map) = &mut input {
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

/// What every call hook is given.
fn call_input(event: HookEvent, call: &CallInfo<'_>, mode: &str) -> Value {
    json!({
        "session_id": call.session.id(),
        "cwd": call.cwd,
        "permission_mode": session_mode(call, mode),
        "hook_event_name": event.as_str(),
        "tool_name": call.tool.name,
        "tool_input": call.input,
        "tool_use_id": call.call_id,
    })
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

/// The input of a SubagentStart or SubagentStop hook.
pub(super) fn subagent_input(event: HookEvent, agent: &SubagentInfo<'_>, mode: &str) -> Value {
    let mut map = Map::new();
    map.insert("session_id".into(), json!(agent.session_id));
    map.insert("cwd".into(), json!(agent.cwd));
    map.insert("permission_mode".into(), json!(mode));
    map.insert("hook_event_name".into(), json!(event.as_str()));
    map.insert("agent_id".into(), json!(agent.agent_id));
    map.insert("agent_type".into(), json!(agent.agent_type));
    if event == HookEvent::SubagentStop {
        map.insert("stop_hook_active".into(), json!(false));
        map.insert("status".into(), json!(agent.status));
        map.insert("last_assistant_message".into(), json!(agent.last_message.unwrap_or("")));
    }
    Value::Object(map)
}

/// What one PreToolUse handler said.
#[derive(Debug)]
pub(super) struct PreAnswer {
    pub decision: Option<(Decision, String)>,
    pub updated_input: Option<Value>,
    pub context: Option<String>,
    pub outcome: HookOutcome,
}

impl PreAnswer {
    /// An answer that changes nothing, ending as `outcome`.
    fn only(outcome: HookOutcome) -> Self {
        Self { decision: None, updated_input: None, context: None, outcome }
    }
}

pub(super) fn pre_answer(response: Response) -> PreAnswer {
    match response {
        Response::Json(v) => {
            log_system_message(&v);
            let hso = &v["hookSpecificOutput"];
            let mut answer = PreAnswer::only(HookOutcome::NoDecision);
            let mut unknown = None;
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
                        unknown = Some(other.to_string());
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
            answer.outcome = match unknown {
                Some(other) => HookOutcome::Failed(HookFailure::UnknownDecision(other)),
                None => summarize(&answer),
            };
            answer
        }
        Response::Block(stderr) => {
            let reason = or(stderr, "a hook blocked it (exit status 2)");
            PreAnswer {
                outcome: HookOutcome::Decided {
                    decision: Decision::Deny,
                    reason: reason.clone(),
                    rewrote_input: false,
                    added_context: false,
                },
                decision: Some((Decision::Deny, reason)),
                ..PreAnswer::only(HookOutcome::NoDecision)
            }
        }
        Response::TimedOut(after) => PreAnswer::only(HookOutcome::Failed(HookFailure::TimedOut(after))),
        Response::Failed(why) => PreAnswer::only(HookOutcome::Failed(HookFailure::Error(why))),
        Response::Text(_) | Response::Nothing => PreAnswer::only(HookOutcome::NoDecision),
    }
}

fn summarize(answer: &PreAnswer) -> HookOutcome {
    let (rewrote_input, added_context) = (answer.updated_input.is_some(), answer.context.is_some());
    match &answer.decision {
        Some((decision, reason)) => {
            HookOutcome::Decided { decision: *decision, reason: reason.clone(), rewrote_input, added_context }
        }
        None if rewrote_input => HookOutcome::RewroteInput { added_context },
        None if added_context => HookOutcome::AddedContext,
        None => HookOutcome::NoDecision,
    }
}

/// What one PostToolUse / PostToolUseFailure handler said.
#[derive(Debug)]
pub(super) struct PostAnswer {
    pub block: Option<String>,
    pub replace: Option<ToolOutput>,
    pub context: Option<String>,
    pub outcome: HookOutcome,
}

impl PostAnswer {
    /// An answer that changes nothing, ending as `outcome`.
    fn only(outcome: HookOutcome) -> Self {
        Self { block: None, replace: None, context: None, outcome }
    }
}

pub(super) fn post_answer(event: HookEvent, response: Response) -> PostAnswer {
    match response {
        Response::Json(v) => {
            log_system_message(&v);
            let hso = &v["hookSpecificOutput"];
            let mut answer = PostAnswer::only(HookOutcome::NoDecision);
            if v["continue"] == Value::Bool(false) {
                answer.block = Some(v["stopReason"].as_str().unwrap_or("a hook stopped here").to_string());
            } else if v["decision"].as_str() == Some("block") {
                answer.block = Some(v["reason"].as_str().unwrap_or("a hook blocked the result").to_string());
            }
            answer.replace = hso.get("updatedMCPToolOutput").map(output_from_json);
            answer.context = hso["additionalContext"].as_str().filter(|s| !s.is_empty()).map(str::to_string);
            answer.outcome = match (&answer.block, &answer.replace, &answer.context) {
                (Some(reason), _, _) => HookOutcome::BlockedResult { reason: reason.clone() },
                (None, Some(_), _) => HookOutcome::ReplacedOutput,
                (None, None, Some(_)) => HookOutcome::AddedContext,
                _ => HookOutcome::NoDecision,
            };
            answer
        }
        Response::Block(stderr) if event == HookEvent::PostToolUseFailure => {
            PostAnswer { context: Some(stderr), ..PostAnswer::only(HookOutcome::AddedContext) }
        }
        Response::Block(stderr) => {
            let reason = or(stderr, "a hook blocked the result (exit status 2)");
            PostAnswer { block: Some(reason.clone()), ..PostAnswer::only(HookOutcome::BlockedResult { reason }) }
        }
        Response::TimedOut(after) => PostAnswer::only(HookOutcome::Failed(HookFailure::TimedOut(after))),
        Response::Failed(why) => PostAnswer::only(HookOutcome::Failed(HookFailure::Error(why))),
        Response::Text(_) | Response::Nothing => PostAnswer::only(HookOutcome::NoDecision),
    }
}

/// How a SessionStart or SessionEnd handler's run ended.
pub(super) fn session_outcome(response: &Response) -> HookOutcome {
    match response {
        Response::TimedOut(after) => HookOutcome::Failed(HookFailure::TimedOut(*after)),
        Response::Failed(why) => HookOutcome::Failed(HookFailure::Error(why.clone())),
        Response::Block(why) => HookOutcome::Blocked { reason: why.clone() },
        r if session_context(r).is_some() => HookOutcome::AddedContext,
        _ => HookOutcome::Done,
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
