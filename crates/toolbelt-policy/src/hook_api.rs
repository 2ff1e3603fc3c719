//! What hooks are to the runtime: the events, what a hook run says, and the [`Hooks`] trait
//! the runtime calls around calls, sessions and sub-agents.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use toolbelt_core::{BoxFuture, ToolError, ToolOutput};

use crate::{CallInfo, HookOutcome, Verdict};

/// The hook events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub enum HookEvent {
    /// Before a call is authorized and run.
    PreToolUse,
    /// After a call succeeded.
    PostToolUse,
    /// After a call failed (its tool returned an error, it was denied late, timed out or
    /// was cancelled).
    PostToolUseFailure,
    /// When a session starts.
    SessionStart,
    /// When a session ends.
    SessionEnd,
    /// When a sub-agent starts (matchers match its agent type).
    SubagentStart,
    /// When a sub-agent stops, however it stopped (matchers match its agent type).
    SubagentStop,
}

impl HookEvent {
    /// Every event, in the order a session sees them.
    pub const ALL: [HookEvent; 7] = [
        HookEvent::SessionStart,
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::PostToolUseFailure,
        HookEvent::SubagentStart,
        HookEvent::SubagentStop,
        HookEvent::SessionEnd,
    ];

    /// The event's name as settings and hook input spell it (`PreToolUse`).
    pub const fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::PostToolUseFailure => "PostToolUseFailure",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::SessionEnd => "SessionEnd",
            HookEvent::SubagentStart => "SubagentStart",
            HookEvent::SubagentStop => "SubagentStop",
        }
    }

    /// Parses an event name as [`HookEvent::as_str`] spells it.
    pub fn parse(name: &str) -> Option<HookEvent> {
        HookEvent::ALL.into_iter().find(|e| e.as_str() == name)
    }
}

/// One hook handler that ran, and what came of it (for the audit log and `-v` logs).
/// Serializes as `{event, handler, outcome, failed, duration_ms}`, the outcome in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookRun {
    /// The event it ran for.
    pub event: HookEvent,
    /// Which handler: `command ./check.sh`, `http http://127.0.0.1:8080/hook`, `in-process name`.
    pub handler: String,
    /// What it said (`allow`, `deny: <reason>`, `rewrote the input`, `added context`, `no
    /// decision`), or how it failed (`error: exit status 1: …`, `error: timed out after 60 s`).
    pub outcome: HookOutcome,
    /// How long it ran.
    pub duration: Duration,
}

impl HookRun {
    /// Whether the hook itself failed (a non-blocking error: the call went on).
    pub fn failed(&self) -> bool {
        self.outcome.is_failure()
    }
}

impl serde::Serialize for HookRun {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(serde::Serialize)]
        struct Wire<'a> {
            event: HookEvent,
            handler: &'a str,
            outcome: &'a HookOutcome,
            failed: bool,
            duration_ms: u64,
        }
        Wire {
            event: self.event,
            handler: &self.handler,
            outcome: &self.outcome,
            failed: self.failed(),
            duration_ms: u64::try_from(self.duration.as_millis()).unwrap_or(u64::MAX),
        }
        .serialize(s)
    }
}

/// What a pre-call hook says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PreToolOutcome {
    /// A permission decision, if the hook made one. A hook's allow never overrides a deny or
    /// ask from the rules; its deny or ask always counts.
    pub verdict: Option<Verdict>,
    /// A replacement input; the runtime validates it again against the tool's schema.
    pub updated_input: Option<Value>,
    /// Text added to what the model sees with the result.
    pub additional_context: Vec<String>,
    /// Every handler that ran, in configuration order.
    pub runs: Vec<HookRun>,
}

/// What the post-call hooks said, and which ran.
#[derive(Debug, Clone, PartialEq)]
pub struct PostToolReport {
    /// The combined outcome.
    pub outcome: PostToolOutcome,
    /// Every handler that ran, in configuration order.
    pub runs: Vec<HookRun>,
}

impl Default for PostToolReport {
    fn default() -> Self {
        Self { outcome: PostToolOutcome::Continue { additional_context: Vec::new() }, runs: Vec::new() }
    }
}

/// A session starting or ending, as hooks see it.
#[derive(Debug, Clone, Copy)]
pub struct SessionInfo<'a> {
    /// The session id.
    pub session_id: &'a str,
    /// The session's cwd.
    pub cwd: &'a Path,
    /// Why: `startup` / `resume` for a start, `exit` / `other` for an end (matchers of
    /// SessionStart and SessionEnd hooks match on it).
    pub reason: &'a str,
}

/// A sub-agent starting or stopping, as hooks see it.
#[derive(Debug, Clone, Copy)]
pub struct SubagentInfo<'a> {
    /// The id of the session that started it.
    pub session_id: &'a str,
    /// The agent's id (`agent_1`).
    pub agent_id: &'a str,
    /// Its definition's name (matchers match it).
    pub agent_type: &'a str,
    /// Its working directory.
    pub cwd: &'a Path,
    /// How it stopped (`completed`, `max_turns`, …); `None` when it starts.
    pub status: Option<&'a str>,
    /// The last text it wrote, when it stops.
    pub last_message: Option<&'a str>,
}

/// What a post-call hook says.
#[derive(Debug, Clone, PartialEq)]
pub enum PostToolOutcome {
    /// Keep the result, optionally adding context for the model.
    Continue {
        /// Text added to what the model sees.
        additional_context: Vec<String>,
    },
    /// Turn the result into an error with this reason.
    Block {
        /// Why (shown to the model).
        reason: String,
    },
    /// Replace the result.
    Replace {
        /// The new result.
        output: ToolOutput,
    },
}

/// A finished call as post-hooks see it.
#[derive(Debug, Clone, Copy)]
pub struct Finished<'a> {
    /// The call.
    pub call: CallInfo<'a>,
    /// Its result: the output, or the error it ended with.
    pub result: Result<&'a ToolOutput, &'a ToolError>,
}

/// Hooks around every call (PreToolUse, PostToolUse, PostToolUseFailure), around sessions
/// (SessionStart, SessionEnd) and around sub-agents (SubagentStart, SubagentStop).
pub trait Hooks: Send + Sync {
    /// Whether any hook is configured; lets the runtime skip building hook input.
    fn is_empty(&self) -> bool;

    /// Runs the matching pre-call hooks.
    fn pre_tool_use<'a>(&'a self, call: &'a CallInfo<'a>) -> BoxFuture<'a, PreToolOutcome>;

    /// Runs the matching post-call hooks.
    fn post_tool_use<'a>(&'a self, done: &'a Finished<'a>) -> BoxFuture<'a, PostToolReport>;

    /// Runs the SessionStart hooks; returns context they added and the handlers that ran.
    fn session_start<'a>(&'a self, session: &'a SessionInfo<'a>) -> BoxFuture<'a, (Vec<String>, Vec<HookRun>)> {
        let _ = session;
        Box::pin(std::future::ready((Vec::new(), Vec::new())))
    }

    /// Runs the SessionEnd hooks; returns the handlers that ran.
    fn session_end<'a>(&'a self, session: &'a SessionInfo<'a>) -> BoxFuture<'a, Vec<HookRun>> {
        let _ = session;
        Box::pin(std::future::ready(Vec::new()))
    }

    /// Runs the SubagentStart hooks; returns context they added for the sub-agent and the
    /// handlers that ran.
    fn subagent_start<'a>(&'a self, agent: &'a SubagentInfo<'a>) -> BoxFuture<'a, (Vec<String>, Vec<HookRun>)> {
        let _ = agent;
        Box::pin(std::future::ready((Vec::new(), Vec::new())))
    }

    /// Runs the SubagentStop hooks; returns the handlers that ran.
    fn subagent_stop<'a>(&'a self, agent: &'a SubagentInfo<'a>) -> BoxFuture<'a, Vec<HookRun>> {
        let _ = agent;
        Box::pin(std::future::ready(Vec::new()))
    }
}

/// No hooks: the default until hooks are configured.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHooks;

impl Hooks for NoHooks {
    fn is_empty(&self) -> bool {
        true
    }

    fn pre_tool_use<'a>(&'a self, _call: &'a CallInfo<'a>) -> BoxFuture<'a, PreToolOutcome> {
        Box::pin(std::future::ready(PreToolOutcome::default()))
    }

    fn post_tool_use<'a>(&'a self, _done: &'a Finished<'a>) -> BoxFuture<'a, PostToolReport> {
        Box::pin(std::future::ready(PostToolReport::default()))
    }
}
