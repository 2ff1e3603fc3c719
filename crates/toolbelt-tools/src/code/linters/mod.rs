//! Linters for the `Lint` tool: which ones a project has ([`plan`]), running them as Bash
//! runs commands ([`run`]), and reading what they print into one shape ([`formats`]).
//!
//! **Which linters.** The defaults, each used when the project shows it uses the language
//! and the program is there: `cargo clippy` (a `Cargo.toml`), `ruff` (Python files; the
//! project's own `.venv/bin/ruff` first), `eslint` (an ESLint config; the project's
//! `node_modules/.bin/eslint` first) and `shellcheck` (shell scripts). Then any configured
//! under `[lint.linters.NAME]`: a command, the format it prints, the files it lints, and the
//! files that mark the folder it runs in; one named like a default replaces it.
//!
//! **What runs is what was judged.** A call's commands are planned when the runtime asks
//! what the call touches: every command line is declared there, so the policy judges the
//! very lines that run (and a person approving sees them). The plan goes from the judgement
//! to the call with the call's input (the tool's `PlannedTool::Plan`) rather than being made
//! again when it runs, so a tree changed in between cannot change what runs.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

pub mod formats;
pub mod run;
mod survey;

pub use formats::{Finding, Format, Severity};
pub use survey::Survey;

use crate::language_servers::config::{find_program, string_list};

/// A linter from the settings: `[lint.linters.NAME]`.
#[derive(Debug, Clone, PartialEq)]
pub struct LinterSpec {
    /// Its name (a default's name replaces that default).
    pub name: String,
    /// The command line, run with `bash -c`; `{path}` becomes the path linted, quoted,
    /// relative to the folder it runs in (`.` for the folder itself).
    pub command: String,
    /// What it prints.
    pub format: Format,
    /// The file extensions it lints (lower case, no dot); empty: it runs for any path.
    pub extensions: Vec<String>,
    /// Files that mark the folder it runs in (the nearest holding one, at or above the path);
    /// without one, it runs in the working directory.
    pub root_markers: Vec<String>,
    /// Where it was defined, for messages.
    pub origin: String,
}

/// The `Lint` tool's settings, as the front end resolved them (`[lint]`).
#[derive(Debug, Clone)]
pub struct LintSettings {
    /// Whether the default linters are looked for.
    pub use_defaults: bool,
    /// Configured linters, in name order.
    pub linters: Vec<LinterSpec>,
    /// How long one call may lint.
    pub timeout: Duration,
}

impl Default for LintSettings {
    fn default() -> Self {
        Self { use_defaults: true, linters: Vec::new(), timeout: Duration::from_secs(600) }
    }
}

/// A configured linter from its settings table (`command`, `format`, `extensions`,
/// `root_markers`), or what is wrong with it.
pub fn spec_from_json(name: &str, entry: &Value, origin: &str) -> Result<LinterSpec, String> {
    let command = entry.get("command").and_then(Value::as_str).map(str::trim).filter(|c| !c.is_empty());
    let command = command.ok_or("`command` is missing (the command line to run)")?;
    let format = match entry.get("format").and_then(Value::as_str) {
        Some(f) => Format::parse(f).ok_or_else(|| format!("`format` \"{f}\" is not one of {}", Format::NAMES))?,
        None => return Err(format!("`format` is missing (what it prints: {})", Format::NAMES)),
    };
    let strings = |key: &str| string_list(entry.get(key), key);
    let extensions =
        strings("extensions")?.into_iter().map(|e| e.trim_start_matches('.').to_ascii_lowercase()).collect();
    Ok(LinterSpec {
        name: name.to_owned(),
        command: command.to_owned(),
        format,
        extensions,
        root_markers: strings("root_markers")?,
        origin: origin.to_owned(),
    })
}

/// One linter run a call will make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    /// The linter's name.
    pub linter: String,
    /// The linter's command.
    pub command: String,
    /// The folder it runs in.
    pub cwd: PathBuf,
    /// The whole line, from the session's working directory: `cd DIR && COMMAND` when the
    /// linter runs in another folder. What is declared, shown and run.
    pub line: String,
    /// What it prints.
    pub format: Format,
    /// Whether it only reads (then the call may run beside others).
    pub read_only: bool,
}

/// A linter that applies to the path but cannot run, and why (not installed: how to get it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    /// The linter's name.
    pub linter: String,
    /// Why, and what to do.
    pub why: String,
}

/// What a call will run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// The runs, in order.
    pub runs: Vec<Planned>,
    /// Linters that would apply but cannot run.
    pub unavailable: Vec<Unavailable>,
    /// What the model should know about what was left out.
    pub notes: Vec<String>,
}

/// Where a lint call looks: the path and the roots it lies in.
#[derive(Debug, Clone)]
pub struct Target<'a> {
    /// The file or folder to lint (absolute).
    pub path: &'a Path,
    /// The session's workspace roots: no marker is looked for above the root holding `path`.
    pub roots: &'a [PathBuf],
    /// The `PATH` programs are looked up on.
    pub path_var: Option<&'a std::ffi::OsStr>,
    /// The session's working directory, where every line starts.
    pub cwd: &'a Path,
}

impl Target<'_> {
    /// The folder of the path (itself, or the folder holding the file).
    fn dir(&self) -> &Path {
        if self.path.is_dir() { self.path } else { self.path.parent().unwrap_or(self.path) }
    }

    /// Where a linter runs unless the project marks a folder for it: the working directory
    /// when the path is inside it (paths in the lines and reports read as the user types
    /// them), else the root holding the path.
    fn home(&self) -> &Path {
        if self.path.starts_with(self.cwd) { self.cwd } else { self.root() }
    }

    /// The root holding the path (the longest that does), or the path's folder.
    fn root(&self) -> &Path {
        self.roots
            .iter()
            .filter(|r| self.path.starts_with(r))
            .max_by_key(|r| r.as_os_str().len())
            .map_or_else(|| self.dir(), |r| r.as_path())
    }

    /// The nearest folder at or above the path (up to its root) holding one of `names`.
    fn nearest(&self, names: &[&str]) -> Option<PathBuf> {
        let root = self.root();
        self.dir()
            .ancestors()
            .take_while(|d| d.starts_with(root))
            .find(|d| names.iter().any(|n| d.join(n).is_file()))
            .map(Path::to_path_buf)
    }

    /// `program` from the nearest of `local` (paths below a folder, `node_modules/.bin/x`)
    /// at or above `from` up to the root (relative to `from` when below it: it has a `/`, so
    /// the shell never looks it up on `PATH`), else from `PATH`.
    fn program(&self, from: &Path, local: &[&str], program: &str) -> Option<String> {
        let root = self.root();
        for dir in from.ancestors().take_while(|d| d.starts_with(root)) {
            for rel in local {
                let candidate = dir.join(rel);
                if find_program(&candidate.to_string_lossy(), None).is_some() {
                    // Relative to the folder the linter runs in when it lies below it.
                    let shown = candidate.strip_prefix(from).unwrap_or(&candidate);
                    return Some(shown.to_string_lossy().into_owned());
                }
            }
        }
        find_program(program, self.path_var).map(|_| program.to_owned())
    }

    /// The path relative to `cwd`, quoted for bash (`.` when it is `cwd`).
    fn arg(&self, cwd: &Path) -> String {
        match self.path.strip_prefix(cwd) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
            Ok(rel) => path_word(rel),
            Err(_) => path_word(self.path),
        }
    }
}

/// A path as one bash word that no program reads as an option: a relative one starting with
/// `-` (a file named `--fix`) is written `./--fix`.
fn path_word(path: &Path) -> String {
    let text = path.to_string_lossy();
    if text.starts_with('-') { quote(&format!("./{text}")) } else { quote(&text) }
}

/// `text` as one bash word: bare when it is plain, else in single quotes.
pub fn quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '+' | ',' | '@'))
        && !text.starts_with('-');
    if plain { text.to_owned() } else { format!("'{}'", text.replace('\'', r"'\''")) }
}

/// The default linters' names, in the order they run.
pub const DEFAULTS: &[&str] = &["clippy", "ruff", "eslint", "shellcheck"];

/// What linting `target` will run: the defaults the survey shows apply, and the configured
/// linters; only `only` when given (an error naming the linters there are when it is none of
/// them).
pub fn plan(settings: &LintSettings, target: &Target<'_>, survey: &Survey, only: Option<&str>) -> Result<Plan, String> {
    if let Some(name) = only {
        let known = settings.linters.iter().any(|l| l.name == name) || DEFAULTS.contains(&name);
        if !known {
            let mut names: Vec<&str> = DEFAULTS.to_vec();
            names.extend(settings.linters.iter().map(|l| l.name.as_str()));
            names.sort_unstable();
            names.dedup();
            return Err(format!("there is no linter `{name}`; the linters are {}", names.join(", ")));
        }
    }
    let wanted = |name: &str| only.is_none_or(|o| o == name);
    let configured = |name: &str| settings.linters.iter().any(|l| l.name == name);
    let mut plan = Plan::default();
    if settings.use_defaults || only.is_some() {
        for name in DEFAULTS.iter().copied().filter(|n| wanted(n) && !configured(n)) {
            default_linter(name, target, survey, &mut plan);
        }
    }
    for spec in settings.linters.iter().filter(|l| wanted(&l.name)) {
        if spec.extensions.is_empty() || spec.extensions.iter().any(|e| survey.has_extension(e)) || only.is_some() {
            // Where its user would type it: the working directory (or the root holding the
            // path outside it), unless its markers say otherwise.
            let names: Vec<&str> = spec.root_markers.iter().map(String::as_str).collect();
            let cwd = target.nearest(&names).unwrap_or_else(|| target.home().to_path_buf());
            let command = spec.command.replace("{path}", &target.arg(&cwd));
            plan.runs.push(Planned {
                linter: spec.name.clone(),
                command,
                cwd,
                format: spec.format,
                read_only: false,
                line: String::new(),
            });
        }
    }
    for run in &mut plan.runs {
        run.line = match run.cwd.strip_prefix(target.cwd) {
            Ok(rel) if rel.as_os_str().is_empty() => run.command.clone(),
            Ok(rel) => format!("cd {} && {}", path_word(rel), run.command),
            Err(_) => format!("cd {} && {}", path_word(&run.cwd), run.command),
        };
    }
    if survey.scripts_left_out > 0 {
        plan.notes.push(format!(
            "ShellCheck was given the first {} shell scripts; {} more were left out (lint a smaller `path`).",
            survey::MAX_SCRIPTS,
            survey.scripts_left_out
        ));
    }
    if survey.stopped {
        plan.notes.push("The folder holds too many files to look at all of them; lint a smaller `path`.".into());
    }
    Ok(plan)
}

/// Adds default linter `name`'s runs (or why it cannot run) when the survey shows it applies.
fn default_linter(name: &str, target: &Target<'_>, survey: &Survey, plan: &mut Plan) {
    let mut unavailable = |why: &str| plan.unavailable.push(Unavailable { linter: name.into(), why: why.into() });
    match name {
        "clippy" => {
            let dirs = match target.nearest(&["Cargo.toml"]) {
                Some(dir) => vec![dir],
                None => survey.topmost("Cargo.toml"),
            };
            if dirs.is_empty() {
                return;
            }
            if find_program("cargo", target.path_var).is_none() {
                return unavailable(
                    "cargo is not on PATH (install Rust with rustup, then `rustup component add clippy`)",
                );
            }
            for cwd in dirs {
                plan.runs.push(Planned {
                    linter: name.into(),
                    command: "cargo clippy --all-targets --message-format=json".into(),
                    cwd,
                    format: Format::Cargo,
                    read_only: false,
                    line: String::new(),
                });
            }
        }
        "ruff" => {
            if !survey.has_extension("py") && !survey.has_extension("pyi") {
                return;
            }
            let cwd = target
                .nearest(&["pyproject.toml", "ruff.toml", ".ruff.toml"])
                .unwrap_or_else(|| target.home().to_path_buf());
            let Some(program) = target.program(&cwd, &[".venv/bin/ruff", "venv/bin/ruff"], "ruff") else {
                return unavailable("ruff is not installed (`pip install ruff`, or `uv tool install ruff`)");
            };
            plan.runs.push(Planned {
                linter: name.into(),
                // No cache written into the project; fixes never applied, whatever its config says.
                command: format!(
                    "{} check --no-cache --no-fix --no-fix-only --output-format=json --force-exclude -- {}",
                    quote(&program),
                    target.arg(&cwd)
                ),
                read_only: program == "ruff",
                cwd,
                format: Format::Ruff,
                line: String::new(),
            });
        }
        "eslint" => {
            let dirs = match target.nearest(survey::ESLINT_CONFIGS) {
                Some(dir) => vec![dir],
                None => survey.topmost_of(survey::ESLINT_CONFIGS),
            };
            if dirs.is_empty() || !survey::SCRIPT_EXTENSIONS.iter().any(|e| survey.has_extension(e)) {
                return;
            }
            for cwd in dirs {
                let Some(program) = target.program(&cwd, &["node_modules/.bin/eslint"], "eslint") else {
                    return unavailable(
                        "the project has an ESLint config but eslint is not installed (`npm install --save-dev eslint`)",
                    );
                };
                let arg = if target.path.starts_with(&cwd) { target.arg(&cwd) } else { ".".to_owned() };
                plan.runs.push(Planned {
                    linter: name.into(),
                    command: format!("{} -f json --no-color -- {arg}", quote(&program)),
                    cwd,
                    format: Format::Eslint,
                    read_only: false,
                    line: String::new(),
                });
            }
        }
        "shellcheck" => {
            if survey.shell_scripts.is_empty() {
                return;
            }
            if find_program("shellcheck", target.path_var).is_none() {
                return unavailable(
                    "shellcheck is not installed (`apt install shellcheck`, `brew install shellcheck`)",
                );
            }
            let cwd = target.home().to_path_buf();
            let files: Vec<String> = survey
                .shell_scripts
                .iter()
                .map(|f| {
                    f.strip_prefix(&cwd).map_or_else(|_| quote(&f.to_string_lossy()), |r| quote(&r.to_string_lossy()))
                })
                .collect();
            plan.runs.push(Planned {
                linter: name.into(),
                command: format!("shellcheck -f json1 -- {}", files.join(" ")),
                cwd,
                format: Format::Shellcheck,
                read_only: true,
                line: String::new(),
            });
        }
        _ => {}
    }
}

/// The longest `lint.timeout` the settings take (a Lint call's limit is `lint.timeout` itself,
/// honoured past `runtime.max_timeout`).
pub const MAX_TIMEOUT: Duration = Duration::from_secs(3600);

#[cfg(test)]
mod tests;
