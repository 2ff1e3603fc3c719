//! `Diagnostics`: the errors and warnings language servers report. With a file, that file's
//! (its server is started if needed, and the file sent as it is on disk); with a folder or
//! nothing, a per-file summary of what the running servers have reported.

use std::path::PathBuf;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{
    Access, Annotations, Category, Content, PermissionClass, Render, SideEffects, Tool, ToolContext, ToolError,
    ToolSpec,
};

use crate::fs::roots::absolute;
use crate::language_servers::after_change::{shown, stamp};
use crate::language_servers::diagnostics::{Level, code_text, level};
use crate::language_servers::position::from_lsp;
use crate::language_servers::{LanguageServers, read_text};

/// Most diagnostics listed for one file.
const MAX_LISTED: usize = 200;

/// The longest a file's first diagnostics are waited for when its server just opened it.
const FIRST_WAIT: Duration = Duration::from_secs(20);

/// Input of `Diagnostics`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiagnosticsInput {
    /// A file (its diagnostics), or a folder (a summary of the files below it). Without it,
    /// a summary of every file the running language servers reported on.
    pub path: Option<String>,
}

/// One diagnostic.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DiagnosticItem {
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// `error`, `warning`, `info` or `hint`.
    pub severity: Level,
    /// Its code, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// What reported it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The message.
    pub message: String,
}

/// One file's counts.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FileSummary {
    /// The file.
    pub path: String,
    /// Errors.
    pub errors: usize,
    /// Warnings.
    pub warnings: usize,
}

/// What `Diagnostics` found.
#[derive(Debug, Serialize, JsonSchema)]
pub struct DiagnosticsOutput {
    /// The file asked about (file mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The file's diagnostics, by position (file mode).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<DiagnosticItem>,
    /// Files with errors or warnings (summary mode).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileSummary>,
    /// Errors in all.
    pub errors: usize,
    /// Warnings in all.
    pub warnings: usize,
    /// The servers asked.
    pub servers: Vec<String>,
    /// Why the answer may be incomplete.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Render for DiagnosticsOutput {
    fn render(&self) -> Vec<Content> {
        let mut text = String::new();
        let counts = format!(
            "{} error{}, {} warning{}",
            self.errors,
            if self.errors == 1 { "" } else { "s" },
            self.warnings,
            if self.warnings == 1 { "" } else { "s" }
        );
        match &self.file {
            Some(file) => {
                let others = self.diagnostics.len().saturating_sub(self.errors + self.warnings);
                text.push_str(&format!("{file}: {counts}"));
                if others > 0 {
                    text.push_str(&format!(", {others} other"));
                }
                text.push_str(&format!(" ({})", self.servers.join(", ")));
                for d in &self.diagnostics {
                    text.push_str(&format!("\n{file}:{}:{}: {}", d.line, d.column, d.severity));
                    if let Some(code) = &d.code {
                        text.push_str(&format!("[{code}]"));
                    }
                    text.push_str(&format!(": {}", d.message.replace('\n', " ")));
                    if let Some(source) = &d.source {
                        text.push_str(&format!(" ({source})"));
                    }
                }
            }
            None if self.servers.is_empty() => text.push_str(
                "No language server is running yet. Give Diagnostics a file's path to start the server for its \
                 language and see that file's errors.",
            ),
            None => {
                text.push_str(&format!(
                    "{counts} in {} file{} ({})",
                    self.files.len(),
                    if self.files.len() == 1 { "" } else { "s" },
                    self.servers.join(", ")
                ));
                for f in &self.files {
                    text.push_str(&format!("\n{}: {} errors, {} warnings", f.path, f.errors, f.warnings));
                }
            }
        }
        if let Some(note) = &self.note {
            text.push_str(&format!("\n\n{note}"));
        }
        vec![Content::text(text)]
    }
}

/// The `Diagnostics` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct Diagnostics;

const DESCRIPTION: &str = "Errors and warnings from the language servers (type errors, unresolved names, syntax). \
    With a file's `path`: that file's diagnostics, `path:line:col: severity[code]: message` (its language server \
    starts if needed). With a folder, or nothing: how many errors and warnings each file has, from the servers \
    already running. Edits already show the errors they introduce; use this to check a file or see what is left.";

impl Tool for Diagnostics {
    type Input = DiagnosticsInput;
    type Output = DiagnosticsOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("Diagnostics", DESCRIPTION)
            .title("Diagnostics")
            .aliases(["diagnostics", "get_diagnostics"])
            .param_alias("file_path", "path")
            .category(Category::Code)
            .tags(["lsp", "errors"])
            .permission(PermissionClass::Read)
            .side_effects(SideEffects::None)
            .annotations(Annotations { read_only: true, destructive: false, idempotent: true, open_world: false })
            .search_hint("errors warnings type check problems compile diagnostics language server")
    }

    fn access(&self, input: &DiagnosticsInput, cx: &ToolContext) -> Result<Access, ToolError> {
        let target = input.path.as_deref().map_or_else(|| cx.cwd(), |p| absolute(cx, p));
        crate::process::confine::declare(cx, Access::shared().reads(target), false).map(|(access, _)| access)
    }

    async fn call(&self, input: DiagnosticsInput, cx: ToolContext) -> Result<DiagnosticsOutput, ToolError> {
        let servers = cx.service::<LanguageServers>().ok_or_else(|| {
            ToolError::failed("language servers are not set up in this runtime (no LanguageServers service)")
        })?;
        let target = input.path.as_deref().map(|p| absolute(&cx, p));
        match target {
            Some(path) if path.is_file() => {
                let cancel = cx.cancellation().clone();
                tokio::select! {
                    out = file(&cx, &servers, path) => out,
                    () = cancel.cancelled() => Err(ToolError::Cancelled),
                }
            }
            Some(path) if !path.exists() => Err(ToolError::failed(format!("{} does not exist", path.display()))),
            other => Ok(summary(&cx, &servers, other)),
        }
    }
}

/// One file's diagnostics, from its server (started if needed).
async fn file(cx: &ToolContext, servers: &LanguageServers, path: PathBuf) -> Result<DiagnosticsOutput, ToolError> {
    let real = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
    let text = crate::fs::roots::OpenRoots::open_for_reading(cx)
        .ok()
        .and_then(|roots| read_text(&roots, &path))
        .ok_or_else(|| ToolError::failed(format!("{} cannot be read as text", path.display())))?;
    let server = servers.server_for(cx, &real).await?;
    let generation = server.diagnostics.generation();
    let sent = server.sync(&real, &text, stamp(&real)).await;
    let mut note = None;
    let published = match (sent, server.diagnostics.get(&real)) {
        (None, Some(p)) => Some(p),
        (version, _) => {
            let wait = servers.settings().diagnostics_wait.max(FIRST_WAIT);
            let got = server.diagnostics.wait_newer(&real, generation, version, wait).await;
            if got.is_none() {
                note = Some(format!(
                    "{} published no diagnostics for this file within {} s; it may still be loading the project: \
                     retry in a moment.",
                    server.spec.name,
                    wait.as_secs()
                ));
            }
            got
        }
    };
    let mut items: Vec<DiagnosticItem> = published
        .map(|p| p.items)
        .unwrap_or_default()
        .iter()
        .map(|d| {
            let (line, column) = from_lsp(Some(&text), d.range.start);
            DiagnosticItem {
                line,
                column,
                severity: level(d),
                code: code_text(d),
                source: d.source.clone(),
                message: d.message.trim().to_owned(),
            }
        })
        .collect();
    items.sort_by_key(|d| (d.line, d.column));
    let errors = items.iter().filter(|d| d.severity == Level::Error).count();
    let warnings = items.iter().filter(|d| d.severity == Level::Warning).count();
    if items.len() > MAX_LISTED {
        note = Some(format!("{} more not shown.", items.len() - MAX_LISTED));
        items.truncate(MAX_LISTED);
    }
    Ok(DiagnosticsOutput {
        file: Some(shown(cx, &path)),
        diagnostics: items,
        files: Vec::new(),
        errors,
        warnings,
        servers: vec![server.spec.name.clone()],
        note,
    })
}

/// Per-file counts from the running servers, for files below `under`.
fn summary(cx: &ToolContext, servers: &LanguageServers, under: Option<PathBuf>) -> DiagnosticsOutput {
    let under = under.map(|u| std::fs::canonicalize(&u).unwrap_or(u));
    let running = servers.running();
    let mut files: Vec<FileSummary> = Vec::new();
    for server in &running {
        for (path, published) in server.diagnostics.all() {
            if under.as_ref().is_some_and(|u| !path.starts_with(u)) || cx.is_hidden(&path) {
                continue;
            }
            let errors = published.items.iter().filter(|d| level(d) == Level::Error).count();
            let warnings = published.items.iter().filter(|d| level(d) == Level::Warning).count();
            if errors + warnings > 0 {
                files.push(FileSummary { path: shown(cx, &path), errors, warnings });
            }
        }
    }
    files.sort_by(|a, b| b.errors.cmp(&a.errors).then(b.warnings.cmp(&a.warnings)).then(a.path.cmp(&b.path)));
    let mut names: Vec<String> = running.iter().map(|s| s.spec.name.clone()).collect();
    names.sort();
    names.dedup();
    DiagnosticsOutput {
        file: None,
        errors: files.iter().map(|f| f.errors).sum(),
        warnings: files.iter().map(|f| f.warnings).sum(),
        diagnostics: Vec::new(),
        files,
        servers: names,
        note: None,
    }
}
