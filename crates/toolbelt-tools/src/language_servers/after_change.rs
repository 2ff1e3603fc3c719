//! Diagnostics after an edit: when a language server is running for a file that Edit,
//! MultiEdit, Write or ApplyPatch changed, the change is sent to it and the errors it
//! introduced (waiting a bounded time for the server's diagnostics) go into the tool's
//! result. No server is started for this: an edit never waits for one to load a project.

use std::path::{Path, PathBuf};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;
use toolbelt_core::ToolContext;

use super::LanguageServers;
use super::diagnostics::{Level, code_text, introduced, level};
use super::position::from_lsp;

/// Most errors shown after one change.
const MAX_SHOWN: usize = 20;

/// An error a change introduced.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq, Eq)]
pub struct Introduced {
    /// The file, relative to the working directory when below it.
    pub path: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// Always `error`.
    pub severity: Level,
    /// The diagnostic's code (`TS2322`, `reportAttributeAccessIssue`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// What reported it (`typescript`, `basedpyright`, `clang`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The message.
    pub message: String,
}

/// Tells the running servers about `changed` files (and `deleted` ones), and returns the
/// errors the change introduced in them. Empty, at once, when no server runs for them.
pub async fn after_change(cx: &ToolContext, changed: &[PathBuf], deleted: &[PathBuf]) -> Vec<Introduced> {
    let Some(servers) = cx.service::<LanguageServers>() else { return Vec::new() };
    for path in deleted {
        let real = real(path);
        for server in servers.running_for(&real) {
            server.close(&real).await;
        }
    }
    let wait = servers.settings().diagnostics_wait;
    let running: Vec<(&PathBuf, PathBuf, Vec<_>)> = changed
        .iter()
        .map(|path| {
            let real = real(path);
            let running = servers.running_for(&real);
            (path, real, running)
        })
        .filter(|(_, _, running)| !running.is_empty())
        .collect();
    if running.is_empty() {
        return Vec::new();
    }
    let roots = crate::fs::roots::OpenRoots::open_for_reading(cx).ok();
    let checks = running.into_iter().map(|(path, real, running)| {
        let roots = roots.as_ref();
        async move {
            let mut found = Vec::new();
            // Read back once, as the file tools read (a command may have swapped it since).
            let text = roots.filter(|_| !cx.is_hidden(&real)).and_then(|r| super::read_text(r, &real));
            let Some(text) = text else { return found };
            for server in running {
                let was_open = server.is_open(&real).await;
                let before = server.diagnostics.get(&real).map(|p| p.items).unwrap_or_default();
                let generation = server.diagnostics.generation();
                let Some(version) = server.sync(&real, &text, stamp(&real)).await else { continue };
                let Some(after) = server.diagnostics.wait_newer(&real, generation, Some(version), wait).await else {
                    tracing::debug!(server = %server.spec.name, "no diagnostics in time after a change");
                    continue;
                };
                let new = if was_open {
                    introduced(&before, &after.items)
                } else {
                    after.items.iter().filter(|d| super::diagnostics::is_error(d)).collect()
                };
                found.extend(new.into_iter().map(|d| {
                    let (line, column) = from_lsp(Some(&text), d.range.start);
                    Introduced {
                        path: shown(cx, path),
                        line,
                        column,
                        severity: level(d),
                        code: code_text(d),
                        source: d.source.clone(),
                        message: d.message.trim().to_owned(),
                    }
                }));
            }
            found
        }
    });
    // The change is made: however the servers behave, its result is not held up past the
    // wait (and a little for the sync), nor past a cancellation.
    let bound = wait + Duration::from_secs(2);
    let joined = tokio::select! {
        done = tokio::time::timeout(bound, futures_util::future::join_all(checks)) => done.ok(),
        () = cx.cancellation().cancelled() => None,
    };
    let Some(joined) = joined else { return Vec::new() };
    let mut all: Vec<Introduced> = joined.into_iter().flatten().collect();
    all.sort_by(|a, b| (&a.path, a.line, a.column).cmp(&(&b.path, b.line, b.column)));
    all.dedup();
    all
}

/// The text block a change tool's result ends with, when the change introduced errors.
pub fn render(found: &[Introduced]) -> Option<String> {
    if found.is_empty() {
        return None;
    }
    let mut text = format!(
        "The language server reports {} new error{} after this change:",
        found.len(),
        if found.len() == 1 { "" } else { "s" }
    );
    for d in found.iter().take(MAX_SHOWN) {
        text.push_str(&format!("\n{}:{}:{}: {}", d.path, d.line, d.column, d.severity));
        if let Some(code) = &d.code {
            text.push_str(&format!("[{code}]"));
        }
        text.push_str(&format!(": {}", d.message.replace('\n', " ")));
        if let Some(source) = &d.source {
            text.push_str(&format!(" ({source})"));
        }
    }
    if found.len() > MAX_SHOWN {
        text.push_str(&format!("\n… and {} more (Diagnostics lists them all)", found.len() - MAX_SHOWN));
    }
    Some(text)
}

/// `content`, then the errors a change introduced as one more text block.
pub fn with_diagnostics(mut content: Vec<toolbelt_core::Content>, found: &[Introduced]) -> Vec<toolbelt_core::Content> {
    content.extend(render(found).map(toolbelt_core::Content::text));
    content
}

/// The file's real path (servers name files by it).
fn real(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Size and modification time: how the server's copy is later found out of date.
pub fn stamp(path: &Path) -> Option<(u64, std::time::SystemTime)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.len(), meta.modified().ok()?))
}

/// `path` as results show it: relative to the working directory when below it.
pub fn shown(cx: &ToolContext, path: &Path) -> String {
    let cwd = cx.cwd();
    match path.strip_prefix(&cwd) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
        _ => {
            let real_cwd = std::fs::canonicalize(&cwd).unwrap_or(cwd);
            match path.strip_prefix(&real_cwd) {
                Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
                _ => path.display().to_string(),
            }
        }
    }
}
