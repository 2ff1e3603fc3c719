//! Deciding whether a call may run, and the hooks that may change it.
//!
//! The policy decides; it never executes a tool. It sees a call only as its manifest, its
//! JSON input and its declared [`Access`], never as a concrete tool, so a rule written for
//! `Bash` or for `mcp__github__*` works the same whatever implements it.
//!
//! # Shapes
//!
//! * [`Decision`] is ordered `Allow < Ask < Deny`, so combining rules and hooks is `max()`:
//!   a deny anywhere wins, an ask beats an allow.
//! * A [`Verdict`] always says what made it ([`Verdict::source`]), so a denial can name the
//!   rule or flag that would allow the call.
//! * [`Authorizer`] turns a call into a verdict; an `Ask` verdict goes to an [`Approver`]
//!   (a terminal prompt, an MCP elicitation, or [`NoApprover`] which refuses).
//! * [`Hooks`] run before and after a call. Outcomes are enums, so "block with no reason"
//!   or "allow and deny at once" cannot be expressed.
//!
//! The defaults here ([`AllowAll`], [`NoHooks`]) are what a library user gets before
//! configuring anything.

/// Read-only command classification (from `toolbelt-command`, shared with the shell tool).
pub use toolbelt_command::readonly;

use std::path::Path;

use serde_json::Value;
use toolbelt_core::{Access, BoxFuture, ToolError, ToolOutput, ToolSpec};

/// What the policy says of a call. Ordered: `Allow < Ask < Deny`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Run it.
    Allow,
    /// Ask a person first.
    Ask,
    /// Refuse it.
    Deny,
}

/// A decision with its reason and what made it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Verdict {
    /// The decision.
    pub decision: Decision,
    /// Why, in words the model and the user can act on.
    pub reason: String,
    /// What made it: a rule and its file, a mode, a hook, a grant, a default.
    pub source: String,
}

impl Verdict {
    /// A verdict of `decision` for `reason`, made by `source`.
    pub fn new(decision: Decision, reason: impl Into<String>, source: impl Into<String>) -> Self {
        Self { decision, reason: reason.into(), source: source.into() }
    }

    /// The stricter of two verdicts (the first on a tie).
    pub fn max(self, other: Verdict) -> Verdict {
        if other.decision > self.decision { other } else { self }
    }
}

/// One call as the policy sees it.
#[derive(Debug, Clone, Copy)]
pub struct CallInfo<'a> {
    /// The session id.
    pub session_id: &'a str,
    /// The call id.
    pub call_id: &'a str,
    /// The session's cwd.
    pub cwd: &'a Path,
    /// The tool's manifest.
    pub tool: &'a ToolSpec,
    /// The validated, normalized input.
    pub input: &'a Value,
    /// What the call declared it touches.
    pub access: &'a Access,
}

/// Turns a call into a verdict. Must be quick and must not block: it runs on every call.
pub trait Authorizer: Send + Sync {
    /// Decides on one call.
    fn authorize(&self, call: &CallInfo<'_>) -> Verdict;
}

/// Allows everything: the default until permission rules are configured.
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowAll;

impl Authorizer for AllowAll {
    fn authorize(&self, _call: &CallInfo<'_>) -> Verdict {
        Verdict::new(Decision::Allow, "no permission rules are configured", "default policy (allow all)")
    }
}

/// A person's answer to an `Ask`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// Run this call only.
    AllowOnce,
    /// Run this and matching calls for the rest of the session.
    AllowSession,
    /// Refuse, with the person's reason.
    Deny {
        /// Why (shown to the model).
        reason: String,
    },
}

/// Asks a person about a call whose verdict was `Ask`.
pub trait Approver: Send + Sync {
    /// Asks; the future resolves with the answer.
    fn approve<'a>(&'a self, call: &'a CallInfo<'a>, verdict: &'a Verdict) -> BoxFuture<'a, Approval>;
}

/// Nobody to ask (no terminal, CI): every `Ask` becomes a denial that says why.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoApprover;

impl Approver for NoApprover {
    fn approve<'a>(&'a self, call: &'a CallInfo<'a>, verdict: &'a Verdict) -> BoxFuture<'a, Approval> {
        let reason = format!(
            "`{}` needs approval ({}; decided by {}) and nobody is available to approve it; \
             add an allow rule for it or run where a person can answer",
            call.tool.name, verdict.reason, verdict.source
        );
        Box::pin(std::future::ready(Approval::Deny { reason }))
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

/// Hooks around every call (PreToolUse, PostToolUse, PostToolUseFailure).
pub trait Hooks: Send + Sync {
    /// Whether any hook is configured; lets the runtime skip building hook input.
    fn is_empty(&self) -> bool;

    /// Runs the matching pre-call hooks.
    fn pre_tool_use<'a>(&'a self, call: &'a CallInfo<'a>) -> BoxFuture<'a, PreToolOutcome>;

    /// Runs the matching post-call hooks.
    fn post_tool_use<'a>(&'a self, done: &'a Finished<'a>) -> BoxFuture<'a, PostToolOutcome>;
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

    fn post_tool_use<'a>(&'a self, _done: &'a Finished<'a>) -> BoxFuture<'a, PostToolOutcome> {
        Box::pin(std::future::ready(PostToolOutcome::Continue { additional_context: Vec::new() }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_combine_by_strictness() {
        assert!(Decision::Allow < Decision::Ask && Decision::Ask < Decision::Deny);
        let allow = Verdict::new(Decision::Allow, "a", "rule 1");
        let ask = Verdict::new(Decision::Ask, "b", "hook");
        let deny = Verdict::new(Decision::Deny, "c", "rule 2");
        assert_eq!(allow.clone().max(ask.clone()).source, "hook");
        assert_eq!(deny.clone().max(ask).source, "rule 2");
        assert_eq!(allow.clone().max(Verdict::new(Decision::Allow, "d", "later")).source, "rule 1");
    }
}
