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
mod env;
mod lint;
mod locations;
pub mod loosening;
mod lsp;
pub mod model_access;
mod resolve;
pub mod schema;
mod store;
mod toml_file;
pub mod trust;
pub mod web;

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

pub use locations::{Locations, project_root};
pub use resolve::{McpHttpSettings, Settings, ShellSettings};
pub use store::{LocalRuleStore, StoreError, StoreProblem};
pub use toolbelt_mcp::client::{UpstreamConfig, UpstreamConfigError, UpstreamTransport};
pub use trust::is_project_layer;
pub use trust::{Trust, TrustStore};

/// A settings layer, ordered from lowest to highest precedence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Layer {
    /// `~/.claude/settings.json` (with Claude compatibility on).
    ClaudeUser,
    /// `$XDG_CONFIG_HOME/toolbelt/config.toml`.
    User,
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
    pub fn flag(key: &str, value: impl Into<Value>, flag: &str) -> Self {
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

/// Reads every layer. `flags` are the command line's entries; `env` the process environment;
/// `claude_flag` is `--claude-settings`. Never fails: problems are collected in the result.
///
/// The project's own files apply only when the project is trusted ([`trust`]): until then
/// only their deny and ask rules are kept. Claude Code's files are always read, and their deny
/// and ask rules always apply; the rest of them applies when `compat.claude` (or the flag)
/// says so, that setting itself waiting for trust when a project sets it.
pub fn load(
    loc: &Locations,
    flags: Vec<Entry>,
    env: impl IntoIterator<Item = (String, String)>,
    claude_flag: bool,
) -> Loaded {
    load_as(loc, flags, env, claude_flag, Assume::Store)
}

/// [`load`] as it would be once the project is trusted with everything it asks for, the
/// settings that loosen the policy included: what `toolbelt trust` checks before it trusts,
/// and what `config check` checks in a project waiting for trust.
pub fn load_trusted(
    loc: &Locations,
    flags: Vec<Entry>,
    env: impl IntoIterator<Item = (String, String)>,
    claude_flag: bool,
) -> Loaded {
    load_as(loc, flags, env, claude_flag, Assume::Trusted)
}

/// What the project's waiting settings would be in each way of reading it — without and with
/// Claude Code's files applying whole — so one trust covers both (`--claude-settings` then
/// never reads as a change). `flags` without their `compat.claude` for the first.
pub fn trust_views(loc: &Locations, flags: &[Entry], env: &[(String, String)]) -> [trust::Pending; 2] {
    let without: Vec<Entry> = flags.iter().filter(|e| e.key != "compat.claude").cloned().collect();
    [load(loc, without, env.to_vec(), false).pending, load(loc, flags.to_vec(), env.to_vec(), true).pending]
}

/// Every problem the project's own files would have once trusted with everything they ask
/// for (`claude`: with Claude Code's files applying whole): syntax, unknown keys, values of
/// the wrong type, rules that do not parse, directories that are not there. What `toolbelt
/// trust` refuses a project for, and what `config check` reports of a project waiting for
/// trust.
pub fn project_problems(loc: &Locations, flags: &[Entry], env: &[(String, String)], claude: bool) -> Vec<Problem> {
    let flags = flags.iter().filter(|e| claude || e.key != "compat.claude").cloned().collect();
    let loaded = load_trusted(loc, flags, env.to_vec(), claude);
    let rule_env = toolbelt_policy::rules::RuleEnv { home: loc.home.clone(), cwd: loc.cwd.clone() };
    let (_, resolved) = Settings::resolve(&loaded, loc, &rule_env);
    let mut out: Vec<Problem> = Vec::new();
    for problem in loaded.problems.into_iter().chain(loaded.ignored_problems).chain(resolved) {
        if trust::is_project_layer(problem.origin.layer) && !out.contains(&problem) {
            out.push(problem);
        }
    }
    out
}

/// Where the trust decision comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Assume {
    /// The trust store.
    Store,
    /// The project is trusted, loosening settings included.
    Trusted,
}

fn load_as(
    loc: &Locations,
    flags: Vec<Entry>,
    env: impl IntoIterator<Item = (String, String)>,
    claude_flag: bool,
    assume: Assume,
) -> Loaded {
    let mut loaded = Loaded::default();
    read_files(&mut loaded, loc.files(false));
    loaded.entries.extend(env::entries(env, &mut loaded.problems));
    loaded.entries.extend(flags);
    let wants_claude = claude_flag || resolve::last_bool(&loaded.entries, "compat.claude").unwrap_or(false);
    // Claude Code's files are always read: their deny and ask rules only make the policy
    // stricter and apply in any case; the rest (allow rules, mode, hooks) waits for the opt-in.
    let claude = loc.files(true).into_iter().filter(|(layer, _)| layer.is_claude());
    read_files(&mut loaded, claude);
    if !wants_claude {
        keep_claude_restrictions(&mut loaded);
    }
    // Every layer in precedence order; within a layer, file order (the sort is stable).
    loaded.entries.sort_by_key(|e| e.origin.layer);
    loaded.files_read.sort_by_key(|(layer, _)| *layer);
    // Every value is checked, whether it will apply or not.
    let mut problems = Vec::new();
    for entry in &loaded.entries {
        check_entry(entry, &mut problems);
    }
    loaded.problems.extend(problems);

    // What a project sets that never applies, trusted or not, goes first: the trust digest
    // and review then cover only what would apply.
    let mut review = Vec::new();
    trust::keep_user_floor(&mut loaded.entries, &mut review);
    agent::keep_user_providers(&mut loaded.entries, &mut review);
    web::keep_user_network(&mut loaded.entries, &mut review);
    model_access::keep_user_opt_in(&mut loaded.entries, &mut review);
    keep_user_audit(&mut loaded.entries, &mut review);

    loaded.pending = trust::Pending::of(&loaded.entries, &loc.project);
    loaded.trust = match assume {
        Assume::Store => Trust::decide(&loaded.pending, &loc.project, &TrustStore::at(loc)),
        Assume::Trusted if loaded.pending.is_empty() => Trust::NotNeeded,
        Assume::Trusted => Trust::Trusted { loosening: true },
    };
    match &loaded.trust {
        Trust::Untrusted { .. } => {
            loaded.entries.retain(|e| !trust::is_project_layer(e.origin.layer) || trust::only_restricts(e));
            loaded.files_read.retain(|(layer, _)| !trust::is_project_layer(*layer));
        }
        Trust::Trusted { loosening: false } if !loaded.pending.loosening.is_empty() => {
            loaded.entries.retain(|e| !trust::is_project_layer(e.origin.layer) || loosening::reason(e).is_none());
            loaded.notices.push(format!(
                "{} setting(s) of this project that loosen the policy are not applied ({}): it was trusted \
                 without them; review them with `toolbelt trust --show` and apply them with `toolbelt trust \
                 --allow-loosening`",
                loaded.pending.loosening.len(),
                loaded.pending.loosening_gist()
            ));
            loaded.notices.extend(review.iter().cloned());
        }
        Trust::Trusted { .. } | Trust::NotNeeded => loaded.notices.extend(review.iter().cloned()),
    }
    loaded.review_notes = review;
    let problems = std::mem::take(&mut loaded.problems);
    loaded.problems = loaded.keep_fatal(problems);
    // Read speculatively for the digest: Claude Code's files apply only if a trusted layer
    // still asks for them.
    if wants_claude && !claude_flag && !resolve::last_bool(&loaded.entries, "compat.claude").unwrap_or(false) {
        keep_claude_restrictions(&mut loaded);
    }
    loaded.claude_note = claude_note(&loaded, wants_claude);
    loaded
}

/// The audit log is the user's evidence: a project's files cannot switch it off, move it or
/// make it rotate away.
fn keep_user_audit(entries: &mut Vec<Entry>, notices: &mut Vec<String>) {
    entries.retain(|e| {
        let project_audit = trust::is_project_layer(e.origin.layer) && e.key.starts_with("audit.");
        if project_audit {
            notices.push(format!(
                "{} in {} is ignored: the audit log is set up by the user (user or managed settings, \
                 TOOLBELT_AUDIT__* variables, --audit), never by a project",
                e.key, e.origin
            ));
        }
        !project_audit
    });
}

/// Without Claude compatibility, keeps only the entries of Claude Code's files that restrict
/// (deny and ask rules), and only the problems that stop one of those from applying.
fn keep_claude_restrictions(loaded: &mut Loaded) {
    let before = loaded.entries.len();
    loaded.entries.retain(|e| !e.origin.layer.is_claude() || trust::only_restricts(e));
    loaded.claude_skipped += before - loaded.entries.len();
    let keep = |p: &Problem| {
        !p.origin.layer.is_claude() || matches!(p.key.as_str(), "" | "permissions.deny" | "permissions.ask")
    };
    loaded.problems.retain(keep);
    loaded.ignored_problems.retain(keep);
}

/// What Claude Code's files contributed, to tell the user; `None` when none was found.
fn claude_note(loaded: &Loaded, wanted: bool) -> Option<String> {
    let mut files: Vec<String> = Vec::new();
    let read = loaded.files_read.iter().filter(|(layer, _)| layer.is_claude()).map(|(_, file)| file.as_path());
    let named = loaded.entries.iter().filter(|e| e.origin.layer.is_claude()).filter_map(|e| e.origin.file.as_deref());
    for file in read.chain(named) {
        let file = file.display().to_string();
        if !files.contains(&file) {
            files.push(file);
        }
    }
    if files.is_empty() || wanted && loaded.claude_skipped == 0 {
        return None;
    }
    let count = |key: &str| loaded.entries.iter().filter(|e| e.origin.layer.is_claude() && e.key == key).count();
    let mut note = format!(
        "Claude Code's settings ({}): {} deny and {} ask rule(s) applied",
        files.join(", "),
        count("permissions.deny"),
        count("permissions.ask")
    );
    if loaded.claude_skipped > 0 {
        note.push_str(&format!(
            "; {} other setting(s) (allow rules, mode, hooks…) not applied: pass --claude-settings or set \
             [compat] claude = true to use them",
            loaded.claude_skipped
        ));
    }
    Some(note)
}

fn read_files(loaded: &mut Loaded, files: impl IntoIterator<Item = (Layer, PathBuf)>) {
    for (layer, file) in files {
        let text = match std::fs::read_to_string(&file) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                loaded.problems.push(Problem {
                    origin: Origin::file(layer, &file, None),
                    key: String::new(),
                    message: format!("cannot be read: {e}"),
                });
                continue;
            }
        };
        loaded.files_read.push((layer, file.clone()));
        let before = loaded.entries.len();
        if layer == Layer::Grants {
            store::grant_entries(&file, &text, &mut loaded.entries, &mut loaded.problems);
            continue;
        }
        if file.file_name().is_some_and(|n| n == ".mcp.json") {
            claude::mcp_json_entries(layer, &file, &text, &mut loaded.entries, &mut loaded.problems);
        } else if layer.is_claude() {
            claude::entries(layer, &file, &text, &mut loaded.entries, &mut loaded.problems);
        } else {
            toml_file::entries(layer, &file, &text, &mut loaded.entries, &mut loaded.problems);
        }
        debug_assert!(loaded.entries[before..].iter().all(|e| e.origin.layer == layer));
    }
}

/// Checks an entry against its key's type (unknown keys were reported when read).
fn check_entry(entry: &Entry, problems: &mut Vec<Problem>) {
    let Some(def) = schema::find(&entry.key) else { return };
    if let Err(e) = schema::check(def, &entry.value) {
        problems.push(Problem { origin: entry.origin.clone(), key: entry.key.clone(), message: e.to_string() });
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
