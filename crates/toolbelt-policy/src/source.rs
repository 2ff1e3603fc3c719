//! What made a verdict ([`VerdictSource`]), spelled the way denials, prompts, `toolbelt
//! explain` and the audit log name it (`` rule `Bash(rm *)` (project .toolbelt/config.toml) ``,
//! `mode acceptEdits`, `` PreToolUse hook `command ./check.sh` ``).

use std::fmt;

use crate::{HookEvent, PermissionMode};

/// A rule that decided: one written somewhere (a settings layer, a flag, an "always"
/// approval), or one a person granted for the rest of the session.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RuleRef {
    /// A rule with its origin: `` rule `Bash(rm *)` (project .toolbelt/config.toml) ``.
    Rule {
        /// The rule as written.
        rule: String,
        /// Where it came from ([`crate::rules::RuleOrigin::label`]).
        origin: String,
    },
    /// A session grant: `` session grant `Bash(cargo build *)` ``.
    SessionGrant {
        /// The granted rule.
        rule: String,
    },
}

impl fmt::Display for RuleRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuleRef::Rule { rule, origin } => write!(f, "rule `{rule}` ({origin})"),
            RuleRef::SessionGrant { rule } => write!(f, "session grant `{rule}`"),
        }
    }
}

/// What made a verdict. Displays (and serializes, as a string) the way toolbelt has always
/// named it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum VerdictSource {
    /// A rule or a session grant.
    Rule(RuleRef),
    /// A path reached through a symlink, allowed by one rule for the link and another for
    /// where it leads (an allow must cover both): `` rule `Edit(./link)` (…) and session grant
    /// `Edit(//elsewhere/file)` ``.
    LinkAndTarget {
        /// What covers the path as declared.
        link: RuleRef,
        /// What covers the path with symlinks followed.
        target: RuleRef,
    },
    /// The permission mode decided (no rule covers the call): `mode acceptEdits`.
    Mode(PermissionMode),
    /// A write to a protected path that no allow rule names: `` protected path `.git` ``.
    ProtectedPath(String),
    /// A hook: `` PreToolUse hook `command ./check.sh` ``.
    Hook {
        /// The event it ran for.
        event: HookEvent,
        /// Which handler ([`crate::HookRun::handler`]).
        handler: String,
    },
    /// The tool's spec asks before every call: `tool spec`.
    ToolSpec,
    /// The tool asked for approval of this one call: `the tool, for this call`.
    ToolForThisCall,
    /// [`crate::AllowAll`]: `default policy (allow all)`.
    AllowAll,
    /// An embedder's own [`crate::Authorizer`], in its own words.
    Other(String),
}

impl From<RuleRef> for VerdictSource {
    fn from(rule: RuleRef) -> Self {
        VerdictSource::Rule(rule)
    }
}

impl fmt::Display for VerdictSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VerdictSource::Rule(rule) => rule.fmt(f),
            VerdictSource::LinkAndTarget { link, target } => write!(f, "{link} and {target}"),
            VerdictSource::Mode(mode) => write!(f, "mode {mode}"),
            VerdictSource::ProtectedPath(entry) => write!(f, "protected path `{entry}`"),
            VerdictSource::Hook { event, handler } => write!(f, "{} hook `{handler}`", event.as_str()),
            VerdictSource::ToolSpec => f.write_str("tool spec"),
            VerdictSource::ToolForThisCall => f.write_str("the tool, for this call"),
            VerdictSource::AllowAll => f.write_str("default policy (allow all)"),
            VerdictSource::Other(words) => f.write_str(words),
        }
    }
}

impl serde::Serialize for VerdictSource {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Compares the source's text (as it displays).
impl PartialEq<str> for VerdictSource {
    fn eq(&self, other: &str) -> bool {
        self.to_string().as_str() == other
    }
}

/// Compares the source's text (as it displays).
impl PartialEq<&str> for VerdictSource {
    fn eq(&self, other: &&str) -> bool {
        self == *other
    }
}

/// Compares the source's text (as it displays).
impl PartialEq<String> for VerdictSource {
    fn eq(&self, other: &String) -> bool {
        self == other.as_str()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_read_as_they_always_did() {
        let rule = RuleRef::Rule { rule: "Bash(rm *)".into(), origin: "project .toolbelt/config.toml".into() };
        let grant = RuleRef::SessionGrant { rule: "Edit(//t/a)".into() };
        let cases = [
            (VerdictSource::Rule(rule.clone()), "rule `Bash(rm *)` (project .toolbelt/config.toml)"),
            (
                VerdictSource::LinkAndTarget { link: rule, target: grant },
                "rule `Bash(rm *)` (project .toolbelt/config.toml) and session grant `Edit(//t/a)`",
            ),
            (VerdictSource::Mode(PermissionMode::AcceptEdits), "mode acceptEdits"),
            (VerdictSource::ProtectedPath(".git".into()), "protected path `.git`"),
            (
                VerdictSource::Hook { event: HookEvent::PreToolUse, handler: "command ./x.sh".into() },
                "PreToolUse hook `command ./x.sh`",
            ),
            (VerdictSource::ToolSpec, "tool spec"),
            (VerdictSource::ToolForThisCall, "the tool, for this call"),
            (VerdictSource::AllowAll, "default policy (allow all)"),
            (VerdictSource::Other("my policy".into()), "my policy"),
        ];
        for (source, text) in cases {
            assert_eq!(source.to_string(), text);
            assert_eq!(serde_json::to_value(&source).unwrap(), serde_json::Value::String(text.into()));
            assert_eq!(source, text);
        }
    }
}
