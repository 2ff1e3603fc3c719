//! The specifier of a `Bash(…)` rule: a command pattern, matched against one simple command.
//!
//! Claude Code's semantics: `*` matches any run of characters (spaces included, or none),
//! anywhere, any number of times. A pattern ending in ` *` also matches the bare prefix —
//! `ls *` matches `ls` and `ls -la` but not `lsof` (the space is a word boundary), while
//! `ls*` matches `lsof` too. The legacy suffix `:*` means the same as ` *` (a prefix at a word
//! boundary): `npm run test:*` matches `npm run test` and `npm run test --watch`, not `npm run
//! testing`. Without a wildcard the match is exact. Whitespace runs count as one space in both
//! the pattern and the command.

/// Why a command pattern could not be parsed, and what to write instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandPatternError {
    /// Nothing inside the parentheses.
    #[error("empty specifier: write `Bash` for every command, or `Bash(cmd *)` for a prefix")]
    Empty,
    /// `:*` somewhere other than at the end.
    #[error("`:*` may only end a pattern; use `*` for a wildcard elsewhere")]
    ColonStarInside,
    /// `:*` alone.
    #[error("`:*` needs a command before it")]
    ColonStarAlone,
}

/// A parsed command pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandPattern {
    text: String,
    /// The literal pieces between `*`s (`a*b*` → `["a", "b", ""]`).
    pieces: Vec<String>,
    /// Whether the pattern ends in ` *` (or `:*`), so the prefix alone matches too.
    bare_prefix: Option<String>,
}

impl CommandPattern {
    /// Parses the text inside `Bash(…)`.
    pub fn parse(spec: &str) -> Result<CommandPattern, CommandPatternError> {
        let collapsed = collapse(spec);
        if collapsed.is_empty() {
            return Err(CommandPatternError::Empty);
        }
        let normalized = match collapsed.strip_suffix(":*") {
            Some(prefix) if prefix.contains(":*") => return Err(CommandPatternError::ColonStarInside),
            Some(prefix) if prefix.trim().is_empty() => return Err(CommandPatternError::ColonStarAlone),
            Some(prefix) => format!("{} *", prefix.trim_end()),
            None if collapsed.contains(":*") => return Err(CommandPatternError::ColonStarInside),
            None => collapsed,
        };
        let bare_prefix = normalized.strip_suffix(" *").map(str::to_string);
        let pieces = normalized.split('*').map(str::to_string).collect();
        Ok(CommandPattern { text: spec.trim().to_string(), pieces, bare_prefix })
    }

    /// Whether one simple command matches.
    pub fn matches(&self, command: &str) -> bool {
        let command = collapse(command);
        if self.bare_prefix.as_deref() == Some(command.as_str()) {
            return true;
        }
        toolbelt_core::glob_pieces(&self.pieces, &command)
    }

    /// The specifier as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, command: &str) -> bool {
        CommandPattern::parse(pattern).unwrap().matches(command)
    }

    #[test]
    fn claude_codes_documented_examples() {
        let table = [
            ("npm run build", "npm run build", true),
            ("npm run build", "npm run build --prod", false),
            ("npm run test *", "npm run test", true),
            ("npm run test *", "npm run test --watch", true),
            ("npm run test *", "npm run testing", false),
            ("git diff *", "git diff HEAD~1", true),
            ("* --version", "node --version", true),
            ("* --version", "node --help", false),
            ("git * main", "git push origin main", true),
            ("git * main", "git checkout main", true),
            ("git * main", "git push origin dev", false),
            ("ls *", "ls", true),
            ("ls *", "ls -la", true),
            ("ls *", "lsof", false),
            ("ls*", "lsof", true),
            ("ls*", "ls -la", true),
            ("npm run test:*", "npm run test", true),
            ("npm run test:*", "npm run test --watch", true),
            ("npm run test:*", "npm run testing", false),
            ("*", "anything at all", true),
            ("*", "", true),
        ];
        for (pattern, command, want) in table {
            assert_eq!(m(pattern, command), want, "`{pattern}` vs `{command}`");
        }
    }

    #[test]
    fn whitespace_is_collapsed_on_both_sides() {
        assert!(m("  cargo   test  *", "cargo  test   --workspace"));
        assert!(m("cargo\ttest", "cargo test"));
    }

    #[test]
    fn wildcards_match_without_backtracking_blowups() {
        assert!(m("a*b*c*d", "a-b-c-d"));
        assert!(!m("a*b*c*d", "a-c-b"));
        let long = "a".repeat(100_000);
        assert!(!m("*a*a*a*a*b", &long));
        assert!(m("*é*", "café au lait"));
    }

    #[test]
    fn bad_specifiers_say_what_to_write() {
        for (spec, expected) in [
            ("", "empty specifier"),
            ("   ", "empty specifier"),
            ("npm:* test", "may only end a pattern"),
            ("a:*b:*", "may only end a pattern"),
            (":*", "needs a command"),
        ] {
            let err = CommandPattern::parse(spec).unwrap_err().to_string();
            assert!(err.contains(expected), "`{spec}`: {err}");
        }
        assert_eq!(CommandPattern::parse(" git diff * ").unwrap().as_str(), "git diff *");
    }
}
