//! Hooks around every call, speaking Claude Code's hook protocol exactly, so hook scripts
//! written for Claude Code (and Codex and Goose, which adopted the same JSON) run unchanged.
//!
//! # The protocol
//!
//! Settings map an event (`PreToolUse`, `PostToolUse`, `PostToolUseFailure`, `SessionStart`,
//! `SessionEnd`, `SubagentStart`, `SubagentStop`) to groups of `{matcher, hooks}`. A matcher of `*` or nothing matches every
//! tool; one made only of letters, digits, `_` and `|` lists exact names (a tool's aliases
//! count); anything else is a regular expression that must match the whole name.
//!
//! A handler is given JSON — `session_id`, `cwd`, `permission_mode`, `hook_event_name`,
//! `tool_name`, `tool_input`, `tool_use_id`, plus `tool_response` after a call, `error` and
//! `is_interrupt` after a failure — on stdin (`command`), as a POST body (`http`) or as an
//! argument (in-process, [`InProcessHook`]). A command's exit status decides: 0 means its
//! stdout, if JSON, is read (`hookSpecificOutput.permissionDecision` allow / deny / ask with
//! `permissionDecisionReason`, `updatedInput`, `additionalContext`; after a call `decision:
//! "block"` with `reason`, and `hookSpecificOutput.updatedMCPToolOutput` to replace the
//! output); 2 blocks, with stderr as the reason the model reads; anything else, a timeout
//! (60 s by default) or invalid JSON is a non-blocking error: logged, recorded in the audit
//! log, and the call goes on. An HTTP answer in 2xx counts as exit 0 with its body.
//!
//! # Combining
//!
//! The matching handlers of an event run in parallel. Their verdicts combine by strictness
//! (deny > ask > allow); a hook's allow never overrides a deny or ask *rule* — the runtime
//! applies it only over a mode's default. The first `updatedInput` in settings order wins
//! (the runtime validates it against the tool's schema again); every `additionalContext` is
//! kept, in order. After a call, a block beats a replacement beats context.

mod config;
mod outcome;
mod protocol;
mod runner;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use futures_util::future::join_all;
use serde_json::Value;
use toolbelt_core::BoxFuture;

pub use config::{DEFAULT_TIMEOUT, HookError, Matcher};
pub use outcome::{HookFailure, HookOutcome};
pub use runner::{InProcessHook, InProcessHookError};

use crate::confine::Confiner;
use crate::{
    CallInfo, Finished, HookEvent, HookRun, Hooks, PostToolOutcome, PostToolReport, PreToolOutcome, SessionInfo,
    SubagentInfo, Verdict, VerdictSource,
};
use config::RawHandler;
use runner::{Handler, Response};

/// A group: which calls, and who to run for them.
#[derive(Debug, Clone)]
struct Group {
    event: HookEvent,
    matcher: Matcher,
    handlers: Vec<Handler>,
}

/// Every configured hook, ready to run. Implements [`Hooks`] for the runtime.
#[derive(Debug, Clone, Default)]
pub struct HookSet {
    groups: Vec<Group>,
    mode: String,
    project_dir: Option<PathBuf>,
}

impl HookSet {
    /// No hooks.
    pub fn new() -> Self {
        Self { groups: Vec::new(), mode: "default".into(), project_dir: None }
    }

    /// Hooks from settings in Claude Code's JSON shape (`{"PreToolUse": [{matcher, hooks}]}`).
    pub fn from_json(settings: &Value) -> Result<Self, HookError> {
        Self::new().add_json(settings, None)
    }

    /// Adds the hooks of `settings` (Claude Code's JSON shape) after these, their commands
    /// started by `confiner` ([`crate::confine`]): a project's hooks.
    pub fn with_confined_json(self, settings: &Value, confiner: Arc<dyn Confiner>) -> Result<Self, HookError> {
        self.add_json(settings, Some(confiner))
    }

    fn add_json(mut self, settings: &Value, confine: Option<Arc<dyn Confiner>>) -> Result<Self, HookError> {
        for (event, matcher, handlers) in config::parse(settings)? {
            let handlers = handlers
                .into_iter()
                .map(|c| match c.handler {
                    RawHandler::Command { command, .. } => {
                        Handler::Command { command, timeout: c.timeout, confine: confine.clone() }
                    }
                    RawHandler::Http { url, headers, .. } => Handler::Http { url, headers, timeout: c.timeout },
                })
                .collect();
            self.groups.push(Group { event, matcher, handlers });
        }
        Ok(self)
    }

    /// The permission mode hooks are told (`permission_mode`).
    pub fn with_permission_mode(mut self, mode: &str) -> Self {
        self.mode = mode.to_string();
        self
    }

    /// The project directory, exported to command hooks as `TOOLBELT_PROJECT_DIR` and
    /// `CLAUDE_PROJECT_DIR`.
    pub fn with_project_dir(mut self, dir: &Path) -> Self {
        self.project_dir = Some(dir.to_path_buf());
        self
    }

    /// Adds an in-process hook for `event`, for the tools `matcher` matches (Claude Code's
    /// matcher syntax). It runs after the configured hooks of its event.
    pub fn with_in_process(
        mut self,
        event: HookEvent,
        matcher: &str,
        hook: Arc<dyn InProcessHook>,
    ) -> Result<Self, HookError> {
        let matcher = Matcher::parse(matcher)?;
        self.groups.push(Group { event, matcher, handlers: vec![Handler::InProcess(hook)] });
        Ok(self)
    }

    /// The handlers for `event` whose matcher matches one of `names`, in settings order.
    fn matching<'a>(&'a self, event: HookEvent, names: &[&str]) -> Vec<&'a Handler> {
        self.groups
            .iter()
            .filter(|g| g.event == event && g.matcher.matches(names.iter().copied()))
            .flat_map(|g| g.handlers.iter())
            .collect()
    }

    /// Runs handlers in parallel; answers in settings order with their durations.
    async fn run_all(&self, handlers: &[&Handler], input: &Value, cwd: &Path) -> Vec<(Response, std::time::Duration)> {
        let project = self.project_dir.as_deref();
        join_all(handlers.iter().map(|h| async move {
            let started = Instant::now();
            let response = h.run(input, cwd, project).await;
            (response, started.elapsed())
        }))
        .await
    }

    /// The names a matcher is tried against: the tool's own, and `Bash`'s for a tool whose
    /// command lines are bash (a hook vetting Bash's commands vets `Monitor`'s too).
    fn tool_names<'a>(call: &'a CallInfo<'a>) -> Vec<&'a str> {
        let bash = if call.tool.bash_rules { &crate::rules::BASH_NAMES[..] } else { &[] };
        std::iter::once(call.tool.name.as_str())
            .chain(call.tool.aliases.iter().map(String::as_str))
            .chain(bash.iter().copied())
            .collect()
    }
}

impl Hooks for HookSet {
    fn is_empty(&self) -> bool {
        self.groups.iter().all(|g| g.handlers.is_empty())
    }

    fn pre_tool_use<'a>(&'a self, call: &'a CallInfo<'a>) -> BoxFuture<'a, PreToolOutcome> {
        Box::pin(async move {
            let handlers = self.matching(HookEvent::PreToolUse, &Self::tool_names(call));
            if handlers.is_empty() {
                return PreToolOutcome::default();
            }
            let input = protocol::pre_input(call, &self.mode);
            let answers = self.run_all(&handlers, &input, call.cwd).await;
            let mut outcome = PreToolOutcome::default();
            for (handler, (response, duration)) in handlers.iter().zip(answers) {
                let answer = protocol::pre_answer(response);
                if let Some((decision, reason)) = answer.decision {
                    let source = VerdictSource::Hook { event: HookEvent::PreToolUse, handler: handler.describe() };
                    let verdict = Verdict::new(decision, reason, source);
                    outcome.verdict = Some(match outcome.verdict.take() {
                        Some(so_far) => so_far.max(verdict),
                        None => verdict,
                    });
                }
                if let Some(updated) = answer.updated_input {
                    if outcome.updated_input.is_none() {
                        outcome.updated_input = Some(updated);
                    } else {
                        tracing::warn!(hook = %handler.describe(), "several PreToolUse hooks rewrote the input; the first one's rewrite is used");
                    }
                }
                outcome.additional_context.extend(answer.context);
                outcome.runs.push(HookRun {
                    event: HookEvent::PreToolUse,
                    handler: handler.describe(),
                    outcome: answer.outcome,
                    duration,
                });
            }
            outcome
        })
    }

    fn post_tool_use<'a>(&'a self, done: &'a Finished<'a>) -> BoxFuture<'a, PostToolReport> {
        Box::pin(async move {
            let event = match done.result {
                Ok(out) if !out.is_error => HookEvent::PostToolUse,
                _ => HookEvent::PostToolUseFailure,
            };
            let handlers = self.matching(event, &Self::tool_names(&done.call));
            if handlers.is_empty() {
                return PostToolReport::default();
            }
            let input = protocol::post_input(event, done, &self.mode);
            let answers = self.run_all(&handlers, &input, done.call.cwd).await;
            let (mut block, mut replace, mut context, mut runs) = (None, None, Vec::new(), Vec::new());
            for (handler, (response, duration)) in handlers.iter().zip(answers) {
                let answer = protocol::post_answer(event, response);
                block = block.or(answer.block);
                replace = replace.or(answer.replace);
                context.extend(answer.context);
                runs.push(HookRun { event, handler: handler.describe(), outcome: answer.outcome, duration });
            }
            let outcome = match (block, replace) {
                (Some(reason), _) => PostToolOutcome::Block { reason },
                (None, Some(output)) => PostToolOutcome::Replace { output },
                (None, None) => PostToolOutcome::Continue { additional_context: context },
            };
            PostToolReport { outcome, runs }
        })
    }

    fn session_start<'a>(&'a self, session: &'a SessionInfo<'a>) -> BoxFuture<'a, (Vec<String>, Vec<HookRun>)> {
        Box::pin(async move {
            let runs = self.session_event(HookEvent::SessionStart, session).await;
            let context = runs.iter().filter_map(|(_, r)| protocol::session_context(r)).collect();
            (context, runs.into_iter().map(|(run, _)| run).collect())
        })
    }

    fn session_end<'a>(&'a self, session: &'a SessionInfo<'a>) -> BoxFuture<'a, Vec<HookRun>> {
        Box::pin(async move {
            self.session_event(HookEvent::SessionEnd, session).await.into_iter().map(|(run, _)| run).collect()
        })
    }

    fn subagent_start<'a>(&'a self, agent: &'a SubagentInfo<'a>) -> BoxFuture<'a, (Vec<String>, Vec<HookRun>)> {
        Box::pin(async move {
            let runs = self.subagent_event(HookEvent::SubagentStart, agent).await;
            let context = runs.iter().filter_map(|(_, r)| protocol::session_context(r)).collect();
            (context, runs.into_iter().map(|(run, _)| run).collect())
        })
    }

    fn subagent_stop<'a>(&'a self, agent: &'a SubagentInfo<'a>) -> BoxFuture<'a, Vec<HookRun>> {
        Box::pin(async move {
            self.subagent_event(HookEvent::SubagentStop, agent).await.into_iter().map(|(run, _)| run).collect()
        })
    }
}

impl HookSet {
    /// Runs the handlers of a SubagentStart or SubagentStop event matching the agent type.
    async fn subagent_event(&self, event: HookEvent, agent: &SubagentInfo<'_>) -> Vec<(HookRun, Response)> {
        let input = || protocol::subagent_input(event, agent, &self.mode);
        self.lifecycle_event(event, agent.agent_type, input, agent.cwd).await
    }

    async fn session_event(&self, event: HookEvent, session: &SessionInfo<'_>) -> Vec<(HookRun, Response)> {
        let input = || protocol::session_input(event, session, &self.mode);
        self.lifecycle_event(event, session.reason, input, session.cwd).await
    }

    /// Runs the handlers of an event that is not about a call (a session's, a sub-agent's)
    /// whose matchers match `key`, each given `input()`.
    async fn lifecycle_event(
        &self,
        event: HookEvent,
        key: &str,
        input: impl FnOnce() -> Value,
        cwd: &Path,
    ) -> Vec<(HookRun, Response)> {
        let handlers = self.matching(event, &[key]);
        if handlers.is_empty() {
            return Vec::new();
        }
        let answers = self.run_all(&handlers, &input(), cwd).await;
        handlers
            .iter()
            .zip(answers)
            .map(|(handler, (response, duration))| {
                let outcome = protocol::session_outcome(&response);
                (HookRun { event, handler: handler.describe(), outcome, duration }, response)
            })
            .collect()
    }
}
