//! Hook settings in Claude Code's JSON shape, and matchers.
//!
//! ```json
//! { "PreToolUse": [ { "matcher": "Bash|Edit",
//!                     "hooks": [ { "type": "command", "command": "./check.sh", "timeout": 30 } ] } ] }
//! ```

use std::collections::BTreeMap;
use std::time::Duration;

use regex::Regex;
use serde::Deserialize;
use serde_json::Value;

use crate::HookEvent;

/// Why hook settings are invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HookError {
    /// An event name toolbelt does not know.
    #[error(
        "unknown hook event `{0}`; supported: PreToolUse, PostToolUse, PostToolUseFailure, SessionStart, SessionEnd, SubagentStart, SubagentStop"
    )]
    UnknownEvent(String),
    /// A matcher that is neither names nor a valid regular expression.
    #[error("hook matcher `{matcher}` is not a valid regular expression: {problem}")]
    BadMatcher {
        /// The matcher as written.
        matcher: String,
        /// The regex error.
        problem: String,
    },
    /// A group or handler of the wrong shape.
    #[error("invalid {event} hook: {problem}")]
    BadShape {
        /// The event whose list holds it.
        event: String,
        /// What is wrong (`unknown variant `sql`, expected `command` or `http``…).
        problem: String,
    },
}

/// Which tools (or session reasons) a group applies to.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// `*`, empty or absent: everything.
    All,
    /// Only `[A-Za-z0-9_|]`: exact names separated by `|`.
    Names(Vec<String>),
    /// Anything else: a regular expression matching the whole name.
    Regex(Regex),
}

impl Matcher {
    /// Parses a matcher by Claude Code's rules (an absent matcher reads as `""`).
    pub fn parse(matcher: &str) -> Result<Matcher, HookError> {
        let m = matcher.trim();
        if m.is_empty() || m == "*" {
            return Ok(Matcher::All);
        }
        if m.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '|') {
            return Ok(Matcher::Names(m.split('|').filter(|s| !s.is_empty()).map(str::to_string).collect()));
        }
        Regex::new(&format!("^(?:{m})$"))
            .map(Matcher::Regex)
            .map_err(|e| HookError::BadMatcher { matcher: m.to_string(), problem: e.to_string() })
    }

    /// Whether any of `names` (a tool's name and aliases, or a session reason) matches.
    pub fn matches<'a>(&self, mut names: impl Iterator<Item = &'a str>) -> bool {
        match self {
            Matcher::All => true,
            Matcher::Names(list) => names.any(|n| list.iter().any(|l| l == n)),
            Matcher::Regex(re) => names.any(|n| re.is_match(n)),
        }
    }
}

/// A handler as configured.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub(super) enum RawHandler {
    Command {
        command: String,
        #[serde(default)]
        timeout: Option<f64>,
    },
    Http {
        url: String,
        #[serde(default)]
        headers: BTreeMap<String, String>,
        #[serde(default)]
        timeout: Option<f64>,
    },
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGroup {
    #[serde(default)]
    matcher: Option<String>,
    hooks: Vec<RawHandler>,
}

/// One configured handler, with its timeout.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Configured {
    pub handler: RawHandler,
    pub timeout: Duration,
}

/// Default timeout of a command or HTTP hook.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Parses `{"Event": [groups…]}` into (event, matcher, handlers) triples, in order.
pub(super) fn parse(settings: &Value) -> Result<Vec<(HookEvent, Matcher, Vec<Configured>)>, HookError> {
    let Some(events) = settings.as_object() else {
        if settings.is_null() {
            return Ok(Vec::new());
        }
        return Err(HookError::BadShape { event: "hooks".into(), problem: "expected a table of events".into() });
    };
    let mut out = Vec::new();
    for (name, groups) in events {
        let event = HookEvent::parse(name).ok_or_else(|| HookError::UnknownEvent(name.clone()))?;
        let shape = |problem: String| HookError::BadShape { event: name.clone(), problem };
        let groups: Vec<RawGroup> = serde_json::from_value(groups.clone()).map_err(|e| shape(e.to_string()))?;
        for group in groups {
            let matcher = Matcher::parse(group.matcher.as_deref().unwrap_or(""))?;
            let mut handlers = Vec::new();
            for handler in group.hooks {
                let secs = match &handler {
                    RawHandler::Command { timeout, .. } | RawHandler::Http { timeout, .. } => *timeout,
                };
                let timeout = match secs {
                    None => DEFAULT_TIMEOUT,
                    Some(s) if s.is_finite() && s > 0.0 && s <= 86_400.0 => Duration::from_secs_f64(s),
                    Some(s) => {
                        return Err(shape(format!("timeout {s} is out of range (a number of seconds, up to 86400)")));
                    }
                };
                if let RawHandler::Command { command, .. } = &handler
                    && command.trim().is_empty()
                {
                    return Err(shape("a command hook needs a command".into()));
                }
                if let RawHandler::Http { url, .. } = &handler {
                    url::Url::parse(url).map_err(|e| shape(format!("`{url}` is not a URL: {e}")))?;
                }
                handlers.push(Configured { handler, timeout });
            }
            out.push((event, matcher, handlers));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn matchers_follow_claude_codes_rules() {
        let names = ["Bash", "exec"];
        let m = |s: &str| Matcher::parse(s).unwrap().matches(names.iter().copied());
        assert!(m("*") && m("") && m("Bash") && m("Edit|Bash") && m("exec") && m("Ba.*"));
        assert!(!m("Bas") && !m("Edit|Write") && !m("a.*h"), "names are exact; a regex matches the whole name");
        assert!(Matcher::parse("").unwrap().matches(std::iter::once("anything")));
        assert!(Matcher::parse("mcp__.*__read").unwrap().matches(std::iter::once("mcp__fs__read")));
        assert!(matches!(Matcher::parse("("), Err(HookError::BadMatcher { .. })));
    }

    #[test]
    fn settings_errors_name_the_problem() {
        let err = |v: Value| parse(&v).unwrap_err().to_string();
        assert!(err(json!({"PreToolUs": []})).contains("unknown hook event `PreToolUs`"));
        assert!(err(json!({"PreToolUse": [{"hooks": [{"type": "sql"}]}]})).contains("unknown variant `sql`"));
        assert!(
            err(json!({"PreToolUse": [{"hooks": [{"type": "command", "command": "x", "timeout": -1}]}]}))
                .contains("out of range")
        );
        assert!(
            err(json!({"PreToolUse": [{"hooks": [{"type": "http", "url": "not a url"}]}]})).contains("is not a URL")
        );
        let ok = parse(&json!({"PostToolUse": [{"matcher": "Edit|Write", "hooks": [
            {"type": "command", "command": "fmt.sh", "timeout": 5},
            {"type": "http", "url": "http://127.0.0.1:9/h", "headers": {"A": "b"}}
        ]}]}))
        .unwrap();
        assert_eq!(ok.len(), 1);
        assert_eq!(ok[0].2[0].timeout, Duration::from_secs(5));
        assert_eq!(ok[0].2[1].timeout, DEFAULT_TIMEOUT);
    }
}
