//! `Lint`: runs the project's linters on a file or folder and lists what they found, in one
//! shape whatever the linter: `path:line:col severity code message`, grouped by file.
//!
//! The linters are the ones the project uses (`cargo clippy`, `ruff`, `eslint`,
//! `shellcheck`, or those configured under `[lint.linters]`, see
//! [`crate::code::linters`]), each asked for its machine-readable report and run as Bash
//! runs a command: under the session's sandbox, with its environment, time limit and
//! process-tree kill. The command lines are declared, so the policy judges them as it judges
//! Bash's: `ruff` and `shellcheck` only read and run without asking; `cargo clippy` (build
//! scripts, proc macros) and `eslint` (a JavaScript config) run the project's code and ask in
//! the default mode unless a rule allows `Lint`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use futures_util::future::join_all;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{
    Access, Annotations, Category, Content, PermissionClass, PlannedTool, Render, SideEffects, ToolContext, ToolError,
    ToolSpec,
};

use crate::code::linters::run::{Ran, Under, run};
use crate::code::linters::{self, Finding, LintSettings, Plan, Severity, Survey, Target};
use crate::fs::roots::absolute;
use crate::language_servers::after_change::shown;

/// Most findings listed in all, and for one file.
const MAX_LISTED: usize = 200;
const MAX_PER_FILE: usize = 50;

/// Input of `Lint`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LintInput {
    /// The file or folder to lint (absolute, or relative to the working directory); the
    /// working directory when absent. Only findings inside it are listed.
    pub path: Option<String>,
    /// Run only this linter: `clippy`, `ruff`, `eslint`, `shellcheck`, or one configured
    /// under `[lint.linters]`. Without it, every linter the project uses runs.
    pub linter: Option<String>,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LintFinding {
    /// The file, relative to the working directory when inside it.
    pub path: String,
    /// 1-based line (0: the linter gave none).
    pub line: u32,
    /// 1-based column (0: the linter gave none).
    pub column: u32,
    /// `error`, `warning` or `info`.
    pub severity: Severity,
    /// The rule or error code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// What is wrong.
    pub message: String,
    /// The linter that found it.
    pub linter: String,
    /// Whether the linter can fix it itself (`ruff check --fix`, `cargo clippy --fix`,
    /// `eslint --fix`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fixable: bool,
}

/// How one linter went.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LinterReport {
    /// Its name.
    pub name: String,
    /// `ok`, `failed` (no report: `message` says why) or `unavailable` (it applies but is
    /// not installed: `message` says how to get it).
    pub status: LinterStatus,
    /// The command line it ran, from the working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Its findings inside the path.
    pub findings: usize,
    /// Its exit code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Why it failed, or how to install it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// How long it ran, in milliseconds.
    pub duration_ms: u64,
}

/// How a linter's run went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LinterStatus {
    /// It ran and gave its report.
    Ok,
    /// It gave no report (`message` says why).
    Failed,
    /// It applies but is not installed (`message` says how to get it).
    Unavailable,
}

impl LinterStatus {
    /// Every status.
    pub const ALL: [LinterStatus; 3] = [LinterStatus::Ok, LinterStatus::Failed, LinterStatus::Unavailable];

    /// Its name: `ok`, `failed`, `unavailable`.
    pub fn as_str(self) -> &'static str {
        match self {
            LinterStatus::Ok => "ok",
            LinterStatus::Failed => "failed",
            LinterStatus::Unavailable => "unavailable",
        }
    }
}

/// What `Lint` found.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LintOutput {
    /// The path linted.
    pub path: String,
    /// Each linter that applied.
    pub linters: Vec<LinterReport>,
    /// The findings listed, by file, line and column.
    pub findings: Vec<LintFinding>,
    /// Findings in all (listed or not).
    pub total: usize,
    /// Errors in all.
    pub errors: usize,
    /// Warnings in all.
    pub warnings: usize,
    /// What was left out, and what else to know.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Render for LintOutput {
    fn render(&self) -> Vec<Content> {
        let mut text = String::new();
        let plural = |n: usize, one: &str| if n == 1 { format!("{n} {one}") } else { format!("{n} {one}s") };
        let others = self.total - self.errors - self.warnings;
        if self.total == 0 {
            text.push_str(&format!("No findings in {}.", self.path));
        } else {
            text.push_str(&format!(
                "{} in {}: {}, {}{}.",
                plural(self.total, "finding"),
                self.path,
                plural(self.errors, "error"),
                plural(self.warnings, "warning"),
                if others > 0 { format!(", {others} info") } else { String::new() }
            ));
        }
        for linter in &self.linters {
            text.push_str(&format!("\n- {}: ", linter.name));
            match linter.status.as_str() {
                "ok" => text.push_str(&plural(linter.findings, "finding")),
                status => text.push_str(status),
            }
            if let Some(command) = &linter.command {
                text.push_str(&format!(" (`{command}`)"));
            }
            if let Some(message) = &linter.message {
                text.push_str(&format!("\n  {}", message.replace('\n', "\n  ")));
            }
        }
        let mut file = None;
        for f in &self.findings {
            if file != Some(&f.path) {
                file = Some(&f.path);
                text.push('\n');
            }
            // A linter that gives no column (or line) leaves it out, as compilers print it.
            let at = match (f.line, f.column) {
                (0, _) => f.path.clone(),
                (line, 0) => format!("{}:{line}", f.path),
                (line, column) => format!("{}:{line}:{column}", f.path),
            };
            text.push_str(&format!("\n{at} {}", f.severity));
            if let Some(code) = &f.code {
                text.push_str(&format!(" {code}"));
            }
            text.push_str(&format!(" {}", f.message.replace('\n', " ")));
            if f.fixable {
                text.push_str(" [fixable]");
            }
        }
        for note in &self.notes {
            text.push_str(&format!("\n\n{note}"));
        }
        vec![Content::text(text)]
    }
}

/// The `Lint` tool. Its plan is the command lines the runtime judged, which the call runs.
#[derive(Debug, Default)]
pub struct Lint;

/// What a `Lint` call was judged to run: the linters' command lines for this path, from this
/// folder, under this sandbox and environment.
#[derive(Debug)]
pub struct LintPlan {
    /// The path linted (absolute).
    target: PathBuf,
    /// The working directory the lines start from.
    start: PathBuf,
    linters: Plan,
    under: Under,
}

const DESCRIPTION: &str = "Runs the project's linters on a file or folder and lists their findings as \
    `path:line:col severity code message`, grouped by file: `cargo clippy` (Rust), `ruff` (Python), `eslint` \
    (JavaScript/TypeScript, with an ESLint config), `shellcheck` (shell scripts), and any configured. Each runs \
    under the sandbox like a Bash command; findings marked [fixable] can be fixed by the linter itself. Use \
    `linter` to run one, `path` to narrow. Type errors in a file you just edited show in the edit's result \
    already (and with Diagnostics).";

impl PlannedTool for Lint {
    type Input = LintInput;
    type Output = LintOutput;
    type Plan = LintPlan;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("Lint", DESCRIPTION)
            .title("Run linters")
            .aliases(["lint", "run_linter"])
            .param_alias("file_path", "path")
            .category(Category::Code)
            .tags(["lint", "clippy", "ruff", "eslint", "shellcheck"])
            .permission(PermissionClass::External)
            .side_effects(SideEffects::Files)
            .annotations(Annotations { read_only: false, destructive: false, idempotent: true, open_world: false })
            .streams()
            .search_hint("lint linter clippy ruff eslint shellcheck style warnings problems check code quality")
            .time_limit_setting("`lint.timeout`")
    }

    fn access(&self, input: &LintInput, cx: &ToolContext) -> Result<(Access, LintPlan), ToolError> {
        let target = target_path(cx, input)?;
        let linters = make_plan(cx, input, &target)?;
        let access = declare(&linters, &target);
        let read_only = linters.runs.iter().all(|r| r.read_only);
        let (access, confining) = crate::process::confine::declare(cx, access, read_only)?;
        let under = Under { confining, shell: crate::process::config::BashConfig::in_effect(cx) };
        Ok((access, LintPlan { target, start: cx.cwd(), linters, under }))
    }

    /// `lint.timeout`, the one limit of a Lint call, with a margin: the linters stop at it
    /// and the call still answers, saying what to raise.
    fn timeout(&self, _input: &LintInput, cx: &ToolContext) -> Option<toolbelt_core::TimeLimit> {
        Some(toolbelt_core::TimeLimit::Set(settings(cx).timeout + toolbelt_core::OWN_LIMIT_MARGIN))
    }

    async fn call(&self, input: LintInput, plan: LintPlan, cx: ToolContext) -> Result<LintOutput, ToolError> {
        let LintPlan { target, start, linters: plan, under } = plan;
        if plan.runs.is_empty() {
            return Err(nothing_to_run(&cx, &input, &target, &plan));
        }
        let settings = settings(&cx);
        let limit = settings.timeout.min(cx.limits().timeout);
        let runs = join_all(plan.runs.iter().map(|planned| run(&cx, planned, &start, limit, &under))).await;
        let mut linters = Vec::new();
        let mut findings = Vec::new();
        let mut notes = plan.notes.clone();
        let real_target = std::fs::canonicalize(&target).unwrap_or_else(|_| target.clone());
        for (planned, ran) in plan.runs.iter().zip(runs) {
            // A linter that could not start is that linter's failure; the others' reports stand.
            let Ran { findings: found, exit_code, failure, duration, notices } = match ran {
                Ok(ran) => ran,
                Err(ToolError::Cancelled) => return Err(ToolError::Cancelled),
                Err(e) => Ran {
                    findings: Vec::new(),
                    exit_code: None,
                    failure: Some(e.to_string()),
                    duration: std::time::Duration::ZERO,
                    notices: Vec::new(),
                },
            };
            notes.extend(notices);
            let inside: Vec<Finding> = found.into_iter().filter(|f| inside(&cx, &target, &real_target, f)).collect();
            linters.push(LinterReport {
                name: planned.linter.clone(),
                status: if failure.is_some() { LinterStatus::Failed } else { LinterStatus::Ok },
                command: Some(planned.line.clone()),
                findings: inside.len(),
                exit_code,
                message: failure,
                duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
            });
            findings.extend(inside.into_iter().map(|f| (planned.linter.clone(), f)));
        }
        for unavailable in &plan.unavailable {
            linters.push(LinterReport {
                name: unavailable.linter.clone(),
                status: LinterStatus::Unavailable,
                command: None,
                findings: 0,
                exit_code: None,
                message: Some(unavailable.why.clone()),
                duration_ms: 0,
            });
        }
        if findings.is_empty() && linters.iter().all(|l| l.status != LinterStatus::Ok) {
            let why: Vec<String> =
                linters.iter().map(|l| format!("{}: {}", l.name, l.message.as_deref().unwrap_or(""))).collect();
            return Err(ToolError::failed(format!("No linter gave a report.\n{}", why.join("\n"))));
        }
        Ok(listing(&cx, &target, linters, findings, notes))
    }
}

/// The settings in force (the defaults when the front end set none).
fn settings(cx: &ToolContext) -> LintSettings {
    cx.service::<LintSettings>().map(|s| (*s).clone()).unwrap_or_default()
}

/// The path to lint, absolute; it must exist.
fn target_path(cx: &ToolContext, input: &LintInput) -> Result<PathBuf, ToolError> {
    let path = input.path.as_deref().map_or_else(|| cx.cwd(), |p| absolute(cx, p));
    if !path.exists() {
        return Err(ToolError::failed(format!("{} does not exist", path.display())));
    }
    Ok(path)
}

/// What linting `target` will run.
fn make_plan(cx: &ToolContext, input: &LintInput, target: &std::path::Path) -> Result<Plan, ToolError> {
    let settings = settings(cx);
    let survey = Survey::of(target, cx)?;
    let path_var = std::env::var_os("PATH");
    let roots = cx.roots();
    let cwd = cx.cwd();
    let target = Target { path: target, roots: &roots, path_var: path_var.as_deref(), cwd: &cwd };
    linters::plan(&settings, &target, &survey, input.linter.as_deref()).map_err(ToolError::failed)
}

/// What a plan touches: the path read, each line run.
fn declare(plan: &Plan, target: &std::path::Path) -> Access {
    let read_only = plan.runs.iter().all(|r| r.read_only);
    let access = if read_only { Access::shared() } else { Access::exclusive() };
    plan.runs.iter().fold(access.reads(target.to_path_buf()), |a, r| a.executes(r.line.clone()))
}

/// Whether a finding lies inside the path linted (as given, or as it really is) and may be
/// shown to this call.
fn inside(cx: &ToolContext, target: &std::path::Path, real_target: &std::path::Path, finding: &Finding) -> bool {
    let path = std::path::Path::new(&finding.path);
    (path.starts_with(target) || path.starts_with(real_target)) && !cx.is_hidden(path)
}

/// The error when nothing applies: what was looked for, and why each found one cannot run.
fn nothing_to_run(cx: &ToolContext, input: &LintInput, target: &std::path::Path, plan: &Plan) -> ToolError {
    let shown = shown(cx, target);
    if !plan.unavailable.is_empty() {
        let why: Vec<String> = plan.unavailable.iter().map(|u| format!("- {}: {}", u.linter, u.why)).collect();
        return ToolError::failed(format!("No linter can run on {shown}:\n{}", why.join("\n")));
    }
    match &input.linter {
        Some(name) => ToolError::failed(format!(
            "{name} does not apply to {shown} (it lints other files, or the project has no config for it)"
        )),
        None => ToolError::failed(format!(
            "No linter applies to {shown}. Looked for: clippy (a Cargo.toml), ruff (Python files), eslint (an ESLint \
             config and JavaScript or TypeScript files), shellcheck (shell scripts). Configure another under \
             [lint.linters.NAME] (command, format, extensions), or run one with Bash."
        )),
    }
}

/// The output: findings deduplicated (clippy reports a warning once per target), sorted,
/// capped in all and per file.
fn listing(
    cx: &ToolContext,
    target: &std::path::Path,
    mut linters: Vec<LinterReport>,
    found: Vec<(String, Finding)>,
    mut notes: Vec<String>,
) -> LintOutput {
    let mut all: Vec<LintFinding> = found
        .into_iter()
        .map(|(linter, f)| LintFinding {
            path: shown(cx, std::path::Path::new(&f.path)),
            line: f.line,
            column: f.column,
            severity: f.severity,
            code: f.code,
            message: f.message.trim().to_owned(),
            linter,
            fixable: f.fixable,
        })
        .collect();
    all.sort_by(|a, b| {
        (&a.path, a.line, a.column, &a.code, &a.message).cmp(&(&b.path, b.line, b.column, &b.code, &b.message))
    });
    all.dedup_by(|a, b| {
        (&a.path, a.line, a.column, &a.code, &a.message) == (&b.path, b.line, b.column, &b.code, &b.message)
    });
    let mut per_linter: BTreeMap<String, usize> = BTreeMap::new();
    for f in &all {
        *per_linter.entry(f.linter.clone()).or_insert(0) += 1;
    }
    let count = |s: Severity| all.iter().filter(|f| f.severity == s).count();
    let (errors, warnings, total) = (count(Severity::Error), count(Severity::Warning), all.len());
    let mut per_file: BTreeMap<String, usize> = BTreeMap::new();
    let mut listed = Vec::new();
    let mut cut_files: BTreeMap<String, usize> = BTreeMap::new();
    for f in all {
        let n = per_file.entry(f.path.clone()).or_insert(0);
        *n += 1;
        if *n > MAX_PER_FILE || listed.len() >= MAX_LISTED {
            *cut_files.entry(f.path.clone()).or_insert(0) += 1;
            continue;
        }
        listed.push(f);
    }
    if !cut_files.is_empty() {
        let left: usize = cut_files.values().sum();
        notes.push(format!(
            "{left} more finding{} not listed (in {} file{}); lint a smaller `path`, or one `linter`.",
            if left == 1 { "" } else { "s" },
            cut_files.len(),
            if cut_files.len() == 1 { "" } else { "s" }
        ));
    }
    let mut fixers: Vec<&str> = listed.iter().filter(|f| f.fixable).filter_map(|f| fixer(&f.linter)).collect();
    fixers.sort_unstable();
    fixers.dedup();
    if !fixers.is_empty() {
        notes.push(format!(
            "Findings marked [fixable] come with a fix the linter can apply itself ({}); or edit by hand.",
            fixers.join(", ")
        ));
    }
    for linter in &mut linters {
        if linter.status == LinterStatus::Ok {
            linter.findings = per_linter.get(&linter.name).copied().unwrap_or(0);
        }
    }
    LintOutput { path: shown(cx, target), linters, findings: listed, total, errors, warnings, notes }
}

/// How a default linter applies its own fixes.
fn fixer(linter: &str) -> Option<&'static str> {
    match linter {
        "clippy" => Some("`cargo clippy --fix --allow-dirty`"),
        "ruff" => Some("`ruff check --fix`"),
        "eslint" => Some("`eslint --fix`"),
        "shellcheck" => Some("`shellcheck -f diff FILE | git apply`"),
        _ => None,
    }
}
