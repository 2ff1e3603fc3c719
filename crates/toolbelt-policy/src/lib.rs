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
//! Before anything is configured a runtime judges with a [`PermissionEngine`] in the
//! `default` mode and no rules, with [`NoApprover`] (asks are refused) and [`NoHooks`];
//! [`AllowAll`] is there for those who choose it.

/// Read-only command classification (from `toolbelt-command`, shared with the shell tool).
pub use toolbelt_command::readonly;

pub mod confine;
mod engine;
mod hook_api;
pub mod hooks;
mod mode;
mod offers;
pub mod paths;
pub mod protected;
pub mod rules;
mod source;

pub use engine::{Grants, PermissionEngine, PermissionRules, RuleStore, RuleStoreError};
pub use hook_api::{
    Finished, HookEvent, HookRun, Hooks, NoHooks, PostToolOutcome, PostToolReport, PreToolOutcome, SessionInfo,
    SubagentInfo,
};
pub use hooks::{HookFailure, HookOutcome};
pub use mode::{PermissionMode, SessionMode};
pub use offers::{Offer, denial, offers};
pub use source::{RuleRef, VerdictSource};

use std::path::Path;

use serde_json::Value;
use toolbelt_core::{Access, BoxFuture, SessionState, ToolSpec};

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
    pub source: VerdictSource,
    /// For an `Ask`: the allow rules that would let calls like this one run without asking
    /// (`Bash(cargo test *)`, `Edit(./src/main.rs)`). Approvers offer them for "session" and
    /// "always", and denials with nobody to ask name them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allow_rules: Vec<String>,
    /// Paths outside the workspace roots that this verdict explicitly allows the call to
    /// touch (by a rule, a grant or the mode). The runtime opens them as roots for this call
    /// only; other paths outside the roots stay out of reach whatever the decision.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allowed_outside: Vec<std::path::PathBuf>,
    /// Whether a PreToolUse hook's allow may turn this verdict into an allow: true for what a
    /// permission mode decides by default, false for explicit rules (a hook's allow never
    /// overrides a deny or ask rule) and for plan mode's denials.
    #[serde(skip)]
    pub hook_may_allow: bool,
    /// For an `Ask`: whether switching the session to `acceptEdits` would stop such calls
    /// asking (the mode is `default` and what asks is an edit inside the workspace), so
    /// approvers offer "allow all edits for the rest of this session".
    #[serde(skip)]
    pub offers_accept_edits: bool,
}

impl Verdict {
    /// A verdict of `decision` for `reason`, made by `source`.
    pub fn new(decision: Decision, reason: impl Into<String>, source: impl Into<VerdictSource>) -> Self {
        Self {
            decision,
            reason: reason.into(),
            source: source.into(),
            allow_rules: Vec::new(),
            allowed_outside: Vec::new(),
            hook_may_allow: false,
            offers_accept_edits: false,
        }
    }

    /// The stricter of two verdicts (the first on a tie).
    pub fn max(self, other: Verdict) -> Verdict {
        if other.decision > self.decision { other } else { self }
    }

    /// The verdict with the call's own words on why it needs its access
    /// ([`toolbelt_core::Access::context`]) before the reason, when it asks a person.
    pub fn in_context(mut self, access: &toolbelt_core::Access) -> Verdict {
        if self.decision == Decision::Ask
            && let Some(why) = &access.context
        {
            self.reason = format!("{why}; {}", self.reason);
        }
        self
    }
}

/// One call as the policy sees it.
#[derive(Debug, Clone, Copy)]
pub struct CallInfo<'a> {
    /// The session: its id, workspace roots and state slots (where session grants live).
    pub session: &'a SessionState,
    /// The call id.
    pub call_id: &'a str,
    /// The session's cwd when the call arrived.
    pub cwd: &'a Path,
    /// The tool's manifest.
    pub tool: &'a ToolSpec,
    /// The validated, normalized input.
    pub input: &'a Value,
    /// What the call declared it touches.
    pub access: &'a Access,
}

impl CallInfo<'_> {
    /// Whether this is a follow-up: something a running call does besides its input (a
    /// command's new protected place, a redirect to follow), judged by what it touches with
    /// a null input. The call may have acted already.
    pub fn is_follow_up(&self) -> bool {
        self.input.is_null()
    }

    /// What the call wants to do, for a person deciding on it: "run `make`, write
    /// /w/a.txt", or, for a tool that declares nothing finer, its input (cut to 300 bytes).
    pub fn wants(&self) -> String {
        use toolbelt_core::Touch;
        // A command's reads inside the workspace are what any command does; the ones outside
        // are worth a person's attention.
        let runs = self.access.touches.iter().any(|t| matches!(t, Touch::Execute(_)));
        let roots = self.session.read_roots();
        let actions: Vec<String> = self
            .access
            .touches
            .iter()
            .filter_map(|t| match t {
                Touch::Execute(c) => Some(format!("run `{c}`")),
                Touch::Read(p) if runs && paths::inside_roots(p, &roots) => None,
                Touch::Read(p) => Some(format!("read {}", p.display())),
                Touch::Write(p) => Some(format!("write {}", p.display())),
                Touch::Network(u) => Some(format!("contact {u}")),
                Touch::State(_) => None,
            })
            .collect();
        if !actions.is_empty() {
            return actions.join(", ");
        }
        let mut input = self.input.to_string();
        if input.len() > 300 {
            let cut = (0..=300).rev().find(|&i| input.is_char_boundary(i)).unwrap_or(0);
            input.truncate(cut);
            input.push('…');
        }
        format!("be called with {input}")
    }
}

/// Turns a call into a verdict. Must be quick and must not block: it runs on every call.
pub trait Authorizer: Send + Sync {
    /// Decides on one call.
    fn authorize(&self, call: &CallInfo<'_>) -> Verdict;

    /// The paths deny rules keep from reading, which tools that walk many files leave out of
    /// their results; `None` when nothing is hidden.
    fn hidden_paths(&self) -> Option<std::sync::Arc<dyn toolbelt_core::HiddenPaths>> {
        None
    }

    /// Told when a person approved an `Ask` verdict for the session or for always, so calls
    /// like this one are allowed from now on (the verdict's [`Verdict::allow_rules`]).
    fn remember(&self, call: &CallInfo<'_>, verdict: &Verdict, approval: &Approval) {
        let _ = (call, verdict, approval);
    }

    /// The denial of every call to a tool this policy hides from the tool list (a bare deny
    /// rule names it), naming what hides it; `None` when the policy does not hide it. A call
    /// to a hidden tool is a denial like any other, not an unknown tool.
    fn hidden(&self, tool: &toolbelt_core::ToolSpec) -> Option<Verdict> {
        let _ = tool;
        None
    }

    /// The permission mode in force for `session`, for a policy that has modes: a
    /// sub-agent's session may be made stricter than it, never looser.
    fn mode(&self, session: &SessionState) -> Option<PermissionMode> {
        let _ = session;
        None
    }

    /// Puts `session` in `mode` for the rest of it (plan mode entered, or left once a person
    /// approved the plan); why not, for a policy without modes.
    fn switch_mode(&self, session: &SessionState, mode: PermissionMode) -> Result<(), String> {
        let _ = (session, mode);
        Err("this policy has no permission modes".into())
    }

    /// Allows calls matching `rule` for the rest of `session`, as a person's "allow for this
    /// session" does; why not (a rule that does not parse, a policy without rules).
    fn grant(&self, session: &SessionState, rule: &str) -> Result<(), String> {
        let _ = (session, rule);
        Err("this policy keeps no rules".into())
    }
}

/// Allows everything: for tests and embedders that decide elsewhere (never a default).
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowAll;

impl Authorizer for AllowAll {
    fn authorize(&self, _call: &CallInfo<'_>) -> Verdict {
        Verdict::new(Decision::Allow, "no permission rules are configured", VerdictSource::AllowAll)
    }
}

/// A person's answer to an `Ask`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// Run this call only.
    AllowOnce,
    /// Run this and matching calls for the rest of the session.
    AllowSession,
    /// Run this and matching calls from now on: the allow rule is written to the settings.
    AllowAlways,
    /// Run this call, and let every file edit inside the workspace run without asking for the
    /// rest of the session (the session switches from `default` to `acceptEdits` mode).
    AcceptEditsForSession,
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
        Box::pin(std::future::ready(Approval::Deny { reason: unattended_denial(call, verdict) }))
    }
}

/// Where a person puts an allow rule for good: a project's own files count only once the
/// project is trusted, so the user's settings come first.
const SETTINGS_HINT: &str =
    "your settings (~/.config/toolbelt/config.toml; a project's .toolbelt/config.toml applies once it is trusted)";

/// The message for an `Ask` nobody can answer: what needed approval, what decided so, and the
/// rule that would allow it.
pub fn unattended_denial(call: &CallInfo<'_>, verdict: &Verdict) -> String {
    // An ask rule, a deny rule that cannot be checked, or the tool itself (for every call, or
    // for this one: an outside worktree, history while a read is denied): no allow rule
    // lifts the question.
    let no_rule_lifts = matches!(
        verdict.source,
        VerdictSource::Rule(RuleRef::Rule { .. }) | VerdictSource::ToolSpec | VerdictSource::ToolForThisCall
    );
    let mut fix = if verdict.allow_rules.is_empty() && no_rule_lifts {
        "no allow rule lifts this question: a person has to approve the call, so run it where someone can answer \
         (a terminal, or an MCP client that asks), or ask the user to run it"
            .to_string()
    } else if verdict.allow_rules.is_empty() {
        format!("to allow it, add an allow rule for it to permissions.allow in {SETTINGS_HINT}")
    } else {
        let rules: Vec<String> = verdict.allow_rules.iter().map(|r| format!("`{r}`")).collect();
        let flags: Vec<String> = verdict.allow_rules.iter().map(|r| allow_flag(r)).collect();
        format!(
            "to allow it, add {} {} to permissions.allow in {SETTINGS_HINT}, or pass {}",
            if rules.len() == 1 { "the rule" } else { "the rules" },
            rules.join(" and "),
            flags.join(" ")
        )
    };
    // Paths outside the workspace: adding their directory as a root works too.
    let mut dirs: Vec<String> = Vec::new();
    for path in paths::outside_session(call.access, call.session) {
        let dir =
            if path.is_dir() { path.clone() } else { path.parent().map(Path::to_path_buf).unwrap_or(path.clone()) };
        let dir = paths::normalize(&dir).display().to_string();
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    if !dirs.is_empty() {
        let flags: Vec<String> = dirs.iter().map(|d| format!("--add-dir '{d}'")).collect();
        fix.push_str(&format!(", or make the directory a workspace root with {}", flags.join(" ")));
    }
    format!(
        "`{}` needs approval ({}; decided by {}) and nobody is available to approve it; {fix}",
        call.tool.name, verdict.reason, verdict.source
    )
}

/// The command-line flag that adds `rule` as an allow rule, quoted for a POSIX shell
/// (`--allow 'Bash(rm -rf build)'`; a `'` inside becomes `'\''`).
pub fn allow_flag(rule: &str) -> String {
    format!("--allow '{}'", rule.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_combine_by_strictness() {
        assert!(Decision::Allow < Decision::Ask && Decision::Ask < Decision::Deny);
        let source = |words: &str| VerdictSource::Other(words.into());
        let allow = Verdict::new(Decision::Allow, "a", source("rule 1"));
        let ask = Verdict::new(Decision::Ask, "b", source("hook"));
        let deny = Verdict::new(Decision::Deny, "c", source("rule 2"));
        assert_eq!(allow.clone().max(ask.clone()).source, "hook");
        assert_eq!(deny.clone().max(ask).source, "rule 2");
        assert_eq!(allow.clone().max(Verdict::new(Decision::Allow, "d", source("later"))).source, "rule 1");
    }

    #[test]
    fn allow_flags_survive_the_shell() {
        assert_eq!(allow_flag("Bash(rm -rf build)"), "--allow 'Bash(rm -rf build)'");
        assert_eq!(allow_flag("Bash(rm 'my file')"), "--allow 'Bash(rm '\\''my file'\\'')'");
    }
}
