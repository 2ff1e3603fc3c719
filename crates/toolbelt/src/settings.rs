//! Layered settings: built-in defaults < user < project < project-local < environment < flags,
//! with a managed file above everything.
//!
//! # Files
//!
//! | layer | file |
//! |---|---|
//! | user | `$XDG_CONFIG_HOME/toolbelt/config.toml` (`~/.config/toolbelt/config.toml`) |
//! | project | `<project>/.mcp.json` (Claude Code's MCP servers), then `<project>/.toolbelt/config.toml` (shared, committed) |
//! | project-local | `<project>/.toolbelt/config.local.toml` (personal, git-ignored) |
//! | grants | `$XDG_STATE_HOME/toolbelt/projects/<project>-<hash>/grants.toml`: the rules a person allowed "always" in this project (see [`store`]) |
//! | environment | `TOOLBELT_<SECTION>__<KEY>` (`TOOLBELT_PERMISSIONS__MODE=plan`) |
//! | flags | `--mode`, `--allow`, `--deny`, `--add-dir`, `--sandbox`, … |
//! | managed | `/etc/toolbelt/managed.toml` |
//!
//! Claude Code's `~/.claude/settings.json`, `.claude/settings.json` and
//! `.claude/settings.local.json` join the user, project and project-local layers (just below
//! toolbelt's file of the same layer). Their deny and ask rules always apply (they can only
//! make the policy stricter); with `[compat] claude = true` (or `--claude-settings`) the rest of
//! their permissions (allow, defaultMode, additionalDirectories) and their hooks apply too.
//!
//! # Merging
//!
//! Every file is read into [`Entry`]s — one per scalar value and one per list item — each
//! knowing its [`Origin`] (layer, file, line). A scalar takes the value of the highest layer
//! that sets it; lists (rules, directories, hook groups) add up across layers. Since a deny
//! rule beats every allow rule wherever it comes from, nothing below the managed file can
//! loosen the managed file's denies, and its scalars (the mode) override everything.
//!
//! Every value of every layer is checked, even one a higher layer overrides, so `config
//! check` reports every mistake at once with its file and line, and an unknown key names the
//! key that was probably meant.

pub mod agent;
mod claude;
pub mod custom_tools;
mod env;
mod lint;
mod load;
mod locations;
pub mod loosening;
mod lsp;
pub mod model_access;
pub mod plugins;
mod remote;
mod resolve;
pub mod schema;
mod serving;
mod store;
mod toml_file;
mod tool_filter;
mod tool_search;
pub mod trust;
pub mod web;
mod winner;

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

pub use load::{load, load_trusted, project_problems, trust_views};
pub use locations::{Locations, project_root};
pub use resolve::{McpHttpSettings, Settings, ShellSettings, storage_of};
pub use schema::Key;
pub use store::{LocalRuleStore, StoreError, StoreProblem};
pub use tool_filter::ToolFilter;
pub use toolbelt_mcp::client::{UpstreamConfig, UpstreamConfigError, UpstreamTransport};
pub use trust::is_project_layer;
pub use trust::{Trust, TrustStore};

/// A settings layer, ordered from lowest to highest precedence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Layer {
    /// What the user's enabled plugins bundle (`~/.config/toolbelt/plugins/NAME/`): below
    /// the user's own settings, which win a clash.
    UserPlugin,
    /// `~/.claude/settings.json` (with Claude compatibility on).
    ClaudeUser,
    /// `$XDG_CONFIG_HOME/toolbelt/config.toml`.
    User,
    /// What the project's enabled plugins bundle (`.toolbelt/plugins/NAME/`): a project
    /// layer, waiting for trust as the project's own settings do.
    ProjectPlugin,
    /// `.claude/settings.json`.
    ClaudeProject,
    /// `.toolbelt/config.toml`.
    Project,
    /// `.claude/settings.local.json`.
    ClaudeLocal,
    /// `.toolbelt/config.local.toml`.
    Local,
    /// The rules a person allowed "always" in this project, in the user's state directory.
    Grants,
    /// `TOOLBELT_…` variables.
    Env,
    /// Command-line flags.
    Flags,
    /// `/etc/toolbelt/managed.toml`.
    Managed,
}

impl Layer {
    /// Whether this is one of Claude Code's settings files.
    pub fn is_claude(self) -> bool {
        matches!(self, Layer::ClaudeUser | Layer::ClaudeProject | Layer::ClaudeLocal)
    }

    /// The layer's name, as `config show` prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::UserPlugin => "user plugin",
            Layer::ProjectPlugin => "project plugin",
            Layer::ClaudeUser => "claude user",
            Layer::User => "user",
            Layer::ClaudeProject => "claude project",
            Layer::Project => "project",
            Layer::ClaudeLocal => "claude local",
            Layer::Local => "project-local",
            Layer::Grants => "grants",
            Layer::Env => "env",
            Layer::Flags => "flag",
            Layer::Managed => "managed",
        }
    }
}

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The layer.
    pub layer: Layer,
    /// The file, for file layers.
    pub file: Option<PathBuf>,
    /// The line in the file (1-based), when known.
    pub line: Option<usize>,
    /// The variable or flag, for the env and flag layers.
    pub name: Option<String>,
}

impl Origin {
    /// A value from line `line` of `file`.
    pub fn file(layer: Layer, file: &Path, line: Option<usize>) -> Self {
        Self { layer, file: Some(file.to_path_buf()), line, name: None }
    }

    /// A value from a command-line flag.
    pub fn flag(flag: &str) -> Self {
        Self { layer: Layer::Flags, file: None, line: None, name: Some(flag.to_string()) }
    }

    /// A value from an environment variable.
    pub fn env(var: &str) -> Self {
        Self { layer: Layer::Env, file: None, line: None, name: Some(var.to_string()) }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file, self.line, &self.name) {
            (Some(file), Some(line), _) => write!(f, "{} {}:{line}", self.layer.as_str(), file.display()),
            (Some(file), None, _) => write!(f, "{} {}", self.layer.as_str(), file.display()),
            (None, _, Some(name)) => write!(f, "{} {name}", self.layer.as_str()),
            (None, _, None) => f.write_str(self.layer.as_str()),
        }
    }
}

/// One value (or one list item) of one layer.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The dotted key (`permissions.allow`).
    pub key: String,
    /// The value, as JSON.
    pub value: Value,
    /// Where it came from.
    pub origin: Origin,
}

impl Entry {
    /// A flag's value for `key`.
    pub fn flag(key: Key, value: impl Into<Value>, flag: &str) -> Self {
        Self { key: key.to_string(), value: value.into(), origin: Origin::flag(flag) }
    }
}

/// A mistake in the settings, with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Where.
    pub origin: Origin,
    /// The key it concerns (empty for a file that does not parse).
    pub key: String,
    /// What is wrong and what to write instead.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let place = match (&self.origin.file, self.origin.line, &self.origin.name) {
            (Some(file), Some(line), _) => format!("{}:{line}", file.display()),
            (Some(file), None, _) => file.display().to_string(),
            (None, _, Some(name)) => format!("{} {name}", self.origin.layer.as_str()),
            (None, _, None) => self.origin.layer.as_str().to_string(),
        };
        if self.key.is_empty() {
            write!(f, "{place}: {}", self.message)
        } else {
            write!(f, "{place}: {}: {}", self.key, self.message)
        }
    }
}

/// Everything read from every layer.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    /// Every value, in precedence order (lowest layer first, file order within a layer).
    pub entries: Vec<Entry>,
    /// Files that were read.
    pub files_read: Vec<(Layer, PathBuf)>,
    /// Mistakes found while reading (syntax, unknown keys, wrong types) that stop calls: the
    /// user's own files', and a trusted project's.
    pub problems: Vec<Problem>,
    /// Whether the project's own settings apply ([`trust`]); when they do not, their
    /// loosening entries are not in `entries`.
    pub trust: Trust,
    /// What the project's files set that needs trust and would apply (what `toolbelt trust`
    /// reviews and records).
    pub pending: trust::Pending,
    /// Things to tell the user once (a project setting ignored, and why).
    pub notices: Vec<String>,
    /// What a project sets that never applies, trusted or not (a value looser than the
    /// user's own, a key only the user sets), for the trust review; also in `notices` when
    /// the project's settings apply.
    pub review_notes: Vec<String>,
    /// Problems in the files of a project nobody trusted: said, but calls go on without what
    /// they concern ([`Loaded::ignored_notice`]).
    pub ignored_problems: Vec<Problem>,
    /// What Claude Code's settings files contributed when only their restrictions apply
    /// (without `--claude-settings`), to tell the user.
    pub claude_note: Option<String>,
    /// The enabled plugins whose bundles apply (`plugins.rs`).
    pub plugins: Vec<plugins::Plugin>,
    /// What is wrong in the plugins: said, never stopping a call (the plugin's part left out).
    pub plugin_problems: Vec<Problem>,
    /// How many entries of Claude Code's files were left out for want of the opt-in.
    pub claude_skipped: usize,
}

impl Loaded {
    /// Whether `problem` stops calls: one in the user's own settings, or in the files of a
    /// project the user trusted. A repository nobody trusted cannot stop toolbelt with a
    /// broken file: its problems are said and what they concern is left out.
    pub fn is_fatal(&self, problem: &Problem) -> bool {
        !trust::is_project_layer(problem.origin.layer) || matches!(self.trust, Trust::Trusted { .. })
    }

    /// Moves the problems of `problems` that do not stop calls ([`Loaded::is_fatal`]) to
    /// [`Loaded::ignored_problems`]; returns the rest.
    pub fn keep_fatal(&mut self, problems: Vec<Problem>) -> Vec<Problem> {
        let (fatal, ignored): (Vec<Problem>, Vec<Problem>) = problems.into_iter().partition(|p| self.is_fatal(p));
        self.ignored_problems.extend(ignored);
        fatal
    }

    /// The lines saying the project's files have problems that were left out, and what to do.
    pub fn ignored_notice(&self) -> Option<String> {
        if self.ignored_problems.is_empty() {
            return None;
        }
        let mut text = format!(
            "this project's settings have {} problem(s); calls go on without what they concern, and `toolbelt \
             trust` refuses the project until they are fixed (`toolbelt config check` lists them):",
            self.ignored_problems.len()
        );
        for problem in &self.ignored_problems {
            text.push_str(&format!("\n  {problem}"));
        }
        Some(text)
    }
}

/// The 1-based line of byte `offset` in `text`.
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())].iter().filter(|&&b| b == b'\n').count() + 1
}

/// A problem for an unknown key, suggesting the one probably meant.
pub(crate) fn unknown_key(origin: Origin, key: &str) -> Problem {
    let message = match schema::suggest(key) {
        Some(known) => format!("unknown key; did you mean `{known}`?"),
        None => "unknown key; `toolbelt config show` lists every key".to_string(),
    };
    Problem { origin, key: key.to_string(), message }
}
