//! Agent definitions: what kind of agent the `Agent` tool starts — its prompt, tools, model,
//! permission mode and turn limit.
//!
//! A definition is a Markdown file with YAML frontmatter, the format Claude Code reads from
//! `.claude/agents/*.md`, so the agent files people already have work unchanged:
//!
//! ```markdown
//! ---
//! name: reviewer
//! description: Reviews a change for bugs, missing tests and unclear code.
//! tools: Read, Grep, Glob, Bash
//! disallowedTools: Write
//! model: sonnet
//! permissionMode: plan
//! maxTurns: 30
//! ---
//! You review code. …
//! ```
//!
//! The body is the system prompt. `tools` and `disallowedTools` take a comma-separated string
//! or a YAML list; `model: inherit` means none; keys this crate has no use for (`color`,
//! `skills`, `hooks`…) are accepted and ignored. A file without `name` is named after its
//! file (`reviewer.md` → `reviewer`).
//!
//! **Where they are found** ([`discover`]): in the project, `.toolbelt/agents/`,
//! `.claude/agents/` and `.agents/agents/`; for the user, `$XDG_CONFIG_HOME/toolbelt/agents/`
//! (`~/.config/toolbelt/agents/`) and `~/.claude/agents/`. Every `*.md` file counts,
//! subdirectories included (as Claude Code reads them), except hidden ones and the
//! `README.md`, `LICENSE.md`… of a collection when they have no frontmatter. The first
//! definition of a name wins — project before user, and within a scope in the order above —
//! and the later ones are kept as [`Shadowed`], so a listing can say what hides what. The
//! built-in [`GENERAL_PURPOSE`] and [`EXPLORE`] come last: a file of the same name replaces
//! them.
//!
//! **Bad files are reported, never fatal.** Discovery returns the definitions and a
//! [`Problem`] for each file it could not use (with its path, its line when there is one, and
//! what to do), and warnings for the ones it used with something odd in them. Files are
//! opened as regular files only (a FIFO or a device named `x.md` is refused without blocking)
//! and read up to [`MAX_FILE_BYTES`].
//!
//! **The YAML parser** is [`saphyr_parser`], used at the event level. It is pure safe Rust
//! and YAML 1.2 (it passes the YAML test suite), maintained, and light (two small
//! dependencies); every event carries its line, so a wrong type or a bad value is reported
//! on the line of its key, not just a syntax error. The serde-based choices were weighed and
//! set aside: `serde_yaml` is archived; its forks `serde_yaml_ng` and `serde_norway` run on
//! `unsafe-libyaml` (C translated to unsafe Rust) and see few releases; `serde-saphyr` is
//! heavier and changes its major version every few weeks. Seven keys need no serde layer,
//! and reading events directly lets a definition refuse aliases (no "billion laughs") and
//! skip the nested values of keys it ignores without building them.
//!
//! Many real files are not strict YAML: generated ones have descriptions like `Use this agent
//! when… Examples: <example>Context: …` (an unquoted value with `: ` in it, which Claude Code
//! accepts), and some shipped ones run a description over unindented lines. When the YAML
//! fails, the frontmatter is read again in those ways (see `lenient.rs`), with a warning
//! saying how to write it; only when that does not help is the file an error.

mod builtin;
mod discover;
mod main_agent;
mod parse;
mod read;
mod tools;

#[cfg(test)]
mod tests;

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;
use toolbelt_core::AGENT_TOOLS;
use toolbelt_policy::PermissionMode;

pub use builtin::{EXPLORE, GENERAL_PURPOSE, builtin_definitions};
pub use discover::{Catalog, SearchDirs, Shadowed, discover};
pub use main_agent::{MAIN_AGENT, main_definition};
pub use parse::{DefinitionError, Parsed, Warning};
pub use read::MAX_FILE_BYTES;
pub use tools::{AgentTools, ToolKey, ToolSet, ToolWarning};

/// What kind of agent to run: its prompt, the tools it may use, its model and limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentDefinition {
    /// Its name, by which the `Agent` tool's `subagent_type` picks it.
    pub name: String,
    /// When to use it, for the model choosing an agent (may be several paragraphs).
    pub description: String,
    /// The tools it may use, as written (names or aliases); every tool it may have when
    /// `None`. See [`AgentDefinition::tool_set`].
    pub tools: Option<Vec<String>>,
    /// Tools it may not use, as written.
    pub disallowed_tools: Vec<String>,
    /// The model it runs on; the caller's or the provider's default when `None`.
    pub model: Option<String>,
    /// The permission mode it asks for (the loop applies it only where it is stricter).
    pub permission_mode: Option<PermissionMode>,
    /// Its turn limit, when it has one of its own.
    pub max_turns: Option<u32>,
    /// Its system prompt: the Markdown body (may be empty).
    pub system_prompt: String,
    /// Where it came from.
    pub source: DefinitionSource,
    /// The lines of its file some keys are on, for messages about them.
    pub lines: KeyLines,
}

/// The lines (1-based, in the file) of the keys a later check reports on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KeyLines {
    /// The line of `tools`.
    pub tools: Option<usize>,
    /// The line of `disallowedTools`.
    pub disallowed_tools: Option<usize>,
}

/// Whose a definition file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// The project's (`.toolbelt/agents/`, `.claude/agents/`, `.agents/agents/`).
    Project,
    /// The user's (`~/.config/toolbelt/agents/`, `~/.claude/agents/`).
    User,
}

impl Scope {
    /// `project` or `user`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Project => "project",
            Scope::User => "user",
        }
    }
}

/// Where a definition came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum DefinitionSource {
    /// Built into toolbelt.
    BuiltIn,
    /// A definition file.
    File {
        /// The file.
        path: PathBuf,
        /// Whose it is.
        scope: Scope,
    },
}

impl DefinitionSource {
    /// The file, when it came from one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            DefinitionSource::BuiltIn => None,
            DefinitionSource::File { path, .. } => Some(path),
        }
    }

    /// Whose it is; `None` for a built-in.
    pub fn scope(&self) -> Option<Scope> {
        match self {
            DefinitionSource::BuiltIn => None,
            DefinitionSource::File { scope, .. } => Some(*scope),
        }
    }
}

impl fmt::Display for DefinitionSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DefinitionSource::BuiltIn => f.write_str("built-in"),
            DefinitionSource::File { path, scope } => write!(f, "{} ({})", path.display(), scope.as_str()),
        }
    }
}

/// How bad a [`Problem`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The file was not used.
    Error,
    /// The file was used, but something in it does not work as written.
    Warning,
}

/// Something wrong with a definition file: where, and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The file (or the directory, when it could not be read).
    pub path: PathBuf,
    /// The line (1-based), when the problem has one.
    pub line: Option<usize>,
    /// Whether the file was used anyway.
    pub severity: Severity,
    /// What is wrong and what to do.
    pub message: String,
}

impl Problem {
    /// An error: the file at `path` was not used.
    pub fn error(path: impl Into<PathBuf>, line: Option<usize>, message: impl Into<String>) -> Self {
        Self { path: path.into(), line, severity: Severity::Error, message: message.into() }
    }

    /// A warning about a file that was used.
    pub fn warning(path: impl Into<PathBuf>, line: Option<usize>, message: impl Into<String>) -> Self {
        Self { path: path.into(), line, severity: Severity::Warning, message: message.into() }
    }
}

/// `path:line: message`, with `warning: ` before the message of a warning.
impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        let severity = match self.severity {
            Severity::Error => "",
            Severity::Warning => "warning: ",
        };
        write!(f, ": {severity}{}", self.message)
    }
}

impl AgentDefinition {
    /// The first line of the description (a literal `\n` ends it too), at most `max` characters
    /// with `…` when cut: how a listing shows it.
    pub fn summary(&self, max: usize) -> String {
        let first = self.description.split(['\n', '\r']).map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
        let first = first.split("\\n").next().unwrap_or("").trim();
        if first.chars().count() <= max {
            return first.to_string();
        }
        let cut: String = first.chars().take(max.saturating_sub(1)).collect();
        format!("{}…", cut.trim_end())
    }

    /// Whether this is a built-in definition.
    pub fn is_builtin(&self) -> bool {
        self.source == DefinitionSource::BuiltIn
    }
}
