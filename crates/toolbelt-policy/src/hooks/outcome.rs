//! How one handler's run ended ([`HookOutcome`]), told in the few words the audit log and
//! `-v` logs have always used.

use std::fmt;
use std::time::Duration;

use crate::Decision;

/// How one hook handler's run ended. Displays (and serializes, as a string) in a few words:
/// `allow`, `deny: <reason>`, `rewrote the input; added context`, `no decision`, `error: …`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookOutcome {
    /// A PreToolUse hook made a permission decision (`deny: <reason>`; an exit status 2 is a
    /// deny too), and perhaps rewrote the input or added context as well (`allow: <reason>;
    /// rewrote the input`).
    Decided {
        /// Its decision.
        decision: Decision,
        /// Its reason.
        reason: String,
        /// Whether it also rewrote the input.
        rewrote_input: bool,
        /// Whether it also added context for the model.
        added_context: bool,
    },
    /// A PreToolUse hook rewrote the input without deciding: `rewrote the input` (`; added
    /// context`).
    RewroteInput {
        /// Whether it also added context for the model.
        added_context: bool,
    },
    /// It added context for the model and nothing else: `added context`.
    AddedContext,
    /// A post-call hook turned the result into an error: `block: <reason>`.
    BlockedResult {
        /// Why (shown to the model).
        reason: String,
    },
    /// A post-call hook replaced the output: `replaced the output`.
    ReplacedOutput,
    /// A SessionStart or SessionEnd hook exited with status 2, which blocks nothing there:
    /// `blocked: <reason>`.
    Blocked {
        /// What it printed on stderr.
        reason: String,
    },
    /// It answered without deciding anything: `no decision`.
    NoDecision,
    /// A SessionStart or SessionEnd hook ran and added nothing: `done`.
    Done,
    /// The hook itself failed, a non-blocking error (the call went on): `error: <why>`.
    Failed(HookFailure),
}

impl HookOutcome {
    /// Whether the hook itself failed (a non-blocking error: the call went on).
    pub fn is_failure(&self) -> bool {
        matches!(self, HookOutcome::Failed(_))
    }
}

/// How a hook failed. Never blocks a call: the failure is logged and audited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookFailure {
    /// It ran past its timeout and was stopped: `timed out after 60 s`.
    TimedOut(Duration),
    /// A PreToolUse hook answered a `permissionDecision` toolbelt does not know: ``unknown
    /// permissionDecision `maybe` ``.
    UnknownDecision(String),
    /// Anything else, described: it could not start, exited with another status, printed
    /// invalid JSON, answered with an HTTP error (`exit status 127: jq: not found`).
    Error(String),
}

impl fmt::Display for HookFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HookFailure::TimedOut(after) => write!(f, "timed out after {}", toolbelt_core::human_duration(*after)),
            HookFailure::UnknownDecision(answer) => write!(f, "unknown permissionDecision `{answer}`"),
            HookFailure::Error(why) => f.write_str(why),
        }
    }
}

impl fmt::Display for HookOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HookOutcome::Decided { decision, reason, rewrote_input, added_context } => {
                let name = match decision {
                    Decision::Allow => "allow",
                    Decision::Ask => "ask",
                    Decision::Deny => "deny",
                };
                if reason.is_empty() {
                    f.write_str(name)?
                } else {
                    write!(f, "{name}: {reason}")?
                }
                if *rewrote_input {
                    f.write_str("; rewrote the input")?;
                }
                if *added_context {
                    f.write_str("; added context")?;
                }
                Ok(())
            }
            HookOutcome::RewroteInput { added_context } => {
                f.write_str("rewrote the input")?;
                if *added_context {
                    f.write_str("; added context")?;
                }
                Ok(())
            }
            HookOutcome::AddedContext => f.write_str("added context"),
            HookOutcome::BlockedResult { reason } => write!(f, "block: {reason}"),
            HookOutcome::ReplacedOutput => f.write_str("replaced the output"),
            HookOutcome::Blocked { reason } => write!(f, "blocked: {reason}"),
            HookOutcome::NoDecision => f.write_str("no decision"),
            HookOutcome::Done => f.write_str("done"),
            HookOutcome::Failed(failure) => write!(f, "error: {failure}"),
        }
    }
}

impl serde::Serialize for HookOutcome {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Compares the outcome's text (as it displays).
impl PartialEq<str> for HookOutcome {
    fn eq(&self, other: &str) -> bool {
        self.to_string().as_str() == other
    }
}

/// Compares the outcome's text (as it displays).
impl PartialEq<&str> for HookOutcome {
    fn eq(&self, other: &&str) -> bool {
        self == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_read_as_they_always_did() {
        let decided = |decision, reason: &str, rewrote_input, added_context| HookOutcome::Decided {
            decision,
            reason: reason.into(),
            rewrote_input,
            added_context,
        };
        let cases = [
            (decided(Decision::Allow, "", false, false), "allow"),
            (decided(Decision::Deny, "no rm", false, false), "deny: no rm"),
            (decided(Decision::Ask, "why", true, true), "ask: why; rewrote the input; added context"),
            (HookOutcome::RewroteInput { added_context: true }, "rewrote the input; added context"),
            (HookOutcome::RewroteInput { added_context: false }, "rewrote the input"),
            (HookOutcome::AddedContext, "added context"),
            (HookOutcome::BlockedResult { reason: "secret".into() }, "block: secret"),
            (HookOutcome::ReplacedOutput, "replaced the output"),
            (HookOutcome::Blocked { reason: "no".into() }, "blocked: no"),
            (HookOutcome::NoDecision, "no decision"),
            (HookOutcome::Done, "done"),
            (HookOutcome::Failed(HookFailure::TimedOut(Duration::from_secs(60))), "error: timed out after 60 s"),
            (
                HookOutcome::Failed(HookFailure::UnknownDecision("maybe".into())),
                "error: unknown permissionDecision `maybe`",
            ),
            (HookOutcome::Failed(HookFailure::Error("exit status 1".into())), "error: exit status 1"),
        ];
        for (outcome, text) in cases {
            assert_eq!(outcome.to_string(), text);
            assert_eq!(serde_json::to_value(&outcome).unwrap(), serde_json::Value::String(text.into()));
            assert_eq!(outcome.is_failure(), text.starts_with("error: "));
        }
    }
}
